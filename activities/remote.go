package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
)

// Enqueuer hands a workorder, or a candidate of one, to remote workers:
// the control plane's Enqueue, idempotent by workorder and candidate.
type Enqueuer interface {
	Enqueue(ctx context.Context, p controlplane.EnqueueParams) (*domain.Job, error)
	// Job returns the job of candidate k of a workorder (k 0: of the
	// workorder itself), or an error wrapping domain.ErrNotFound before
	// it is enqueued.
	Job(ctx context.Context, workOrderID string, k int) (*domain.Job, error)
}

// Remote routes diazotroph types to remote workers through the control
// plane (docs/protocol/control-plane.md).
type Remote struct {
	Enqueuer Enqueuer
	// Diazotrophs lists the diazotroph types that run remotely.
	Diazotrophs []string
	// MaxAttempts is each job's number of attempts (0: the control
	// plane's default).
	MaxAttempts int
}

// ErrTypeDeadLettered is the failure type of a Run whose remote job was
// dead-lettered or failed for good: no retry of the activity can help.
const ErrTypeDeadLettered = "RemoteJobDeadLettered"

// routes reports whether workorders of diazotrophType run remotely.
func (r *Remote) routes(diazotrophType string) bool {
	return r != nil && r.Enqueuer != nil && slices.Contains(r.Diazotrophs, diazotrophType)
}

// enqueue hands p to the control plane, once, with the job's attempts
// and, inside an activity, the activity to complete by id when the job is
// settled.
func (r *Remote) enqueue(ctx context.Context, p controlplane.EnqueueParams) (*domain.Job, error) {
	p.MaxAttempts = r.MaxAttempts
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		p.Activity = &domain.ActivityRef{WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
			ActivityID: info.ActivityID}
	}
	return r.Enqueuer.Enqueue(ctx, p)
}

// holdsSlots reports whether candidate k's job (k 0: the workorder's
// own) is enqueued, unsettled, and holds run slots: its run then takes
// none of its own.
func (r *Remote) holdsSlots(ctx context.Context, workOrderID string, k int) bool {
	j, err := r.Enqueuer.Job(ctx, workOrderID, k)
	return err == nil && !domain.JobSettled(j.Status) && len(j.RunSlots) > 0
}

// runRemote is Run for a remote diazotroph: it enqueues the workorder as a
// job, once, handing it the run's slots (hold), and leaves the activity
// pending. The control plane completes it by id when a remote worker
// completes the job; it has then written the output bundle and EXECUTED in
// the job's own transaction. A retried attempt finds the same job: a
// settled one answers at once, a waiting or running one is waited for
// again.
func (a *Steps) runRemote(ctx context.Context, w *domain.WorkOrder, hold *slotHold) (RunResult, error) {
	req, err := a.roundRequest(ctx, w)
	if err != nil {
		return RunResult{}, permanent(fmt.Errorf("run workorder %q: %w", w.WorkOrderID, err))
	}
	payload, err := json.Marshal(controlplane.NewWorkPayload(req))
	if err != nil {
		return RunResult{}, permanent(fmt.Errorf("run workorder %q: %w", w.WorkOrderID, err))
	}
	j, err := a.Remote.enqueue(ctx, controlplane.EnqueueParams{JobType: w.DiazotrophType,
		Stream: controlplane.StreamFor(w.DiazotrophType), Payload: payload, WorkOrderID: w.WorkOrderID,
		RunSlots: hold.handOver()})
	if err != nil {
		return RunResult{}, fmt.Errorf("run workorder %q remotely: %w", w.WorkOrderID, err)
	}
	hold.keptBy(j)
	log := logger(ctx, w.ObjectiveID, w.WorkOrderID)
	switch j.Status {
	case domain.JobSucceeded:
		return executed(ctx, a.Store, w.WorkOrderID)
	case domain.JobFailed, domain.JobDeadLettered:
		return RunResult{}, JobFailure(j)
	}
	if !activity.IsActivity(ctx) {
		return RunResult{}, fmt.Errorf("run workorder %q: remote job %s is %s; only an activity waits for it",
			w.WorkOrderID, j.JobID, j.Status)
	}
	log.Info("workorder handed to remote workers", "job_id", j.JobID, "stream", j.Stream, "job_status", j.Status)
	return RunResult{}, activity.ErrResultPending
}

// JobFailure is the non-retryable error of a Run whose remote job failed
// for good; the gate records its message as the FAIL.
func JobFailure(j *domain.Job) error {
	return temporal.NewNonRetryableApplicationError(controlplane.JobFailed(j), ErrTypeDeadLettered, nil)
}
