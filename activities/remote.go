package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store"
)

// Enqueuer hands a workorder, or a candidate of one, to remote workers:
// the control plane's Enqueue, idempotent by workorder and candidate.
type Enqueuer interface {
	Enqueue(ctx context.Context, p controlplane.EnqueueParams) (*domain.Job, error)
	// CandidateJob returns the job of candidate k of a workorder, or an
	// error wrapping store.ErrNotFound before it is enqueued.
	CandidateJob(ctx context.Context, workOrderID string, k int) (*domain.Job, error)
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

// runRemote is Run for a remote diazotroph: it enqueues the workorder as a
// job, once, and leaves the activity pending. The control plane completes
// it by id when a remote worker completes the job; it has then written the
// output bundle and EXECUTED in the job's own transaction. A retried
// attempt finds the same job: a settled one answers at once, a waiting or
// running one is waited for again.
func (a *Lifecycle) runRemote(ctx context.Context, w *domain.WorkOrder) (RunResult, error) {
	req, err := a.request(ctx, w)
	if err != nil {
		return RunResult{}, permanent(fmt.Errorf("run workorder %q: %w", w.WorkOrderID, err))
	}
	payload, err := json.Marshal(controlplane.NewWorkPayload(req))
	if err != nil {
		return RunResult{}, permanent(fmt.Errorf("run workorder %q: %w", w.WorkOrderID, err))
	}
	p := controlplane.EnqueueParams{JobType: w.DiazotrophType, Stream: controlplane.StreamFor(w.DiazotrophType),
		Payload: payload, WorkOrderID: w.WorkOrderID, MaxAttempts: a.Remote.MaxAttempts}
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		p.Activity = &domain.ActivityRef{WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
			ActivityID: info.ActivityID}
	}
	j, err := a.Remote.Enqueuer.Enqueue(ctx, p)
	if err != nil {
		return RunResult{}, fmt.Errorf("run workorder %q remotely: %w", w.WorkOrderID, err)
	}
	log := logger(ctx, w.ObjectiveID, w.WorkOrderID)
	switch j.Status {
	case domain.JobSucceeded:
		return a.executed(ctx, w.WorkOrderID)
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
	return temporal.NewNonRetryableApplicationError(jobFailed(j), ErrTypeDeadLettered, nil)
}

// jobFailed says how a remote job failed for good.
func jobFailed(j *domain.Job) string {
	msg := fmt.Sprintf("remote job %s %s after %d attempt(s)", j.JobID, j.Status, j.AttemptCount)
	if j.Error != nil {
		msg += ": " + j.Error.Code + ": " + oneLine(j.Error.Message)
	}
	return msg
}

// RemoteHooks are the lifecycle's writes in the control plane's job
// transactions. The WORKORDER claim (a candidate job's CANDIDATE claim) is
// held by the control plane on the remote worker's behalf, with the job's
// lease: taken when an attempt starts, renewed with each heartbeat, fenced
// and released when the job completes. So the claim table tells the same
// story for remote runs as for local ones, and `azolla verify` holds
// unchanged.
type RemoteHooks struct {
	controlplane.NopHooks
	// Observer, when set, counts the workorders a remote worker executed
	// and what its candidates spent. It is told inside the job's
	// transaction, so a commit that then fails is counted all the same:
	// rare, and a counter may overcount.
	Observer Observer
	// EarlyStopMaxDiffLines is patch.early_stop_max_diff_lines: whether a
	// remote candidate that passed may stop the others (Outcome).
	EarlyStopMaxDiffLines int
}

var _ controlplane.Hooks = RemoteHooks{}

// remoteOwner is the WORKORDER claim's owner for one attempt of a job.
func remoteOwner(j *domain.Job) string {
	return fmt.Sprintf("remote:%s/%d", j.JobID, j.AttemptCount)
}

// OnStart takes the workorder's claim for the attempt, as long as its lease.
func (RemoteHooks) OnStart(ctx context.Context, q store.Querier, s *store.StartedJobAttempt) error {
	j := s.Job
	if j.WorkOrderID == "" {
		return nil
	}
	if j.Candidate > 0 {
		return startCandidate(ctx, q, s)
	}
	_, ok, err := q.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: domain.ResourceWorkOrder,
		ResourceID: j.WorkOrderID, OwnerID: remoteOwner(j), TTL: s.Lease.LeaseExpiresAt.Sub(s.Lease.HeartbeatAt),
		Now: s.Lease.HeartbeatAt})
	if err != nil {
		return fmt.Errorf("claim workorder %s for job %s: %w", j.WorkOrderID, j.JobID, err)
	}
	if !ok {
		return fmt.Errorf("claim workorder %s for job %s: %w", j.WorkOrderID, j.JobID, errWorkOrderClaimed)
	}
	return nil
}

// errWorkOrderClaimed: another owner's claim on the workorder is live.
var errWorkOrderClaimed = errors.New("held by another owner")

// OnRenew renews the workorder's claim with the lease. The renewal is the
// store's compare-and-swap on (owner, version): a claim another owner took
// is a *store.LeaseLostError.
func (RemoteHooks) OnRenew(ctx context.Context, q store.Querier, j *domain.Job, l *domain.JobLease) error {
	if j.WorkOrderID == "" {
		return nil
	}
	if j.Candidate > 0 {
		return renewCandidate(ctx, q, j, l)
	}
	c, err := q.GetClaim(ctx, domain.ResourceWorkOrder, j.WorkOrderID)
	if err != nil {
		return fmt.Errorf("renew claim on workorder %s: %w", j.WorkOrderID, err)
	}
	_, err = q.RenewClaim(ctx, store.RenewClaimParams{ResourceType: domain.ResourceWorkOrder, ResourceID: j.WorkOrderID,
		OwnerID: remoteOwner(j), ClaimVersion: c.ClaimVersion, TTL: l.LeaseExpiresAt.Sub(l.HeartbeatAt),
		Now: l.HeartbeatAt})
	return err
}

// OnSucceed writes the workorder's output bundle from the job's result and
// marks it EXECUTED, fenced by the attempt's claim, then releases the
// claim: the same writes as a local Run, in the job's transaction.
func (h RemoteHooks) OnSucceed(ctx context.Context, q store.Querier, j *domain.Job) error {
	if j.WorkOrderID == "" {
		return nil
	}
	if j.Candidate > 0 {
		return h.succeedCandidate(ctx, q, j)
	}
	var out controlplane.WorkResult
	if err := json.Unmarshal(j.Result, &out); err != nil {
		return fmt.Errorf("%w: job %s: result is not a work result: %v", domain.ErrInvalid, j.JobID, err)
	}
	if err := out.Validate(); err != nil {
		return fmt.Errorf("%w: job %s: %v", domain.ErrInvalid, j.JobID, err)
	}
	c, err := q.GetClaim(ctx, domain.ResourceWorkOrder, j.WorkOrderID)
	if err != nil {
		return fmt.Errorf("fence workorder %s: %w", j.WorkOrderID, err)
	}
	f := store.Fence{ResourceType: domain.ResourceWorkOrder, ResourceID: j.WorkOrderID, OwnerID: remoteOwner(j),
		ClaimVersion: c.ClaimVersion}
	if err := q.CheckFence(ctx, f); err != nil {
		return err
	}
	now := j.UpdatedAt
	if _, _, err := q.CreateOutputBundle(ctx, out.Bundle(j.WorkOrderID, now)); err != nil {
		return err
	}
	_, changed, err := q.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: j.WorkOrderID,
		Now: now})
	if err != nil {
		return err
	}
	if changed && h.Observer != nil {
		h.Observer.WorkOrderExecuted(RunnerRemote)
	}
	_, err = q.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceWorkOrder,
		ResourceID: j.WorkOrderID, OwnerID: f.OwnerID, ClaimVersion: f.ClaimVersion, Now: now})
	return err
}

// OnDeadLetter releases the attempt's claim, if it still holds it, so the
// gate can judge the failure without waiting for the lease to lapse.
func (RemoteHooks) OnDeadLetter(ctx context.Context, q store.Querier, j *domain.Job) error {
	if j.WorkOrderID == "" {
		return nil
	}
	if j.Candidate > 0 {
		return deadLetterCandidate(ctx, q, j)
	}
	c, err := q.GetClaim(ctx, domain.ResourceWorkOrder, j.WorkOrderID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.OwnerID != remoteOwner(j) || c.ReleasedAt != nil {
		return nil
	}
	_, err = q.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceWorkOrder,
		ResourceID: j.WorkOrderID, OwnerID: c.OwnerID, ClaimVersion: c.ClaimVersion, Now: j.UpdatedAt})
	return err
}
