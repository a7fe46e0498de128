package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

func TestLifecycle_ApproveSignalRunsToDone(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{})
	ctx := context.Background()
	b.create(t, "pass")
	b.waitStep(t, "pass", workflows.StepAwaitingApproval)

	require.NoError(t, b.client.SignalWorkflow(ctx, workflows.ObjectiveWorkflowID("pass"), "", workflows.Approve,
		workflows.Decision{By: "tester", Comment: "looks right"}))
	st := b.waitStep(t, "pass", workflows.StepDone)

	require.Equal(t, store.StatusDone, st.Status)
	require.Equal(t, store.GatePass, st.GateResult)
	require.Equal(t, []string{"wo-pass-1"}, st.WorkOrderIDs)
	require.Equal(t, store.PauseRunComplete, st.LastPause.Reason)
	o, err := b.store.GetObjective(ctx, "pass")
	require.NoError(t, err)
	require.Equal(t, store.StatusDone, o.Status)
	out, err := b.store.GetOutputBundle(ctx, "wo-pass-1")
	require.NoError(t, err)
	require.Contains(t, out.Content, "objective pass, workorder wo-pass-1", "the default command names its ids")
	require.Contains(t, out.Content, "Integration objective pass", "the prompt reaches the command on stdin")
	wos, bundles, records := b.counts(t, "pass")
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records})
	b.requireAuditClean(t)

	// The Web UI filters objectives by the search attributes.
	require.Eventually(t, func() bool {
		resp, err := b.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: `AzollaStatus = "DONE" AND AzollaObjectiveId = "pass" AND AzollaGateResult = "PASS"`})
		return err == nil && len(resp.Executions) == 1
	}, 30*time.Second, 200*time.Millisecond, "the finished lifecycle is found by AzollaStatus")
	recordHistories(t, b, "pass", "pass")
}

func TestLifecycle_ApproveUpdateAnswersAndRefusesTwice(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{})
	ctx := context.Background()
	b.create(t, "upd")
	b.waitStep(t, "upd", workflows.StepAwaitingApproval)

	res, err := b.starter.Decide(ctx, "upd", workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	require.Equal(t, "ev-upd-1", res.EventID)
	b.waitStep(t, "upd", workflows.StepDone)

	_, err = b.starter.Decide(ctx, "upd", workflows.Approve, workflows.Decision{By: "tester"})
	require.ErrorIs(t, err, starter.ErrRefused)
	_, err = b.starter.Decide(ctx, "nope", workflows.Approve, workflows.Decision{})
	require.ErrorIs(t, err, store.ErrNotFound)
	events, err := b.store.ListEvents(ctx, store.ListEventsParams{SubjectID: "upd"})
	require.NoError(t, err)
	require.Len(t, events, 1, "a refused approval emits nothing")
	b.requireAuditClean(t)
}

func TestLifecycle_GateFailThenRetry(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "ran-once")
	// The first run prints nothing (the gate fails), the second prints.
	b := setup(t, setupOptions{command: fmt.Sprintf(`if [ -e %[1]q ]; then echo second run; else touch %[1]q; fi`, mark)})
	ctx := context.Background()
	b.create(t, "retry")
	_, err := b.starter.Decide(ctx, "retry", workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)

	st := b.waitStep(t, "retry", workflows.StepAwaitingRetry)
	require.Equal(t, store.GateFail, st.GateResult)
	require.Equal(t, store.PauseGateFailed, st.LastPause.Reason)
	o, err := b.store.GetObjective(ctx, "retry")
	require.NoError(t, err)
	require.Equal(t, store.StatusTodo, o.Status)
	require.Equal(t, "gate:wo-retry-1", o.BlockerRef)

	// Approving now is refused: the objective is past approval.
	_, err = b.starter.Decide(ctx, "retry", workflows.Approve, workflows.Decision{})
	require.ErrorIs(t, err, starter.ErrRefused)

	res, err := b.starter.Decide(ctx, "retry", workflows.Retry, workflows.Decision{By: "tester", Comment: "again"})
	require.NoError(t, err)
	require.Equal(t, "ev-retry-4", res.EventID)
	st = b.waitStep(t, "retry", workflows.StepDone)
	require.Equal(t, 1, st.Round, "the retry continued as new")
	require.Equal(t, []string{"wo-retry-1", "wo-retry-4"}, st.WorkOrderIDs)

	wos, bundles, records := b.counts(t, "retry")
	require.Equal(t, []int{2, 2, 2}, []int{wos, bundles, records})
	first, err := b.store.GetRunRecord(ctx, "wo-retry-1")
	require.NoError(t, err)
	require.Equal(t, store.GateFail, first.GateResult)
	b.requireAuditClean(t)
	recordHistories(t, b, "gate_fail_retry", "retry")
}

func TestLifecycle_BlockedThenUnblock(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{})
	ctx := context.Background()
	b.create(t, "blocked", func(o *store.Objective) { o.Blockers = []string{"waiting for an API key"} })
	_, err := b.starter.Decide(ctx, "blocked", workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)

	st := b.waitStep(t, "blocked", workflows.StepAwaitingUnblock)
	require.Equal(t, store.StatusBlocked, st.Status)
	require.Equal(t, store.PauseBlocked, st.LastPause.Reason)
	require.Contains(t, st.LastPause.PrioritizedActions[0], "Resolve blockers for blocked")
	ev, err := b.store.GetEvent(ctx, "ev-blocked-1")
	require.NoError(t, err)
	require.Equal(t, store.ReasonBlocked, ev.ProcessedReason)

	_, err = b.starter.Decide(ctx, "blocked", workflows.Unblock, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	b.waitStep(t, "blocked", workflows.StepDone)
	o, err := b.store.GetObjective(ctx, "blocked")
	require.NoError(t, err)
	require.Empty(t, o.Blockers)
	require.Equal(t, store.StatusDone, o.Status)
	b.requireAuditClean(t)
	recordHistories(t, b, "blocked_unblock", "blocked")
}

func TestLifecycle_RejectEndsIt(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{})
	ctx := context.Background()
	b.create(t, "rejected")
	b.waitStep(t, "rejected", workflows.StepAwaitingApproval)
	res, err := b.starter.Decide(ctx, "rejected", workflows.Reject, workflows.Decision{By: "tester", Comment: "out of scope"})
	require.NoError(t, err)
	require.Equal(t, store.PauseRejected, res.Pause.Reason)
	require.Contains(t, res.Pause.PrioritizedActions[0], "out of scope")

	run := b.client.GetWorkflow(ctx, workflows.ObjectiveWorkflowID("rejected"), "")
	var final workflows.State
	require.NoError(t, run.Get(ctx, &final))
	require.Equal(t, workflows.StepRejected, final.Step)
	o, err := b.store.GetObjective(ctx, "rejected")
	require.NoError(t, err)
	require.Equal(t, store.StatusNew, o.Status, "a rejection changes no status")
	b.requireAuditClean(t)
	recordHistories(t, b, "reject", "rejected")
}
