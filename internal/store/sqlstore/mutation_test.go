package sqlstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// The claim tests are only worth their guarantees if they fail when a guard
// is gone. Each case breaks one guard in a claim statement of a fresh store
// and requires the conformance check that stands for it to notice.
func TestMutation_ClaimChecksCatchABrokenGuard(t *testing.T) {
	t.Parallel()
	const versionMatch = "AND claim_version = $6" // the renewal's fence, alike on both backends
	cases := []struct {
		name string
		stmt sqlstore.StmtID
		// old is the guard's text by dialect, new what replaces it; $n form.
		old map[string]string
		new string
		// function, when set, is the mutation on PostgreSQL, whose guard
		// is in a function rather than in the statement.
		function *functionMutation
		caught   func(t *testing.T, s *sqlstore.Store)
	}{
		{
			// Without the expiry guard an acquisition takes over a live lease.
			// PostgreSQL's is in the acquisition function, where both the
			// branch's choice and the UPDATE's own re-check lose it.
			name:     "ExpiryGuardRemoved_ContentionFindsDoubleGrants",
			stmt:     sqlstore.StmtAcquire,
			old:      map[string]string{"sqlite": "WHERE claims.lease_expires_at <= excluded.heartbeat_at"},
			new:      "",
			function: &functionMutation{name: "azolla_acquire_claim", old: "lease_expires_at <= at", new: "true"},
			caught: func(t *testing.T, s *sqlstore.Store) {
				r := storetest.RunContention(t, s, storetest.ContentionParams{Workers: 32, Resources: 8, Iterations: 40})
				require.Positive(t, r.DoubleGrants, "the contention check missed acquisitions of live leases: %+v", r)
			},
		},
		{
			// Without the version match a holder's older hold renews the newer.
			name: "RenewIgnoresVersion_OlderVersionCheckFails",
			stmt: sqlstore.StmtRenew,
			old:  map[string]string{"sqlite": versionMatch, "postgres": versionMatch},
			new:  "AND CAST($6 AS BIGINT) IS NOT NULL",
			caught: func(t *testing.T, s *sqlstore.Store) {
				require.Error(t, storetest.OlderVersionRefused(context.Background(), s), "the version fence check passed with the version ignored")
			},
		},
	}
	for _, be := range storetest.Backends() {
		for _, tc := range cases {
			t.Run(be.Name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s := be.Open(t)
				if f := tc.function; f != nil && be.Name == "postgres" {
					require.NoError(t, storetest.MutateFunction(context.Background(), s, f.name, f.old, f.new))
				} else {
					require.NoError(t, sqlstore.MutateStatement(s, tc.stmt, tc.old[be.Name], tc.new))
				}
				tc.caught(t, s)
			})
		}
	}
}

// functionMutation replaces every old in the body of a PostgreSQL function.
type functionMutation struct{ name, old, new string }

// The review cursor's compare-and-swap and the advance's other guards are
// all in its one UPDATE; each case removes one, keeping its placeholder
// bound, and requires FeedbackTakenOnce to notice.
func TestMutation_FeedbackChecksCatchABrokenGuard(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, old, new string }{
		{"CursorNotCompared_SecondTakerWins", "AND review_cursor = $6", "AND CAST($6 AS TEXT) IS NOT NULL"},
		{"ChecksNotCompared_SameHeadTakenTwice", "AND ($2 = '' OR checks_sha IS NULL OR checks_sha <> $2)", "AND CAST($2 AS TEXT) IS NOT NULL"},
		{"StateIgnored_RoundOnAClosedPullRequest", "AND ($3 = 0 OR state = $7)", "AND CAST($7 AS TEXT) IS NOT NULL"},
	}
	for _, be := range storetest.Backends() {
		for _, tc := range cases {
			t.Run(be.Name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s := be.Open(t)
				require.NoError(t, sqlstore.MutateStatement(s, sqlstore.StmtAdvanceReviewCursor, tc.old, tc.new))
				require.Error(t, storetest.FeedbackTakenOnce(context.Background(), s), "the feedback check passed with the guard gone")
			})
		}
	}
}
