package audit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// bundlePatch is the content execute writes into every bundle.
const bundlePatch = "diff --git a/x b/x\n"

// bestOf runs objective id to a PASS with two candidates: attempt 1
// carries patch1 and attempt 2 another patch; chosen (0: none) is chosen
// before the bundle is written.
func bestOf(t *testing.T, s store.Querier, id, patch1 string, chosen int) *domain.WorkOrder {
	t.Helper()
	ctx := context.Background()
	wo := schedule(t, s, id)
	for a, patch := range []string{patch1, "diff --git a/y b/y\n"} {
		c := storetest.Candidate(wo.WorkOrderID, a+1, 2-a)
		c.Patch = patch
		_, err := s.PutCandidate(ctx, c)
		require.NoError(t, err)
	}
	if chosen > 0 {
		_, err := s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: wo.WorkOrderID, Attempt: chosen,
			Why: "passed the most gate commands", Now: T0.Add(2 * time.Minute)})
		require.NoError(t, err)
	}
	execute(t, s, wo)
	gate(t, s, wo, domain.GatePass)
	return wo
}

// candidatesEveryState leaves a settled best-of-N run, one whose patch
// came back with other line ends, and one still running its candidates.
func candidatesEveryState(t *testing.T, s store.Querier) {
	t.Helper()
	bestOf(t, s, "obj-bo-1", bundlePatch, 1)
	bestOf(t, s, "obj-bo-crlf", "diff --git a/x b/x  \r\n\n", 1)
	wo := schedule(t, s, "obj-bo-running")
	c := storetest.Candidate(wo.WorkOrderID, 1, 0)
	c.Status, c.RunnerStatus, c.Patch, c.FinishedAt = domain.CandidateRunning, "", "", nil
	_, err := s.PutCandidate(context.Background(), c)
	require.NoError(t, err)
}

func TestRun_CandidatesInEveryStateAreClean(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		candidatesEveryState(t, s)
		rep := audited(t, s)
		require.Empty(t, rep.Violations)
		require.Equal(t, 3, rep.Checked[audit.RuleCandidateChosenOnce], "one item per workorder with candidates")
		require.Equal(t, 2, rep.Checked[audit.RuleBundleIsChosenCandidate], "one item per bundle of a chosen candidate")
		require.Equal(t, 5, rep.Checked[audit.RuleCandidateOfWorkOrder], "one item per candidate row")
	})
}

// Each case starts from obj-1 run to a PASS by candidate 1 of 2 and breaks
// one guarantee, through the store where it allows it and with raw SQL
// where it would refuse.
func TestRun_ReportsEachBrokenCandidateGuarantee(t *testing.T) {
	t.Parallel()
	type want struct{ rule, resource string }
	tests := []struct {
		name    string
		corrupt func(t *testing.T, s *sqlstore.Store)
		want    []want
	}{
		// candidate-chosen-once
		{"a bundle and no chosen candidate", func(t *testing.T, s *sqlstore.Store) {
			bestOf(t, s, "obj-2", bundlePatch, 0)
		}, []want{{audit.RuleCandidateChosenOnce, "workorder wo-obj-2"}}},
		{"two chosen candidates", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `DROP INDEX candidates_one_chosen`)
			raw(t, s, `UPDATE candidates SET chosen = TRUE WHERE work_order_id = 'wo-obj-1'`)
		}, []want{{audit.RuleCandidateChosenOnce, "workorder wo-obj-1"}}},

		// bundle-is-chosen-candidate
		{"the bundle is another candidate's patch", func(t *testing.T, s *sqlstore.Store) {
			bestOf(t, s, "obj-2", bundlePatch, 2)
		}, []want{{audit.RuleBundleIsChosenCandidate, "output_bundle wo-obj-2"}}},
		{"the patch differs inside a line", func(t *testing.T, s *sqlstore.Store) {
			bestOf(t, s, "obj-2", "diff --git a/x  b/x\n", 1)
		}, []want{{audit.RuleBundleIsChosenCandidate, "output_bundle wo-obj-2"}}},
		{"a kept hash that is not the bundle's", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE candidates SET patch = NULL, patch_sha256 = '`+strings.Repeat("0", 64)+`'
				WHERE work_order_id = 'wo-obj-1' AND attempt = 1`)
		}, []want{{audit.RuleBundleIsChosenCandidate, "output_bundle wo-obj-1"}}},

		// candidate-of-existing-workorder
		{"a candidate of a workorder that does not exist", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `INSERT INTO candidates (work_order_id, attempt, generator, status, gate_results,
				commands_passed, chosen, created_at, updated_at)
				SELECT 'wo-ghost', attempt, generator, status, gate_results, commands_passed, chosen, created_at,
				updated_at FROM candidates WHERE work_order_id = 'wo-obj-1' AND attempt = 2`)
		}, []want{{audit.RuleCandidateOfWorkOrder, "workorder wo-ghost"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
				bestOf(t, s, "obj-1", bundlePatch, 1)
				rep := audited(t, s)
				require.Empty(t, rep.Violations, "the starting point is consistent")
				require.Positive(t, rep.Checked[audit.RuleBundleIsChosenCandidate])
				tt.corrupt(t, s)
				rep = audited(t, s)
				for _, w := range tt.want {
					requireReported(t, rep, w.rule, w.resource)
				}
				require.Len(t, rep.Violations, len(tt.want), "%+v", rep.Violations)
			})
		})
	}
}
