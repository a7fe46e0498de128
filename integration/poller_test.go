package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workers"
	"github.com/azolla/azolla/workers/bridge"
	"github.com/azolla/azolla/workflows"
)

// Rows written straight into the store (or while Temporal was unreachable)
// get their lifecycle from the poller's first pass, and later passes start
// nothing more.
func TestPoller_StartsLifecyclesForStoredWork(t *testing.T) {
	t.Parallel()
	idGhost := uniqueID("ghost")
	idDirect := uniqueID("direct")
	idOffline := uniqueID("offline")
	b := setupWithoutPoller(t)
	ctx := context.Background()
	now := time.Now().UTC()

	// Written while Temporal was unreachable: waits for approval.
	require.NoError(t, b.store.CreateObjective(ctx, &domain.Objective{ObjectiveID: idOffline, ObjectiveType: "TICKET",
		Title: "created offline", Status: domain.StatusNew, Urgency: "NORMAL", CreatedAt: now}))
	// Approved by hand in the database: runs to DONE.
	require.NoError(t, b.store.CreateObjective(ctx, &domain.Objective{ObjectiveID: idDirect, ObjectiveType: "TICKET",
		Title: "approved in the database", Status: domain.StatusTodo, Urgency: "NORMAL", CreatedAt: now}))
	// An event about an objective that does not exist: MISSING_TICKET.
	_, _, err := b.store.EmitEvent(ctx, &domain.Event{EventID: "ev-" + idGhost, EventType: domain.EventTicketReady,
		SubjectID: idGhost, CreatedAt: now})
	require.NoError(t, err)

	p := newTestPoller(t, b, "test-poller", 0)
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Started: 3}, runPass(t, p))
	b.waitStep(t, idOffline, workflows.StepAwaitingApproval)
	b.waitStep(t, idDirect, workflows.StepDone)
	require.Eventually(t, func() bool {
		ev, err := b.store.GetEvent(ctx, "ev-"+idGhost)
		return err == nil && ev.Processed && ev.ProcessedReason == domain.ReasonMissingTicket
	}, 60*time.Second, 100*time.Millisecond)

	// Later passes find everything handed over: they start nothing, and
	// each objective still has its one lifecycle and one workorder.
	for range 3 {
		c := runPass(t, p)
		require.Zero(t, c.Started+c.Woken+c.Failed, "%+v", c)
	}
	for _, id := range []string{idOffline, idDirect} {
		require.Equal(t, 1, lifecycleRuns(t, b, id), "runs of %s", id)
	}
	wos, bundles, records := b.counts(t, idDirect)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records})
	claim, err := b.store.GetClaim(ctx, domain.ResourceEvent, "ev-"+idGhost)
	require.NoError(t, err)
	require.NotNil(t, claim.ReleasedAt, "the poller and the scheduler release their event claims")
	b.requireAuditClean(t)
}

// Never two lifecycles for one objective: two pollers that both believe
// they lead (the second took the first's lease over mid-pass) and a human
// resuming objectives race over objectives written straight into the
// store; half of them were approved there and run to DONE meanwhile.
func TestPoller_NeverTwoLifecyclesWhenPollersAndTheStarterRace(t *testing.T) {
	t.Parallel()
	b := setupWithoutPoller(t)
	ctx := context.Background()
	const n = 8
	var waiting, approved []string
	for i := range n {
		w, a := uniqueID(fmt.Sprintf("race-new-%d", i)), uniqueID(fmt.Sprintf("race-todo-%d", i))
		waiting, approved = append(waiting, w), append(approved, a)
		for id, status := range map[string]domain.Status{w: domain.StatusNew, a: domain.StatusTodo} {
			require.NoError(t, b.store.CreateObjective(ctx, &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET",
				Title: "race " + id, Status: status, Urgency: "NORMAL"}))
		}
	}
	first := newTestPoller(t, b, "first", 0)
	// Its clock runs two leases ahead: the first's lease has lapsed for it.
	second := newTestPoller(t, b, "second", 2*b.cfg.Claim.LeaseTTL)

	var wg sync.WaitGroup
	errs := make(chan error, 2*n+2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := first.RunOnce(ctx)
		// The first may notice, mid-pass, that the second took its
		// leadership over: its pass then stops, as designed. Whether it
		// notices before it ends depends on timing; either way is right.
		if errors.Is(err, claim.ErrLeaseLost) {
			err = nil
		}
		errs <- err
	}()
	require.Eventually(t, func() bool {
		c, err := b.store.GetClaim(ctx, domain.ResourcePoller, domain.PollerLeadership)
		return err == nil && c.OwnerID == "first"
	}, 30*time.Second, time.Millisecond, "the first poller leads")
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := second.RunOnce(ctx)
		errs <- err
	}()
	// A human resumes the objectives that wait (the others may have run to
	// DONE already: resuming those would rightly start them again).
	for _, id := range waiting {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- b.starter.Start(ctx, &domain.Objective{ObjectiveID: id})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	for _, id := range waiting {
		b.waitStep(t, id, workflows.StepAwaitingApproval)
	}
	for _, id := range approved {
		b.waitStep(t, id, workflows.StepDone)
	}
	// More passes of both, now that the approved ones have finished.
	for range 2 {
		for _, p := range []*bridge.Poller{first, second} {
			c, err := p.RunOnce(ctx)
			require.NoError(t, err)
			require.Zero(t, c.Started+c.Failed, "%+v", c)
		}
	}
	for _, id := range append(waiting, approved...) {
		require.Equal(t, 1, lifecycleRuns(t, b, id), "runs of %s", id)
	}
	for _, id := range approved {
		wos, bundles, records := b.counts(t, id)
		require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records}, "artifacts of %s", id)
	}
	b.requireAuditClean(t)
}

// A DONE objective whose lifecycle has finished is never given another,
// even when it lost its mark (a store from before the mark existed): the
// poller looks once and marks it; StartFirst refuses too.
func TestPoller_DoneObjectiveWithAFinishedLifecycleIsNeverRestarted(t *testing.T) {
	t.Parallel()
	id := uniqueID("finished")
	b := setupWithoutPoller(t)
	ctx := context.Background()
	require.NoError(t, b.store.CreateObjective(ctx, &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET",
		Title: "approved in the database", Status: domain.StatusTodo, Urgency: "NORMAL"}))
	p := newTestPoller(t, b, "test-poller", 0)
	require.Equal(t, 1, runPass(t, p).Started)
	b.waitStep(t, id, workflows.StepDone)
	waitClosed(t, b, id)

	_, err := b.store.(*sqlstore.Store).DB().ExecContext(ctx,
		b.store.(*sqlstore.Store).Rebind(`UPDATE objectives SET handed_over_at = NULL WHERE objective_id = $1`), id)
	require.NoError(t, err)
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Marked: 1}, runPass(t, p))
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2}, runPass(t, p))

	err = b.starter.StartFirst(ctx, &domain.Objective{ObjectiveID: id})
	require.ErrorIs(t, err, starter.ErrLifecycleEnded, "the server refuses a first start once a lifecycle closed")
	require.Equal(t, 1, lifecycleRuns(t, b, id))
}

// setupWithoutPoller is setup with an in-process worker that runs no
// poller: the test drives its own.
func setupWithoutPoller(t *testing.T) *bundle {
	t.Helper()
	b := setup(t, setupOptions{noWorker: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- workers.Run(ctx, workers.Options{Config: b.cfg, Client: b.client, Store: b.store,
			Log:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
			Identity: "in-process", NoPoller: true})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return b
}

// newTestPoller is a poller on b whose leases run on a clock skew ahead;
// the test calls its RunOnce.
func newTestPoller(t *testing.T, b *bundle, owner string, skew time.Duration) *bridge.Poller {
	now := func() time.Time { return time.Now().Add(skew) }
	p := &bridge.Poller{Store: b.store, Claims: claim.NewBridge(b.store, claim.WithClock(now)), Client: b.client,
		Starter:  &starter.Starter{Client: b.client, Store: b.store, TaskQueue: b.cfg.Temporal.TaskQueue, AttributesWait: -1},
		Interval: time.Hour, LeaseTTL: b.cfg.Claim.LeaseTTL, OwnerID: owner, Now: now,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
	t.Cleanup(p.Stop)
	return p
}

func runPass(t *testing.T, p *bridge.Poller) bridge.Counts {
	t.Helper()
	c, err := p.RunOnce(context.Background())
	require.NoError(t, err)
	return c
}

// waitClosed waits until the objective's lifecycle has closed.
func waitClosed(t *testing.T, b *bundle, id string) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := b.client.DescribeWorkflowExecution(context.Background(), workflows.ObjectiveWorkflowID(id), "")
		return err == nil && d.GetWorkflowExecutionInfo().GetCloseTime() != nil
	}, 30*time.Second, 50*time.Millisecond)
}

// lifecycleRuns counts the executions the objective's workflow id has had.
// Visibility lags behind the server; it is read once it shows the latest
// run (read from the server itself), which no earlier run follows.
func lifecycleRuns(t *testing.T, b *bundle, id string) int {
	t.Helper()
	ctx := context.Background()
	wid := workflows.ObjectiveWorkflowID(id)
	d, err := b.client.DescribeWorkflowExecution(ctx, wid, "")
	require.NoError(t, err)
	latest := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	var runs int
	require.Eventually(t, func() bool {
		resp, err := b.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = %q", wid)})
		if err != nil {
			return false
		}
		runs = len(resp.GetExecutions())
		for _, e := range resp.GetExecutions() {
			if e.GetExecution().GetRunId() == latest {
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "visibility never showed run %s of %s", latest, wid)
	return runs
}
