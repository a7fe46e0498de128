package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// Store retention deletes only what no rule needs: verify is as clean after
// a pass as before, and every rule checks as many items, but for the ended
// claims and the released lease the pass deleted.
func TestRun_CleanAfterStoreRetentionAsBefore(t *testing.T) {
	t.Parallel()
	for _, be := range storetest.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := be.Open(t)
			f := storetest.WritePruneFixture(t, s)
			run := func() *audit.Report {
				t.Helper()
				rep, err := audit.Run(ctx, s, f.Now, audit.WithMessages(audit.StoreMessages{Store: s}))
				require.NoError(t, err)
				require.Empty(t, rep.Violations)
				return rep
			}
			prev := run()
			for _, cutoff := range []time.Time{f.Cutoff, f.Now} {
				counts, err := s.PruneFinished(ctx, store.PruneFinishedParams{Before: cutoff})
				require.NoError(t, err)
				require.Equal(t, store.PruneFinishedCounts{Claims: 3, JobLeases: 1, JobMessages: 1}, counts)
				// The claim rules see the 3 ended claims no more, job-schema
				// the lease; every other rule checks what it did.
				fewer := map[string]int{audit.RuleClaimSchema: 3, audit.RuleNoLiveClaimOnFinished: 3, audit.RuleJobSchema: 1}
				after := run()
				for rule, n := range prev.Checked {
					require.Equal(t, n-fewer[rule], after.Checked[rule], rule)
				}
				prev = after
			}
		})
	}
}
