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
	forSeeds(t, "lifecycle", bothBackends, faultyLifecycles)
}

// bothBackends are the store backends a scenario runs on.
var bothBackends = []string{"sqlite", "postgres"}

// forSeeds runs scenario on each backend for each seed (soakSeeds), one
// subtest each, and tallies what the seeds checked: run returns the claim
// operations and outcome writes it checked and the faults it injected.
func forSeeds(t *testing.T, scenario string, backends []string,
	run func(t *testing.T, backend string, seed uint64) (int, int, map[string]int)) {
	tally := newScenarioTally(t, scenario)
	for _, backend := range backends {
		for seed := range uint64(soakSeeds(t)) {
			t.Run(fmt.Sprintf("%s/seed-%d", backend, seed+1), func(t *testing.T) {
				tally.add(run(t, backend, seed+1))
			})
		}
	}
}

// scenarioTally sums what a scenario's seeds checked, and logs it when the
// test ends (make test-soak reports those lines).
type scenarioTally struct {
	mu                     sync.Mutex
	histories, ops, writes int
	faults                 map[string]int
}

func newScenarioTally(t *testing.T, scenario string) *scenarioTally {
	s := &scenarioTally{faults: map[string]int{}}
	t.Cleanup(func() {
		t.Logf("%d %s histories checked, %d claim operations and %d outcome writes; faults injected %v",
			s.histories, scenario, s.ops, s.writes, s.faults)
	})
	return s
}

// add counts one seed's history: its claim operations, its outcome writes
// and the faults injected, by kind.
func (s *scenarioTally) add(ops, writes int, faults map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.histories, s.ops, s.writes = s.histories+1, s.ops+ops, s.writes+writes
	for k, v := range faults {
		s.faults[k] += v
	}
}

// faultyLifecycles is one seed of the scenario: it returns the claim
// operations and outcome writes it checked, and the faults it injected.
func faultyLifecycles(t *testing.T, backend string, seed uint64) (int, int, map[string]int) {
	w := startFaultyLifecycles(t, backend, seed, nil)
	w.requireDone(t)
	return w.check(t)
}

// requireDone waits for every lifecycle of the world to reach DONE with a
// PASS, one workorder, one bundle and one run record.
func (w *faultyWorld) requireDone(t *testing.T) {
	t.Helper()
	for _, id := range w.ids {
		st := w.b.waitStep(t, id, workflows.StepDone)
		require.Equal(t, domain.GatePass, st.GateResult, "%s: %s", id, st.GateReason)
		wos, bundles, records := w.b.counts(t, id)
		require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records}, "%s: one workorder, one bundle, one run record", id)
	}
}

// check checks the world's histories, claims and outcomes, once its
// lifecycles are over, and returns the claim operations and outcome
// writes it checked and the faults injected, by link and kind.
func (w *faultyWorld) check(t *testing.T) (int, int, map[string]int) {
	t.Helper()
	n := storetest.CheckClaimHistory(t, w.h, t.Name())
	written := storetest.CheckOutcomeHistory(t, w.h, t.Name())
	outcomes, byRule := storetest.HistoryOutcomes(w.h), storetest.OutcomeCounts(w.h)
	injected := map[string]int{}
	for _, l := range w.links {
		for k, v := range l.proxy.Counts() {
			injected[l.name+" "+k] += v
		}
	}
	t.Logf("%d claim operations and %d outcome writes checked %v %v; faults injected %v", n, written, outcomes,
		byRule, injected)
	require.Positive(t, outcomes["fenced ok"])
	require.GreaterOrEqual(t, byRule[storetest.RuleBundle], len(w.ids), "every lifecycle's bundle was delivered")
	return n, written, injected
}

// The lifecycle scenario sees what it is meant to: with the claim
// acquisition's expiry guard removed from the store, the two workers'
// history is not linearizable (each takes the other's live claims: the
// lifecycle poller's leadership, a workorder retried while its first
// attempt holds it).
func TestMutation_LifecyclesCatchABrokenGuard(t *testing.T) {
	t.Parallel()
	w := startFaultyLifecycles(t, "postgres", 1, storetest.RemoveExpiryGuard)
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

// faultyWorld is a run of a scenario: its lifecycles, the history the
// workers' store recorded, and the links faults are injected on.
type faultyWorld struct {
	b *bundle
	h *storetest.History
	// direct is the store as the test reads it, past any proxy.
	direct store.Store
	// links are the proxies faults are injected on, the first the one
	// that must have had its share before they stop.
	links []faultyLink
	ids   []string
	// env points an azolla process at the store and Temporal through
	// their proxies.
	env []string
	// pace counts the work done so far, which the faults keep pace with
	// (FaultProxy.Pace): the history's answered operations, unless the
	// workers record elsewhere.
	pace func() int
}

// faultyLink is one link faults are injected on: the proxy, named for the
// report, with the mean time between its faults.
type faultyLink struct {
	name  string
	proxy *storetest.FaultProxy
	every time.Duration
}

// startFaultyLifecycles starts two workers behind faults (goFaulty),
// approves ten lifecycles, and injects faults drawn from seed until they
// have had a few.
func startFaultyLifecycles(t *testing.T, backend string, seed uint64, mutate func(context.Context, *sqlstore.Store) error) *faultyWorld {
	// Runs of two seconds, so the faults fall on lifecycles in flight.
	b := setup(t, setupOptions{command: "sleep 2; printf ok", leaseTTL: 3 * time.Second, noWorker: true})
	w := goFaulty(t, b, backend, mutate)
	b.startWorker(t, "first")
	b.startWorker(t, "second")
	w.ids = b.approveAll(t, "faulty", 10)
	w.inject(t, seed)
	return w
}

// goFaulty moves b (set up with no worker) onto a store of backend and a
// Temporal frontend, each reached through a fault proxy (a PostgreSQL
// store, mutated first by mutate when set; a SQLite store is reached
// straight), and records the store's history: the workers the caller
// starts in this process work there, and so do those it starts as
// processes with w.env.
func goFaulty(t *testing.T, b *bundle, backend string, mutate func(context.Context, *sqlstore.Store) error) *faultyWorld {
	ctx := context.Background()
	w := &faultyWorld{b: b, h: storetest.NewHistory(), direct: b.store}
	w.pace = w.h.Answered
	faulty := b.store
	if backend == "postgres" {
		var proxy *storetest.FaultProxy
		pg, pgDirect, dsn := storetest.NewPostgresThrough(t, func(upstream string) string {
			proxy = storetest.StartFaultProxy(t, upstream)
			return proxy.Addr()
		})
		w.env = append(w.env, "AZOLLA_STORE_DRIVER=postgres", "AZOLLA_STORE_DSN="+dsn)
		if mutate != nil {
			require.NoError(t, mutate(ctx, pgDirect))
		}
		faulty, w.direct = pg, pgDirect
		w.links = append(w.links, faultyLink{"store", proxy, 100 * time.Millisecond})
	}
	st := w.h.FullStore(faulty)
	b.store, b.starter.Store = st, st
	// The workers reach Temporal through a proxy of their own; the test's
	// client (approvals, waits) goes straight.
	frontend := storetest.StartFaultProxy(t, server.FrontendAddress())
	wc, err := client.Dial(client.Options{HostPort: frontend.Addr(), Namespace: "default", Logger: quietSDKLogger{}})
	require.NoError(t, err)
	t.Cleanup(wc.Close)
	b.client = wc
	w.env = append(w.env, "AZOLLA_TEMPORAL_ADDRESS="+frontend.Addr())
	w.links = append(w.links, faultyLink{"temporal", frontend, 150 * time.Millisecond})
	return w
}

// inject injects faults drawn from seed on every link, each at its own
// pace, runs during (if any) meanwhile, and goes on until the first link
// has had a few faults (at least three resets and a partition, whatever
// the machine's speed). The test's own reads then go straight to the
// store: a connection the proxy broke fails its next query, whoever holds
// it.
func (w *faultyWorld) inject(t *testing.T, seed uint64, during ...func()) {
	t.Helper()
	fctx, stop := context.WithCancel(context.Background())
	var faulted sync.WaitGroup
	for i, l := range w.links {
		l.proxy.Pace = w.pace
		faulted.Go(func() { l.proxy.Schedule(fctx, seed*uint64(7+4*i), l.every) })
	}
	for _, f := range during {
		f()
	}
	first := w.links[0].proxy
	require.Eventually(t, func() bool {
		c := first.Counts()
		return c[storetest.FaultReset] >= 3 && c[storetest.FaultPartition] >= 1
	}, 2*time.Minute, 50*time.Millisecond)
	stop()
	faulted.Wait()
	w.b.store, w.b.starter.Store = w.direct, w.direct
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
