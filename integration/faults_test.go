package integration

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workflows"
)

// Ten lifecycles on two workers whose PostgreSQL store and Temporal
// frontend are each reached through a fault-injecting proxy (latency,
// every connection reset, partitions that heal), injected while the
// lifecycles run; on SQLite, which no connection reaches, the faults fall
// between the workers and Temporal alone: every lifecycle reaches DONE with one bundle and one run
// record, the history of every claim operation and fenced write the
// workers made is linearizable against the claim model, and that of every
// bundle delivered against the outcome model.
func TestFaults_LifecyclesOnAFaultyStoreKeepTheClaimProtocol(t *testing.T) {
	t.Parallel()
	tally := newScenarioTally(t, "lifecycle")
	for _, backend := range []string{"sqlite", "postgres"} {
		for seed := range uint64(soakSeeds(t)) {
			t.Run(fmt.Sprintf("%s/seed-%d", backend, seed+1), func(t *testing.T) {
				tally.add(faultyLifecycles(t, backend, seed+1))
			})
		}
	}
}

// scenarioTally sums what a scenario's seeds checked, and logs it when the
// test ends (make test-soak reports those lines).
type scenarioTally struct {
	mu                         sync.Mutex
	histories, ops, deliveries int
	faults                     map[string]int
}

func newScenarioTally(t *testing.T, scenario string) *scenarioTally {
	s := &scenarioTally{faults: map[string]int{}}
	t.Cleanup(func() {
		t.Logf("%d %s histories checked, %d claim operations and %d deliveries; faults injected %v",
			s.histories, scenario, s.ops, s.deliveries, s.faults)
	})
	return s
}

// add counts one seed's history: its claim operations, its deliveries and
// the faults injected, by kind.
func (s *scenarioTally) add(ops, deliveries int, faults map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.histories, s.ops, s.deliveries = s.histories+1, s.ops+ops, s.deliveries+deliveries
	for k, v := range faults {
		s.faults[k] += v
	}
}

// faultyLifecycles is one seed of the scenario: it returns the claim
// operations and deliveries it checked, and the faults it injected.
func faultyLifecycles(t *testing.T, backend string, seed uint64) (int, int, map[string]int) {
	w := startFaultyLifecycles(t, backend, seed, nil)
	b := w.b
	for _, id := range w.ids {
		st := b.waitStep(t, id, workflows.StepDone)
		require.Equal(t, domain.GatePass, st.GateResult, "%s: %s", id, st.GateReason)
		wos, bundles, records := b.counts(t, id)
		require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records}, "%s: one workorder, one bundle, one run record", id)
	}
	n := storetest.CheckClaimHistory(t, w.h, t.Name())
	delivered := storetest.CheckOutcomeHistory(t, w.h, t.Name())
	outcomes := storetest.HistoryOutcomes(w.h)
	injected := map[string]int{} // on the store's connections, then Temporal's
	if w.proxy != nil {
		injected = w.proxy.Counts()
	}
	t.Logf("%d claim operations and %d deliveries checked %v; faults injected on the store %v, on Temporal %v", n,
		delivered, outcomes, injected, w.frontend.Counts())
	require.Positive(t, outcomes["fenced ok"])
	require.GreaterOrEqual(t, delivered, len(w.ids), "every lifecycle's bundle was delivered")
	for k, v := range w.frontend.Counts() {
		injected["temporal "+k] += v
	}
	return n, delivered, injected
}

// The lifecycle scenario sees what it is meant to: with the claim
// acquisition's expiry guard removed from the store, the two workers'
// history is not linearizable (each takes the other's live claims: the
// lifecycle poller's leadership, a workorder retried while its first
// attempt holds it).
func TestMutation_LifecyclesCatchABrokenGuard(t *testing.T) {
	t.Parallel()
	w := startFaultyLifecycles(t, "postgres", 1, func(ctx context.Context, s *sqlstore.Store) error {
		return storetest.MutateFunction(ctx, s, "azolla_acquire_claim", "lease_expires_at <= at", "true")
	})
	requireCaught(t, w.h)
}

// requireCaught requires h, the history of a scenario run with a guard
// removed, to be found illegal.
func requireCaught(t *testing.T, h *storetest.History) {
	t.Helper()
	ok, path := storetest.ClaimHistoryLinearizable(t, h, t.Name())
	require.False(t, ok, "the history of %d operations was found legal with the guard removed", h.Len())
	t.Logf("caught: %d operations; visualization %s", h.Len(), path)
}

// faultyWorld is a run of the scenario: its lifecycles, the history the
// workers' store recorded, and the proxies in front of the store and
// Temporal.
type faultyWorld struct {
	b               *bundle
	h               *storetest.History
	proxy, frontend *storetest.FaultProxy
	ids             []string
}

// startFaultyLifecycles starts two workers on a store of backend and a
// Temporal frontend, each reached through a fault proxy (a PostgreSQL
// store, mutated first by mutate when set; a SQLite store is reached
// straight), approves ten lifecycles, and injects faults drawn from seed
// until they have had a few. The test's own reads then go straight to the
// store.
func startFaultyLifecycles(t *testing.T, backend string, seed uint64, mutate func(context.Context, *sqlstore.Store) error) *faultyWorld {
	// Runs of two seconds, so the faults fall on lifecycles in flight.
	b := setup(t, setupOptions{command: "sleep 2; printf ok", leaseTTL: 3 * time.Second, noWorker: true})
	ctx := context.Background()
	var proxy *storetest.FaultProxy
	var faulty, direct store.Store = b.store, b.store
	if backend == "postgres" {
		pg, pgDirect := storetest.NewPostgresThrough(t, func(upstream string) string {
			proxy = storetest.StartFaultProxy(t, upstream)
			return proxy.Addr()
		})
		if mutate != nil {
			require.NoError(t, mutate(ctx, pgDirect))
		}
		faulty, direct = pg, pgDirect
	}
	h := storetest.NewHistory()
	st := h.FullStore(faulty)
	b.store, b.starter.Store = st, st
	// The workers reach Temporal through a proxy of their own; the test's
	// client (approvals, waits) goes straight.
	frontend := storetest.StartFaultProxy(t, server.FrontendAddress())
	wc, err := client.Dial(client.Options{HostPort: frontend.Addr(), Namespace: "default", Logger: quietSDKLogger{}})
	require.NoError(t, err)
	t.Cleanup(wc.Close)
	b.client = wc
	b.startWorker(t, "first")
	b.startWorker(t, "second")

	ids := b.approveAll(t, "faulty", 10)
	fctx, stop := context.WithCancel(ctx)
	var faulted sync.WaitGroup
	frontend.Pace = h.Answered
	faulted.Go(func() { frontend.Schedule(fctx, seed*11, 150*time.Millisecond) })
	// Faults go on until the lifecycles have had some: at least a few
	// resets and a partition of the store's connections (or, on SQLite,
	// of Temporal's), whatever the machine's speed.
	counted := frontend
	if proxy != nil {
		proxy.Pace = h.Answered
		faulted.Go(func() { proxy.Schedule(fctx, seed*7, 100*time.Millisecond) })
		counted = proxy
	}
	require.Eventually(t, func() bool {
		c := counted.Counts()
		return c[storetest.FaultReset] >= 3 && c[storetest.FaultPartition] >= 1
	}, 2*time.Minute, 50*time.Millisecond)
	stop()
	faulted.Wait()
	// The test's own reads go straight to the store: a connection the
	// proxy broke fails its next query, whoever holds it.
	b.store, b.starter.Store = direct, direct
	return &faultyWorld{b: b, h: h, proxy: proxy, frontend: frontend, ids: ids}
}

// soakSeeds is how many seeds a lifecycle scenario runs: one, or under
// make test-soak a tenth as many as the store's histories
// (AZOLLA_SOAK_SEEDS), each a few seconds of lifecycles.
func soakSeeds(t *testing.T) int {
	v := os.Getenv("AZOLLA_SOAK_SEEDS")
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "AZOLLA_SOAK_SEEDS=%q: how many seeds", v)
	return max(1, n/10)
}

// approveAll creates n objectives named from prefix, each changed by
// mutate, and approves them.
func (b *bundle) approveAll(t *testing.T, prefix string, n int, mutate ...func(*domain.Objective)) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uniqueID(fmt.Sprintf("%s%d", prefix, i))
		b.create(t, ids[i], mutate...)
		_, err := b.starter.Decide(context.Background(), ids[i], workflows.Approve, workflows.Decision{By: "tester"})
		require.NoError(t, err)
	}
	return ids
}
