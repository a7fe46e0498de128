package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/controlplane"
	"github.com/azolla/azolla/internal/store"
)

// RemoteActivities is the control plane's Temporal side: it completes, fails
// and heartbeats the Run activities waiting on remote jobs, addressed by
// workflow, run and activity id (never a task token, which changes with each
// attempt).
type RemoteActivities struct {
	Client    client.Client
	Namespace string
}

var _ controlplane.Activities = (*RemoteActivities)(nil)

// Heartbeat records a heartbeat of the activity. A cancelled activity, or
// one Temporal no longer knows, is controlplane.ErrActivityGone.
func (r *RemoteActivities) Heartbeat(ctx context.Context, ref store.ActivityRef) error {
	err := r.Client.RecordActivityHeartbeatByID(ctx, r.Namespace, ref.WorkflowID, ref.RunID, ref.ActivityID)
	return r.gone(ref, "heartbeat", err)
}

// Complete completes the activity with the job's RunResult. An activity
// that is gone is not an error: its next attempt, if any, finds the job
// SUCCEEDED and returns the stored bundle.
func (r *RemoteActivities) Complete(ctx context.Context, j *store.Job) error {
	if j.Activity == nil {
		return nil
	}
	var out controlplane.WorkResult
	if err := json.Unmarshal(j.Result, &out); err != nil {
		return fmt.Errorf("job %q: read result: %w", j.JobID, err)
	}
	res := activities.RunResult{WorkOrderID: j.WorkOrderID, RunnerStatus: out.RunnerStatus}
	err := r.Client.CompleteActivityByID(ctx, r.Namespace, j.Activity.WorkflowID, j.Activity.RunID,
		j.Activity.ActivityID, res, nil)
	if err = r.gone(*j.Activity, "complete", err); errors.Is(err, controlplane.ErrActivityGone) {
		return nil
	}
	return err
}

// Fail fails the activity for good with the job's error.
func (r *RemoteActivities) Fail(ctx context.Context, j *store.Job) error {
	if j.Activity == nil {
		return nil
	}
	err := r.Client.CompleteActivityByID(ctx, r.Namespace, j.Activity.WorkflowID, j.Activity.RunID,
		j.Activity.ActivityID, nil, activities.JobFailure(j))
	if err = r.gone(*j.Activity, "fail", err); errors.Is(err, controlplane.ErrActivityGone) {
		return nil
	}
	return err
}

// gone turns Temporal's "this activity no longer waits" answers into
// controlplane.ErrActivityGone.
func (r *RemoteActivities) gone(ref store.ActivityRef, what string, err error) error {
	if err == nil {
		return nil
	}
	var notFound *serviceerror.NotFound
	if temporal.IsCanceledError(err) || errors.As(err, &notFound) {
		return fmt.Errorf("%s activity %s of %s: %w (%v)", what, ref.ActivityID, ref.WorkflowID,
			controlplane.ErrActivityGone, err)
	}
	return fmt.Errorf("%s activity %s of %s: %w", what, ref.ActivityID, ref.WorkflowID, err)
}
