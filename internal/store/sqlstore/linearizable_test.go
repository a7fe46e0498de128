package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// historySeeds are the seeds checked on each backend: 1 and 2 in make
// test, 1 to AZOLLA_SOAK_SEEDS in make test-soak.
func historySeeds(t *testing.T) []uint64 {
	n := 2
	if v := os.Getenv("AZOLLA_SOAK_SEEDS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err, "AZOLLA_SOAK_SEEDS=%q: how many seeds", v)
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	return seeds
}

// tally adds up what the histories of a run checked.
type tally struct {
	mu                  sync.Mutex
	histories, ops      int
	faults, unknownByOp map[string]int
}

func (ta *tally) add(ops int, faults map[string]int, outcomes map[string]int) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	ta.histories++
	ta.ops += ops
	for k, v := range faults {
		ta.faults[k] += v
	}
	for k, v := range outcomes {
		if strings.HasSuffix(k, " unknown") {
			ta.unknownByOp[k] += v
		}
	}
}

// historyParams is the workload of one seed: six workers with clocks up
// to 5 ms apart on two workorders, leases of 30 ms of the logical clock,
// about one call in twenty given up within 2 ms.
func historyParams(seed uint64, faults func(context.Context, *storetest.History)) storetest.HistoryParams {
	return storetest.HistoryParams{Seed: seed, Workers: 6, Resources: 2, Ops: 60, TTL: 30 * time.Millisecond,
		Skew: 5 * time.Millisecond, OpTimeout: 2 * time.Second, CancelEvery: 20, Faults: faults}
}

// historyStore opens a fresh store of backend for a claim history, with
// mutate applied before anything runs on it. On PostgreSQL the store is
// reached through a FaultProxy, whose schedule (drawn from seed) the
// returned faults runs; on SQLite the faults are the callers' own
// cancellations alone.
func historyStore(t *testing.T, backend string, seed uint64, mutate func(*sqlstore.Store)) (*sqlstore.Store, func(context.Context, *storetest.History), *storetest.FaultProxy) {
	t.Helper()
	if backend == "sqlite" {
		s := storetest.NewSQLite(t)
		if mutate != nil {
			mutate(s)
		}
		return s, nil, nil
	}
	var proxy *storetest.FaultProxy
	s, _, _ := storetest.NewPostgresThrough(t, func(upstream string) string {
		proxy = storetest.StartFaultProxy(t, upstream)
		return proxy.Addr()
	})
	if mutate != nil {
		mutate(s)
	}
	return s, func(ctx context.Context, h *storetest.History) {
		proxy.Pace = h.Answered
		proxy.Schedule(ctx, seed, 15*time.Millisecond)
	}, proxy
}

// Histories of claim operations and fenced writes, under injected faults,
// skewed clocks and callers that give up, are linearizable against the
// claim model (storetest.ClaimModel): one holder per lease at a time, no
// fenced write after its lease was taken over, versions that only grow.
func TestLinearizable_ClaimHistoriesUnderFaults(t *testing.T) {
	t.Parallel()
	total := &tally{faults: map[string]int{}, unknownByOp: map[string]int{}}
	t.Cleanup(func() {
		t.Logf("%d histories checked, %d operations; faults injected %v; outcomes left unknown %v", total.histories,
			total.ops, total.faults, total.unknownByOp)
	})
	for _, be := range storetest.Backends() {
		for _, seed := range historySeeds(t) {
			t.Run(fmt.Sprintf("%s/seed-%d", be.Name, seed), func(t *testing.T) {
				t.Parallel()
				s, faults, proxy := historyStore(t, be.Name, seed, nil)
				h := storetest.RunClaimHistory(t, s, historyParams(seed, faults))
				n := storetest.CheckClaimHistory(t, h, t.Name())
				var injected map[string]int
				if proxy != nil {
					injected = proxy.Counts()
				}
				t.Logf("%d operations checked %v; faults injected %v", n, storetest.HistoryOutcomes(h), injected)
				total.add(n, injected, storetest.HistoryOutcomes(h))
				require.Positive(t, storetest.HistoryOutcomes(h)["fenced ok"], "the workload made no fenced write")
			})
		}
	}
}

// The checker sees what it is meant to: with a guard of the claim
// protocol removed, the same workload's history is not linearizable.
func TestMutation_ClaimHistoriesCatchABrokenGuard(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		backends []string
		mutate   func(t *testing.T, s *sqlstore.Store)
	}{
		{
			// An acquisition takes over a live lease.
			name: "ExpiryGuardRemoved", backends: []string{"sqlite", "postgres"},
			mutate: func(t *testing.T, s *sqlstore.Store) {
				if s.Dialect() == "postgres" {
					require.NoError(t, storetest.RemoveExpiryGuard(context.Background(), s))
					return
				}
				require.NoError(t, sqlstore.MutateStatement(s, sqlstore.StmtAcquire, "WHERE claims.lease_expires_at <= excluded.heartbeat_at", ""))
			},
		},
		{
			// A renewal by an older hold of the same owner succeeds.
			name: "RenewIgnoresVersion", backends: []string{"sqlite", "postgres"},
			mutate: func(t *testing.T, s *sqlstore.Store) {
				require.NoError(t, sqlstore.MutateStatement(s, sqlstore.StmtRenew, "AND claim_version = $6", "AND CAST($6 AS BIGINT) IS NOT NULL"))
			},
		},
		{
			// The fence reads the claim without locking it: a takeover
			// commits between a stale holder's check and its write.
			name: "FenceUnlocked", backends: []string{"postgres"},
			mutate: func(t *testing.T, s *sqlstore.Store) {
				require.NoError(t, sqlstore.MutateStatement(s, sqlstore.StmtFence, " FOR UPDATE", ""))
			},
		},
	}
	for _, tc := range cases {
		for _, backend := range tc.backends {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				// A race such as the unlocked fence's needs a takeover
				// while a stale writer is paused between its check and
				// its write: under load it showed within three seeds
				// (measured -count=4 with two other packages' tests
				// running), so twenty seeds leave it no real chance to
				// hide.
				caught := false
				for seed := uint64(1); seed <= 20 && !caught; seed++ {
					s, _, _ := historyStore(t, backend, seed, func(s *sqlstore.Store) { tc.mutate(t, s) })
					h := storetest.RunClaimHistory(t, s, historyParams(seed, nil))
					ok, path := storetest.ClaimHistoryLinearizable(t, h, t.Name())
					if !ok {
						caught = true
						t.Logf("seed %d: caught, %d operations; visualization %s", seed, h.Len(), path)
					}
				}
				require.True(t, caught, "no history was found illegal with the guard removed")
			})
		}
	}
}
