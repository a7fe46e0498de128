package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// approveInTheStore does what a script or a person with database access
// does: moves a NEW objective to TODO and writes its TICKET_READY event,
// behind the lifecycle's back.
func approveInTheStore(t *testing.T, b *bundle, id string) string {
	t.Helper()
	ctx := context.Background()
	o, err := b.store.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: id,
		From: []store.Status{store.StatusNew}, To: store.StatusTodo})
	require.NoError(t, err)
	ev, created, err := b.store.EmitEvent(ctx, &store.Event{EventID: "ev-" + id + "-by-hand",
		EventType: store.EventTicketReady, SubjectID: id, TransitionSeq: o.StatusSeq})
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

	require.Equal(t, store.StatusDone, st.Status)
	ev, err := b.store.GetEvent(context.Background(), eventID)
	require.NoError(t, err)
	require.True(t, ev.Processed)
	require.Equal(t, store.ReasonScheduled, ev.ProcessedReason)
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
