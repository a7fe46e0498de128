package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// approveInTheStore does what a script or a person with database access
// does: moves a NEW objective to TODO and writes its TICKET_READY event,
// behind the lifecycle's back.
func approveInTheStore(t *testing.T, b *bundle, id string) string {
	t.Helper()
	ctx := context.Background()
	o, err := b.store.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: id,
		From: []domain.Status{domain.StatusNew}, To: domain.StatusTodo})
	require.NoError(t, err)
	ev, created, err := b.store.EmitEvent(ctx, &domain.Event{EventID: "ev-" + id + "-by-hand",
		EventType: domain.EventTicketReady, SubjectID: id, TransitionSeq: o.StatusSeq})
	require.NoError(t, err)
	require.True(t, created)
	return ev.EventID
}

// A TICKET_READY row written straight into the database for an objective
// whose lifecycle waits for approval is handled: the polling bridge wakes
// the waiting lifecycle once the event has sat unprocessed for a lease, the
// lifecycle reads the store again, schedules the event and runs to DONE.
func TestWake_EventWrittenInTheStoreIsScheduledByAWaitingLifecycle(t *testing.T) {
	t.Parallel()
	id := uniqueID("woken")
	b := setup(t, setupOptions{leaseTTL: 2 * time.Second})
	b.create(t, id)
	b.waitStep(t, id, workflows.StepAwaitingApproval)

	eventID := approveInTheStore(t, b, id)
	st := b.waitStep(t, id, workflows.StepDone)

	require.Equal(t, domain.StatusDone, st.Status)
	ev, err := b.store.GetEvent(context.Background(), eventID)
	require.NoError(t, err)
	require.True(t, ev.Processed)
	require.Equal(t, domain.ReasonScheduled, ev.ProcessedReason)
	wos, bundles, records := b.counts(t, id)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records})
	b.requireAuditClean(t)
	recordHistories(t, b, "woken", id)
}

// `azolla objective resume` on a running, waiting lifecycle wakes it at
// once: it no longer waits for the bridge.
func TestWake_ResumeWakesAWaitingLifecycle(t *testing.T) {
	t.Parallel()
	id := uniqueID("resumed")
	// The longest lease: the bridge would not wake it within the test.
	b := setup(t, setupOptions{leaseTTL: 10 * time.Minute})
	o := b.create(t, id)
	b.waitStep(t, id, workflows.StepAwaitingApproval)

	approveInTheStore(t, b, id)
	require.NoError(t, b.starter.Start(context.Background(), o), "what objective resume does")
	b.waitStep(t, id, workflows.StepDone)
	b.requireAuditClean(t)
}

// An objective that triage proposed a moment ago has no lifecycle yet: the
// poller hands it over on its next pass. Approving it in that window starts
// its lifecycle and hands it the decision, rather than telling the human
// that nothing runs. A rejected objective gets no lifecycle that way.
func TestWake_ApproveBeforeThePollerHandsTheObjectiveOver(t *testing.T) {
	t.Parallel()
	b := setupWithoutPoller(t)
	ctx := context.Background()
	id := uniqueID("fresh")
	require.NoError(t, b.store.CreateObjective(ctx, &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET",
		Title: "Proposed by triage " + id, AcceptanceCriteria: []string{"it runs"},
		Status: domain.StatusNew, Urgency: "NORMAL"}))
	_, err := b.starter.State(ctx, id)
	require.ErrorIs(t, err, starter.ErrNoLifecycle, "nothing has handed the objective over")

	res, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	require.NotEmpty(t, res.EventID)
	st := b.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.StatusDone, st.Status)
	require.Equal(t, 1, lifecycleRuns(t, b, id))

	// Once DONE, a second approval is refused and starts nothing.
	_, err = b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.ErrorIs(t, err, starter.ErrRefused)
	require.Equal(t, 1, lifecycleRuns(t, b, id))
}
