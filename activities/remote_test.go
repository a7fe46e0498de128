package activities_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/controlplane/dbqueue"
	"github.com/azolla/azolla/schemas"
)

// remoteBundle routes the fake diazotroph to remote workers through a
// control plane on the bundle's store (database transport, the lifecycle hooks),
// driven here the way a remote worker drives it.
type remoteBundle struct {
	*testBundle
	svc *controlplane.Service
}

func setupRemote(t *testing.T, tb *testBundle) *remoteBundle {
	t.Helper()
	tr, err := dbqueue.New(tb.store, dbqueue.Options{LeaseTTL: testLease})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Close() })
	svc := controlplane.New(tb.store, tr, nil, controlplane.LifecycleHooks{},
		controlplane.Config{LeaseTTL: testLease, MaxAttempts: 2})
	remote := &activities.Remote{Enqueuer: svc, Diazotrophs: []string{fakeType}}
	tb.steps.Remote, tb.cands.Remote = remote, remote
	return &remoteBundle{testBundle: tb, svc: svc}
}

// enqueued runs wo remotely: outside an activity, Run enqueues the job and
// says it cannot wait for it.
func (rb *remoteBundle) enqueued(t *testing.T, wo *activities.WorkOrderRef) *domain.Job {
	t.Helper()
	_, err := rb.steps.Run(context.Background(), activities.RunInput{WorkOrderID: wo.WorkOrderID})
	require.ErrorContains(t, err, "only an activity waits for it")
	j, err := rb.store.GetJobByWorkOrder(context.Background(), wo.WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, domain.JobQueued, j.Status)
	require.Empty(t, rb.fake.Calls(), "a remote diazotroph never runs in the worker")
	return j
}

func (rb *remoteBundle) claim(t *testing.T, worker string) controlplane.ClaimResponse {
	t.Helper()
	resp, err := rb.svc.Claim(context.Background(), controlplane.ClaimRequest{WorkerID: worker,
		Streams: []string{controlplane.StreamFor(fakeType)}, MaxWaitMS: 1000})
	require.NoError(t, err)
	require.True(t, resp.Claimed)
	return resp
}

func result(t *testing.T, r controlplane.WorkResult) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return b
}

func TestRunRemote_ClaimHeartbeatCompleteWriteTheWorkOrdersOutcome(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		rb := setupRemote(t, tb)
		ctx := context.Background()
		wo := rb.scheduled(t, "rem")
		j := rb.enqueued(t, wo)
		var payload controlplane.WorkPayload
		require.NoError(t, json.Unmarshal(j.Payload, &payload))
		require.NoError(t, payload.Validate())
		require.Equal(t, wo.WorkOrderID, payload.WorkOrder.WorkOrderID)

		// The claim takes the WORKORDER claim for the attempt; each
		// heartbeat renews it.
		resp := rb.claim(t, "builder-1")
		c, err := rb.store.GetClaim(ctx, domain.ResourceWorkOrder, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, "remote:"+j.JobID+"/1", c.OwnerID)
		require.True(t, c.Live(c.HeartbeatAt))
		_, err = rb.svc.Heartbeat(ctx, controlplane.HeartbeatRequest{WorkerID: "builder-1", JobID: resp.JobID,
			LeaseToken: resp.LeaseToken})
		require.NoError(t, err)
		renewed, err := rb.store.GetClaim(ctx, domain.ResourceWorkOrder, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, c.ClaimVersion+1, renewed.ClaimVersion)

		// An invalid result is refused and writes nothing.
		complete := controlplane.CompleteRequest{WorkerID: "builder-1", JobID: resp.JobID, AttemptID: resp.AttemptID,
			LeaseToken: resp.LeaseToken, Stream: resp.Stream.Name, MessageID: resp.Stream.MessageID,
			Result: result(t, controlplane.WorkResult{Title: "t", RunnerStatus: "MAYBE"})}
		_, err = rb.svc.Complete(ctx, complete)
		var ce *controlplane.Error
		require.ErrorAs(t, err, &ce)
		require.Equal(t, controlplane.CodeInvalid, ce.Code)
		rb.requireNoBundle(t, wo.WorkOrderID)

		complete.Result = result(t, controlplane.WorkResult{Title: "Remote\x1b[2J title", Content: "diff",
			Metadata: domain.BundleMetadata{BranchName: wo.BranchName}, RunnerStatus: domain.RunnerOK})
		ans, err := rb.svc.Complete(ctx, complete)
		require.NoError(t, err)
		require.True(t, ans.OK && ans.Ack)
		b, err := rb.store.GetOutputBundle(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, "diff", b.Content)
		require.NotContains(t, b.Title, "\x1b", "a worker's title is made one safe line")
		require.NoError(t, schemas.Validate(schemas.OutputBundle, b))
		require.Equal(t, domain.WorkOrderExecuted, rb.workOrder(t, wo.WorkOrderID).Status)
		released := rb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)
		require.Equal(t, "remote:"+j.JobID+"/1", released.OwnerID)

		// Run again (a retried activity) answers from the stored bundle.
		res, err := rb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.True(t, res.AlreadyExecuted)
		require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	})
}

func TestRunRemote_AStolenWorkOrderClaimRefusesTheHeartbeatAndTheCompletion(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		rb := setupRemote(t, tb)
		ctx := context.Background()
		wo := rb.scheduled(t, "stolen")
		rb.enqueued(t, wo)
		resp := rb.claim(t, "builder-1")
		_, ok, err := rb.thief().Acquire(ctx, domain.ResourceWorkOrder, wo.WorkOrderID, "thief", testLease)
		require.NoError(t, err)
		require.True(t, ok)

		_, err = rb.svc.Heartbeat(ctx, controlplane.HeartbeatRequest{WorkerID: "builder-1", JobID: resp.JobID,
			LeaseToken: resp.LeaseToken})
		var ce *controlplane.Error
		require.ErrorAs(t, err, &ce)
		require.Equal(t, controlplane.CodeLeaseLost, ce.Code)
		_, err = rb.svc.Complete(ctx, controlplane.CompleteRequest{WorkerID: "builder-1", JobID: resp.JobID,
			AttemptID: resp.AttemptID, LeaseToken: resp.LeaseToken, Stream: resp.Stream.Name,
			MessageID: resp.Stream.MessageID, Result: result(t, controlplane.WorkResult{Title: "t",
				RunnerStatus: domain.RunnerOK})})
		require.ErrorAs(t, err, &ce)
		require.Equal(t, controlplane.CodeLeaseLost, ce.Code)
		rb.requireNoBundle(t, wo.WorkOrderID)
		j, err := rb.store.GetJobByWorkOrder(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, domain.JobRunning, j.Status, "nothing of the completion was written")
	})
}

func TestRunRemote_ADeadLetteredJobFailsRunForGood(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		rb := setupRemote(t, tb)
		ctx := context.Background()
		wo := rb.scheduled(t, "dlq")
		rb.enqueued(t, wo)
		resp := rb.claim(t, "builder-1")
		ans, err := rb.svc.Fail(ctx, controlplane.FailRequest{WorkerID: "builder-1", JobID: resp.JobID,
			AttemptID: resp.AttemptID, LeaseToken: resp.LeaseToken, Stream: resp.Stream.Name,
			MessageID: resp.Stream.MessageID, Error: domain.JobError{Code: "invalid_payload",
				Message: "cannot read it", Retryable: false}})
		require.NoError(t, err)
		require.True(t, ans.DLQ)
		rb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)

		_, err = rb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		requirePermanent(t, err, activities.ErrTypeDeadLettered)
		require.ErrorContains(t, err, "DEAD_LETTERED after 1 attempt(s): invalid_payload: cannot read it")
		rb.requireNoBundle(t, wo.WorkOrderID)
	})
}
