package sqlstore_test

import (
	"testing"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// A store acquires a claim row it saw lately by the takeover alone, so the
// conformance suite's repeated acquisitions mostly run that. Here its claim
// checks run with the memory off: the whole create-or-update-if-expired
// statement answers every acquisition.
func TestClaims_WholeStatementPassesTheClaimChecks(t *testing.T) {
	t.Parallel()
	for _, be := range storetest.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			storetest.ExerciseClaims(t, func(t testing.TB) store.Store {
				s := be.Open(t)
				sqlstore.WithoutClaimRows(s)
				return s
			})
		})
	}
}
