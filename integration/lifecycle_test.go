package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

func TestLifecycle_ApproveSignalRunsToDone(t *testing.T) {
	t.Parallel()
	idPass := uniqueID("pass")
	b := setup(t, setupOptions{})
	ctx := context.Background()
	b.create(t, idPass)
	b.waitStep(t, idPass, workflows.StepAwaitingApproval)

	require.NoError(t, b.client.SignalWorkflow(ctx, workflows.ObjectiveWorkflowID(idPass), "", workflows.Approve,
		workflows.Decision{By: "tester", Comment: "looks right"}))
	st := b.waitStep(t, idPass, workflows.StepDone)

	require.Equal(t, domain.StatusDone, st.Status)
	require.Equal(t, domain.GatePass, st.GateResult)
	require.Equal(t, []string{"wo-" + idPass + "-1"}, st.WorkOrderIDs)
	require.Equal(t, domain.PauseRunComplete, st.LastPause.Reason)
	o, err := b.store.GetObjective(ctx, idPass)
	require.NoError(t, err)
	require.Equal(t, domain.StatusDone, o.Status)
	out, err := b.store.GetOutputBundle(ctx, "wo-"+idPass+"-1")
	require.NoError(t, err)
	require.Contains(t, out.Content, fmt.Sprintf("objective %s, workorder wo-%s-1", idPass, idPass), "the default command names its ids")
	require.Contains(t, out.Content, "Integration objective pass", "the prompt reaches the command on stdin")
	wos, bundles, records := b.counts(t, idPass)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records})
	b.requireAuditClean(t)

	// The Web UI filters objectives by the search attributes.
	require.Eventually(t, func() bool {
		resp, err := b.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf(`AzollaStatus = "DONE" AND AzollaObjectiveId = %q AND AzollaGateResult = "PASS"`, idPass)})
		return err == nil && len(resp.Executions) == 1
	}, 30*time.Second, 200*time.Millisecond, "the finished lifecycle is found by AzollaStatus")
	recordHistories(t, b, "pass", idPass)
}

func TestLifecycle_ApproveUpdateAnswersAndRefusesTwice(t *testing.T) {
	t.Parallel()
	idUpd := uniqueID("upd")
	b := setup(t, setupOptions{})
	ctx := context.Background()
	b.create(t, idUpd)
	b.waitStep(t, idUpd, workflows.StepAwaitingApproval)

	res, err := b.starter.Decide(ctx, idUpd, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	require.Equal(t, "ev-"+idUpd+"-1", res.EventID)
	b.waitStep(t, idUpd, workflows.StepDone)

	_, err = b.starter.Decide(ctx, idUpd, workflows.Approve, workflows.Decision{By: "tester"})
	require.ErrorIs(t, err, starter.ErrRefused)
	_, err = b.starter.Decide(ctx, "nope", workflows.Approve, workflows.Decision{})
	require.ErrorIs(t, err, domain.ErrNotFound)
	events, err := b.store.ListEvents(ctx, store.ListEventsParams{SubjectID: idUpd})
	require.NoError(t, err)
	require.Len(t, events, 1, "a refused approval emits nothing")
	b.requireAuditClean(t)
}

func TestLifecycle_GateFailThenRetry(t *testing.T) {
	t.Parallel()
	idRetry := uniqueID("retry")
	mark := filepath.Join(t.TempDir(), "ran-once")
	// The first run prints nothing (the gate fails), the second prints.
	b := setup(t, setupOptions{command: fmt.Sprintf(`if [ -e %[1]q ]; then echo second run; else touch %[1]q; fi`, mark),
		configure: func(c *config.Config) {
			c.Diazotroph.Command.Binds = []config.BindConfig{{Path: filepath.Dir(mark), Mode: config.BindReadWrite}}
		}})
	ctx := context.Background()
	b.create(t, idRetry)
	_, err := b.starter.Decide(ctx, idRetry, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)

	st := b.waitStep(t, idRetry, workflows.StepAwaitingRetry)
	require.Equal(t, domain.GateFail, st.GateResult)
	require.Equal(t, domain.PauseGateFailed, st.LastPause.Reason)
	o, err := b.store.GetObjective(ctx, idRetry)
	require.NoError(t, err)
	require.Equal(t, domain.StatusTodo, o.Status)
	require.Equal(t, domain.GateBlocker("wo-"+idRetry+"-1"), o.BlockerRef)

	// Approving now is refused: the objective is past approval.
	_, err = b.starter.Decide(ctx, idRetry, workflows.Approve, workflows.Decision{})
	require.ErrorIs(t, err, starter.ErrRefused)

	res, err := b.starter.Decide(ctx, idRetry, workflows.Retry, workflows.Decision{By: "tester", Comment: "again"})
	require.NoError(t, err)
	require.Equal(t, "ev-"+idRetry+"-4", res.EventID)
	st = b.waitStep(t, idRetry, workflows.StepDone)
	require.Equal(t, 1, st.Round, "the retry continued as new")
	require.Equal(t, []string{"wo-" + idRetry + "-1", "wo-" + idRetry + "-4"}, st.WorkOrderIDs)

	wos, bundles, records := b.counts(t, idRetry)
	require.Equal(t, []int{2, 2, 2}, []int{wos, bundles, records})
	first, err := b.store.GetRunRecord(ctx, "wo-"+idRetry+"-1")
	require.NoError(t, err)
	require.Equal(t, domain.GateFail, first.GateResult)
	b.requireAuditClean(t)
	recordHistories(t, b, "gate_fail_retry", idRetry)
}

func TestLifecycle_BlockedThenUnblock(t *testing.T) {
	t.Parallel()
	idBlocked := uniqueID("blocked")
	b := setup(t, setupOptions{})
	ctx := context.Background()
	b.create(t, idBlocked, func(o *domain.Objective) { o.Blockers = []string{"waiting for an API key"} })
	_, err := b.starter.Decide(ctx, idBlocked, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)

	st := b.waitStep(t, idBlocked, workflows.StepAwaitingUnblock)
	require.Equal(t, domain.StatusBlocked, st.Status)
	require.Equal(t, domain.PauseBlocked, st.LastPause.Reason)
	require.Contains(t, st.LastPause.PrioritizedActions[0], "Resolve blockers for blocked")
	ev, err := b.store.GetEvent(ctx, "ev-"+idBlocked+"-1")
	require.NoError(t, err)
	require.Equal(t, domain.ReasonBlocked, ev.ProcessedReason)

	_, err = b.starter.Decide(ctx, idBlocked, workflows.Unblock, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	b.waitStep(t, idBlocked, workflows.StepDone)
	o, err := b.store.GetObjective(ctx, idBlocked)
	require.NoError(t, err)
	require.Empty(t, o.Blockers)
	require.Equal(t, domain.StatusDone, o.Status)
	b.requireAuditClean(t)
	recordHistories(t, b, "blocked_unblock", idBlocked)
}

func TestLifecycle_RejectEndsIt(t *testing.T) {
	t.Parallel()
	idRejected := uniqueID("rejected")
	b := setup(t, setupOptions{})
	ctx := context.Background()
	b.create(t, idRejected)
	b.waitStep(t, idRejected, workflows.StepAwaitingApproval)
	res, err := b.starter.Decide(ctx, idRejected, workflows.Reject, workflows.Decision{By: "tester", Comment: "out of scope"})
	require.NoError(t, err)
	require.Equal(t, domain.PauseRejected, res.Pause.Reason)
	require.Contains(t, res.Pause.PrioritizedActions[0], "out of scope")

	run := b.client.GetWorkflow(ctx, workflows.ObjectiveWorkflowID(idRejected), "")
	var final workflows.State
	require.NoError(t, run.Get(ctx, &final))
	require.Equal(t, workflows.StepRejected, final.Step)
	o, err := b.store.GetObjective(ctx, idRejected)
	require.NoError(t, err)
	require.Equal(t, domain.StatusNew, o.Status, "a rejection changes no status")
	b.requireAuditClean(t)
	recordHistories(t, b, "reject", idRejected)
}
