package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workers/bridge"
	"github.com/azolla/azolla/workflows"
)

const (
	running   = enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	completed = enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	failed    = enumspb.WORKFLOW_EXECUTION_STATUS_FAILED
	leaseTTL  = time.Minute
)

// pollerBundle is one poller test's world: a real store, a fake Temporal
// and a clock the test moves.
type pollerBundle struct {
	store    *sqlstore.Store
	temporal *fakeTemporal
	clock    *testClock
	starter  *starter.Starter
}

func setupPoller(t *testing.T) *pollerBundle {
	t.Helper()
	st := storetest.NewSQLite(t)
	f := newFakeTemporal()
	return &pollerBundle{store: st, temporal: f, clock: &testClock{t: time.Now().UTC()},
		starter: &starter.Starter{Client: f, Store: st, TaskQueue: "q", AttributesWait: -1}}
}

// poller returns a poller named owner whose leases run on the bundle's
// clock shifted by skew; it stops when the test ends.
func (b *pollerBundle) poller(t *testing.T, owner string, batch int, skew time.Duration) *bridge.Poller {
	now := func() time.Time { return b.clock.Now().Add(skew) }
	p := &bridge.Poller{Store: b.store, Claims: claim.NewBridge(b.store, claim.WithClock(now)), Client: b.temporal,
		Starter: b.starter, Interval: time.Hour, LeaseTTL: leaseTTL, OwnerID: owner,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), BatchSize: batch, Now: now}
	t.Cleanup(p.Stop)
	return p
}

// stored writes an objective straight into the store, as a script (or an
// azolla that could not reach Temporal) does: not handed over.
func (b *pollerBundle) stored(t *testing.T, id string, status domain.Status) {
	t.Helper()
	o := storetest.Objective(id)
	o.Status = status
	require.NoError(t, b.store.CreateObjective(context.Background(), o))
}

func (b *pollerBundle) event(t *testing.T, subject string) string {
	t.Helper()
	ev := storetest.Event("ev-"+subject, subject, 1, b.clock.Now())
	_, _, err := b.store.EmitEvent(context.Background(), ev)
	require.NoError(t, err)
	return ev.EventID
}

func pass(t *testing.T, p *bridge.Poller) bridge.Counts {
	t.Helper()
	c, err := p.RunOnce(context.Background())
	require.NoError(t, err)
	return c
}

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// The measure: with every objective created through azolla waiting
// for approval, a pass reads two empty pages and asks Temporal nothing.
func TestPoller_IdlePassAsksTemporalNothingWhateverNumberWaits(t *testing.T) {
	t.Parallel()
	b := setupPoller(t)
	ctx := context.Background()
	for i := range 500 {
		_, err := b.starter.Create(ctx, storetest.Objective(fmt.Sprintf("obj-%03d", i)))
		require.NoError(t, err)
	}
	describes, starts, queries := b.temporal.calls()
	require.Equal(t, []int{0, 500, 0}, []int{describes, starts, queries})

	p := b.poller(t, "a", 50, 0)
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2}, pass(t, p))
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2}, pass(t, p))
	describes, starts, queries = b.temporal.calls()
	require.Equal(t, []int{0, 500, 0}, []int{describes, starts, queries}, "no Temporal call from the passes")
}

// Objectives written straight into the store are looked at in Temporal
// once each: started if they need a lifecycle, marked otherwise; the next
// pass has nothing to look at.
func TestPoller_StoredObjectivesAreHandedOverOnce(t *testing.T) {
	t.Parallel()
	b := setupPoller(t)
	ctx := context.Background()
	b.stored(t, "new", domain.StatusNew) // never started: starts
	b.stored(t, "running", domain.StatusTodo)
	b.temporal.set("running", running)
	b.stored(t, "failed", domain.StatusInProgress) // a human's call
	b.temporal.set("failed", failed)
	b.stored(t, "done", domain.StatusDone) // ran to DONE: never restarted
	b.temporal.set("done", completed)
	b.stored(t, "done-by-hand", domain.StatusDone) // nothing to run
	b.stored(t, "rejected", domain.StatusNew)
	b.temporal.set("rejected", completed)
	require.NoError(t, b.store.CreatePauseState(ctx, &domain.PauseState{PauseStateID: "ps-rejected",
		ObjectiveID: "rejected", Reason: domain.PauseRejected, PrioritizedActions: []string{"nothing"}}))
	b.stored(t, "ended-early", domain.StatusTodo) // its lifecycle ended before it was stored
	b.temporal.set("ended-early", completed)

	p := b.poller(t, "a", 2, 0)
	// Seven objectives in pages of two: four pages, and one of events.
	require.Equal(t, bridge.Counts{Leader: true, Batches: 5, Started: 2, Marked: 5}, pass(t, p))
	for id, runs := range map[string]int{"new": 1, "running": 1, "failed": 1, "done": 1, "done-by-hand": 0,
		"rejected": 1, "ended-early": 2} {
		require.Equal(t, runs, b.temporal.runCount(id), "runs of %s", id)
	}
	describes, _, _ := b.temporal.calls()
	require.Equal(t, 7, describes)

	require.Equal(t, bridge.Counts{Leader: true, Batches: 2}, pass(t, p))
	describes, _, _ = b.temporal.calls()
	require.Equal(t, 7, describes, "each objective was looked at once")
}

// A failure on one objective is counted; the pass goes on with the others,
// and the next pass tries it again.
func TestPoller_AFailingObjectiveIsCountedAndThePassGoesOn(t *testing.T) {
	t.Parallel()
	b := setupPoller(t)
	for _, id := range []string{"a", "b", "c"} {
		b.stored(t, id, domain.StatusNew)
	}
	b.temporal.mu.Lock()
	b.temporal.fail[workflows.ObjectiveWorkflowID("b")] = errors.New("frontend unavailable")
	b.temporal.mu.Unlock()

	p := b.poller(t, "a", 1, 0)
	require.Equal(t, bridge.Counts{Leader: true, Batches: 5, Started: 2, Failed: 1}, pass(t, p))
	require.Equal(t, 0, b.temporal.runCount("b"))
	require.Equal(t, 1, b.temporal.runCount("c"), "the objective after the failure is handled")

	b.temporal.mu.Lock()
	delete(b.temporal.fail, workflows.ObjectiveWorkflowID("b"))
	b.temporal.mu.Unlock()
	require.Equal(t, bridge.Counts{Leader: true, Batches: 3, Started: 1}, pass(t, p))
	require.Equal(t, 1, b.temporal.runCount("b"))
}

// Events: one of an objective handed over is its lifecycle's own until it
// has sat unprocessed for a lease; then a lifecycle waiting for a human is
// woken for it (and a busy or stopped one left alone). An event about an
// objective never handed over (here, one the store lacks) gets its
// lifecycle at once.
func TestPoller_EventsWakeAWaitingLifecycleOnlyOnceStale(t *testing.T) {
	t.Parallel()
	b := setupPoller(t)
	ctx := context.Background()
	for _, id := range []string{"waiting", "busy", "stopped"} {
		_, err := b.starter.Create(ctx, storetest.Objective(id))
		require.NoError(t, err)
		b.event(t, id)
	}
	b.temporal.step("waiting", workflows.StepAwaitingApproval)
	b.temporal.step("busy", workflows.StepScheduling)
	b.temporal.closeRun("stopped", failed)
	ghost := b.event(t, "ghost")
	p := b.poller(t, "a", 0, 0)

	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Started: 1, Skipped: 3}, pass(t, p))
	describes, starts, queries := b.temporal.calls()
	require.Equal(t, []int{1, 4, 0}, []int{describes, starts, queries}, "only the ghost's lifecycle is looked at")
	require.Equal(t, 1, b.temporal.runCount("ghost"))
	c, err := b.store.GetClaim(ctx, domain.ResourceEvent, ghost)
	require.NoError(t, err)
	require.NotNil(t, c.ReleasedAt, "the event's claim is released after the hand-over")

	b.clock.Advance(leaseTTL + time.Second)
	// The ghost's lifecycle is busy (it has not processed its event yet).
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Woken: 1, Skipped: 3}, pass(t, p))
	for _, id := range []string{"waiting", "busy", "stopped", "ghost"} {
		require.Equal(t, 1, b.temporal.runCount(id), "runs of %s", id)
	}
	b.temporal.mu.Lock()
	defer b.temporal.mu.Unlock()
	require.Equal(t, 1, b.temporal.signals, "the wake")
}

// One poller per store leads; a standby touches nothing, takes over when
// the leader's lease lapses, and at once when the leader stops.
func TestPoller_OneLeaderAndAStandbyTakesOverWhenTheLeaseLapses(t *testing.T) {
	t.Parallel()
	b := setupPoller(t)
	a, s := b.poller(t, "poller-a", 0, 0), b.poller(t, "poller-s", 0, 0)
	require.True(t, pass(t, a).Leader)

	b.stored(t, "x", domain.StatusNew)
	require.Equal(t, bridge.Counts{}, pass(t, s), "a standby does nothing")
	describes, _, _ := b.temporal.calls()
	require.Zero(t, describes)

	b.clock.Advance(leaseTTL) // a has not renewed: its lease lapses
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Started: 1}, pass(t, s))
	require.Equal(t, bridge.Counts{}, pass(t, a), "the old leader finds its lease taken and stands by")
	require.Equal(t, bridge.Counts{}, pass(t, a))

	s.Stop()
	require.True(t, pass(t, a).Leader, "a stopped leader releases: the standby takes over without waiting")
	c, err := b.store.GetClaim(context.Background(), domain.ResourcePoller, domain.PollerLeadership)
	require.NoError(t, err)
	require.Equal(t, "poller-a", c.OwnerID)
	require.Equal(t, 1, b.temporal.runCount("x"))
}

// Never two lifecycles for one objective: a lifecycle that starts and
// closes between the poller's look (none) and its start makes the start a
// no-op, and a finished objective is then marked, not restarted.
func TestPoller_NoSecondLifecycleWhenOneEndsBetweenTheLookAndTheStart(t *testing.T) {
	t.Parallel()
	b := setupPoller(t)
	ctx := context.Background()
	b.stored(t, "x", domain.StatusTodo)
	var fired atomic.Bool
	b.temporal.afterDescribe = func(string) {
		// Someone else's start, and the lifecycle runs to its end; its DONE
		// reaches the store only after the poller has read it.
		if fired.CompareAndSwap(false, true) {
			b.temporal.set("x", completed)
		}
	}
	p := b.poller(t, "a", 0, 0)
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Skipped: 1}, pass(t, p))
	require.Equal(t, 1, b.temporal.runCount("x"))

	_, err := b.store.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "x", To: domain.StatusDone})
	require.NoError(t, err)
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Marked: 1}, pass(t, p))
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2}, pass(t, p))
	require.Equal(t, 1, b.temporal.runCount("x"))
}

// Never two lifecycles for one objective when passes overlap: a leader
// whose lease lapsed mid-pass goes on with the page it read while the new
// leader passes and a human resumes the same objectives.
func TestPoller_NoSecondLifecycleWhenATakeoverOvertakesAPass(t *testing.T) {
	t.Parallel()
	b := setupPoller(t)
	ctx := context.Background()
	const n = 20
	for i := range n {
		b.stored(t, fmt.Sprintf("obj-%02d", i), domain.StatusNew)
	}
	old, next := b.poller(t, "old", 0, 0), b.poller(t, "next", 0, 2*leaseTTL)
	var overtaken bridge.Counts
	var fired atomic.Bool
	errs := make(chan error, n)
	b.temporal.afterDescribe = func(string) {
		if !fired.CompareAndSwap(false, true) {
			return
		}
		// Inside the old leader's first look: a human resumes every
		// objective while the new leader passes.
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- b.starter.Start(ctx, storetest.Objective(fmt.Sprintf("obj-%02d", i)))
			}()
		}
		overtaken = pass(t, next)
		wg.Wait()
	}
	c := pass(t, old)
	for range n {
		require.NoError(t, <-errs)
	}
	require.True(t, overtaken.Leader, "the takeover passed during the old leader's pass")
	require.Equal(t, n, c.Marked+c.Started+c.Skipped, "the old leader went through its page: %+v", c)
	require.Zero(t, c.Failed+overtaken.Failed)
	for i := range n {
		require.Equal(t, 1, b.temporal.runCount(fmt.Sprintf("obj-%02d", i)), "runs of obj-%02d", i)
	}
	require.Equal(t, bridge.Counts{}, pass(t, old), "the old leader stands by at its next pass")
}
