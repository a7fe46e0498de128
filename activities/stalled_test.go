package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
)

// A remote worker's run that stalled completes its job like any other
// outcome, and the gate fails it for the stall.
func TestRunRemote_AStalledRunCompletesAndFailsTheGate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		rb := setupRemote(t, tb)
		ctx := context.Background()
		wo := rb.scheduled(t, "obj-1")
		rb.enqueued(t, wo)
		resp := rb.claim(t, "builder-1")
		ans, err := rb.svc.Complete(ctx, controlplane.CompleteRequest{WorkerID: "builder-1", JobID: resp.JobID,
			AttemptID: resp.AttemptID, LeaseToken: resp.LeaseToken, Stream: resp.Stream.Name,
			MessageID: resp.Stream.MessageID, Result: result(t, controlplane.WorkResult{Title: "No patch (stalled)",
				Notes:        "The run was stopped: no output and no file changed for 2m0s (executor.stall_timeout).",
				Metadata:     domain.BundleMetadata{BranchName: wo.BranchName},
				RunnerStatus: domain.RunnerStalled})})
		require.NoError(t, err)
		require.True(t, ans.OK && ans.Ack)
		b, err := rb.store.GetOutputBundle(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, domain.RunnerStalled, b.RunnerStatus)

		res, err := rb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, res.GateResult)
		require.Contains(t, res.GateReason, "run stalled")
		require.Contains(t, res.GateReason, "no output and no file changed for 2m0s")
		require.Equal(t, domain.PauseGateFailed, res.Pause.Reason)
	})
}
