package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
)

// RemoteCompleter is the control plane's Temporal side: it completes,
// fails and heartbeats the activities waiting on remote jobs (Run, or a
// candidate's RunCandidate), addressed by workflow, run and activity id
// (never a task token, which changes with each attempt).
type RemoteCompleter struct {
	Client    client.Client
	Namespace string
	// Outcomes say what a settled job's activity is told.
	Outcomes RemoteOutcomes
}

var _ controlplane.Activities = (*RemoteCompleter)(nil)

// Heartbeat records a heartbeat of the activity. A cancelled activity, or
// one Temporal no longer knows, is controlplane.ErrActivityGone.
func (r *RemoteCompleter) Heartbeat(ctx context.Context, ref domain.ActivityRef) error {
	err := r.Client.RecordActivityHeartbeatByID(ctx, r.Namespace, ref.WorkflowID, ref.RunID, ref.ActivityID)
	return r.gone(ref, "heartbeat", err)
}

// Complete completes the activity with the job's outcome: a Run with its
// RunResult, a RunCandidate with its CandidateResult. An activity that is
// gone is not an error: its next attempt, if any, finds the job SUCCEEDED
// and answers from the store.
func (r *RemoteCompleter) Complete(ctx context.Context, j *domain.Job) error {
	return r.settle(ctx, j, "complete")
}

// Fail tells the activity its job failed for good: a Run fails
// non-retryably with the job's error; a RunCandidate is completed with
// its candidate recorded FAILED, as a local candidate's failed run is.
func (r *RemoteCompleter) Fail(ctx context.Context, j *domain.Job) error {
	return r.settle(ctx, j, "fail")
}

func (r *RemoteCompleter) settle(ctx context.Context, j *domain.Job, what string) error {
	if j.Activity == nil {
		return nil
	}
	out, err := r.Outcomes.Outcome(ctx, j)
	if err != nil {
		return fmt.Errorf("job %q: %w", j.JobID, err)
	}
	err = r.Client.CompleteActivityByID(ctx, r.Namespace, j.Activity.WorkflowID, j.Activity.RunID,
		j.Activity.ActivityID, out.Result, out.Failure)
	if err = r.gone(*j.Activity, what, err); errors.Is(err, controlplane.ErrActivityGone) {
		return nil
	}
	return err
}

// gone turns Temporal's "this activity no longer waits" answers into
// controlplane.ErrActivityGone.
func (r *RemoteCompleter) gone(ref domain.ActivityRef, what string, err error) error {
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
