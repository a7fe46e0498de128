package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// Rows written straight into the store (or while Temporal was unreachable)
// get their lifecycle from the polling bridge.
func TestBridge_StartsLifecyclesForStoredWork(t *testing.T) {
	t.Parallel()
	idGhost := uniqueID("ghost")
	idDirect := uniqueID("direct")
	idOffline := uniqueID("offline")
	b := setup(t, setupOptions{})
	ctx := context.Background()
	now := time.Now().UTC()

	// Written while Temporal was unreachable: waits for approval.
	require.NoError(t, b.store.CreateObjective(ctx, &store.Objective{ObjectiveID: idOffline, ObjectiveType: "TICKET",
		Title: "created offline", Status: store.StatusNew, Urgency: "NORMAL", CreatedAt: now}))
	// Approved by hand in the database: runs to DONE.
	require.NoError(t, b.store.CreateObjective(ctx, &store.Objective{ObjectiveID: idDirect, ObjectiveType: "TICKET",
		Title: "approved in the database", Status: store.StatusTodo, Urgency: "NORMAL", CreatedAt: now}))
	// An event about an objective that does not exist: MISSING_TICKET.
	_, _, err := b.store.EmitEvent(ctx, &store.Event{EventID: "ev-" + idGhost, EventType: store.EventTicketReady,
		SubjectID: idGhost, CreatedAt: now})
	require.NoError(t, err)

	b.waitStep(t, idOffline, workflows.StepAwaitingApproval)
	b.waitStep(t, idDirect, workflows.StepDone)
	require.Eventually(t, func() bool {
		ev, err := b.store.GetEvent(ctx, "ev-"+idGhost)
		return err == nil && ev.Processed && ev.ProcessedReason == store.ReasonMissingTicket
	}, 60*time.Second, 100*time.Millisecond)

	// Many passes later, still one lifecycle each (one run: none completed
	// and was started again) and one workorder.
	time.Sleep(time.Second)
	for _, id := range []string{idOffline, idDirect} {
		resp, err := b.client.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = %q", workflows.ObjectiveWorkflowID(id))})
		require.NoError(t, err)
		require.Equal(t, int64(1), resp.GetCount(), "runs of %s", id)
	}
	wos, bundles, records := b.counts(t, idDirect)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records})
	claim, err := b.store.GetClaim(ctx, store.ResourceEvent, "ev-"+idGhost)
	require.NoError(t, err)
	require.NotNil(t, claim.ReleasedAt, "the bridge and the scheduler release their event claims")
	b.requireAuditClean(t)
}
