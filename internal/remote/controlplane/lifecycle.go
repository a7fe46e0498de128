package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/store"
)

// LifecycleHooks are the lifecycle's writes in the control plane's job
// transactions. The WORKORDER claim (a candidate job's CANDIDATE claim) is
// held by the control plane on the remote worker's behalf, with the job's
// lease: taken when an attempt starts, renewed with each heartbeat, fenced
// and released when the job completes. So the claim table tells the same
// story for remote runs as for local ones, and `azolla verify` holds
// unchanged. The output bundle and the candidate record they write are
// the ones a local run writes (package activities).
type LifecycleHooks struct {
	NopHooks
	// Observer, when set, counts the workorders a remote worker executed
	// and what its candidates spent. It is told inside the job's
	// transaction, so a commit that then fails is counted all the same:
	// rare, and a counter may overcount.
	Observer RunObserver
}

var _ Hooks = LifecycleHooks{}

// RunObserver is told what the remote runs wrote, for metrics, as the
// lifecycle's observer is told of local runs. It must not block.
type RunObserver interface {
	// WorkOrderExecuted: a workorder was newly marked EXECUTED, by a
	// runner (RunnerRemote here).
	WorkOrderExecuted(runner string)
	// RunSpent: a run finished whose bundle or candidate carries meta.
	RunSpent(meta domain.BundleMetadata)
}

// RunnerRemote is the runner a remote worker's run counts as.
const RunnerRemote = "remote"

// remoteOwner is the WORKORDER claim's owner for one attempt of a job.
func remoteOwner(j *domain.Job) string {
	return fmt.Sprintf("remote:%s/%d", j.JobID, j.AttemptCount)
}

// OnStart takes the workorder's claim for the attempt, as long as its lease.
func (LifecycleHooks) OnStart(ctx context.Context, q store.Querier, s *store.StartedJobAttempt) error {
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
func (LifecycleHooks) OnRenew(ctx context.Context, q store.Querier, j *domain.Job, l *domain.JobLease) error {
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
func (h LifecycleHooks) OnSucceed(ctx context.Context, q store.Querier, j *domain.Job) error {
	if j.WorkOrderID == "" {
		return nil
	}
	if j.Candidate > 0 {
		return h.succeedCandidate(ctx, q, j)
	}
	var out WorkResult
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
func (LifecycleHooks) OnDeadLetter(ctx context.Context, q store.Querier, j *domain.Job) error {
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

// JobFailed says how a remote job failed for good: what the Run waiting
// on it fails with, and a candidate's record says.
func JobFailed(j *domain.Job) string {
	msg := fmt.Sprintf("remote job %s %s after %d attempt(s)", j.JobID, j.Status, j.AttemptCount)
	if j.Error != nil {
		msg += ": " + j.Error.Code + ": " + oneLine(j.Error.Message)
	}
	return msg
}

// The hooks of candidate jobs: the CANDIDATE claim is held on the remote
// worker's behalf with the job's lease, as the WORKORDER claim is for a
// workorder's job, and the candidate's record is the job's outcome.

// candidateClaim names the CANDIDATE claim of j's attempt.
func candidateClaim(j *domain.Job) (resourceID, owner string) {
	return domain.CandidateResource(j.WorkOrderID, j.Candidate), remoteOwner(j)
}

// startCandidate takes the candidate's claim for the attempt.
func startCandidate(ctx context.Context, q store.Querier, s *store.StartedJobAttempt) error {
	j := s.Job
	id, owner := candidateClaim(j)
	_, ok, err := q.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: domain.ResourceCandidate,
		ResourceID: id, OwnerID: owner, TTL: s.Lease.LeaseExpiresAt.Sub(s.Lease.HeartbeatAt), Now: s.Lease.HeartbeatAt})
	if err != nil {
		return fmt.Errorf("claim candidate %s for job %s: %w", id, j.JobID, err)
	}
	if !ok {
		return fmt.Errorf("claim candidate %s for job %s: %w", id, j.JobID, errWorkOrderClaimed)
	}
	return nil
}

// renewCandidate renews the candidate's claim with the lease.
func renewCandidate(ctx context.Context, q store.Querier, j *domain.Job, l *domain.JobLease) error {
	id, owner := candidateClaim(j)
	c, err := q.GetClaim(ctx, domain.ResourceCandidate, id)
	if err != nil {
		return fmt.Errorf("renew claim on candidate %s: %w", id, err)
	}
	_, err = q.RenewClaim(ctx, store.RenewClaimParams{ResourceType: domain.ResourceCandidate, ResourceID: id,
		OwnerID: owner, ClaimVersion: c.ClaimVersion, TTL: l.LeaseExpiresAt.Sub(l.HeartbeatAt), Now: l.HeartbeatAt})
	return err
}

// succeedCandidate records the candidate from the job's result, fenced by
// the attempt's claim, then releases the claim: the local path's writes,
// in the job's transaction. The control plane has checked, in this
// transaction, that the record is still RUNNING (ErrRunGone otherwise);
// once the winner is chosen, or the record was settled since that check,
// the store refuses the write, which is the same refusal.
func (h LifecycleHooks) succeedCandidate(ctx context.Context, q store.Querier, j *domain.Job) error {
	var out CandidateWorkResult
	if err := json.Unmarshal(j.Result, &out); err != nil {
		return fmt.Errorf("%w: job %s: result is not a candidate's result: %v", domain.ErrInvalid, j.JobID, err)
	}
	if err := out.Validate(j.Candidate); err != nil {
		return fmt.Errorf("%w: job %s: %v", domain.ErrInvalid, j.JobID, err)
	}
	id, owner := candidateClaim(j)
	c, err := q.GetClaim(ctx, domain.ResourceCandidate, id)
	if err != nil {
		return fmt.Errorf("fence candidate %s: %w", id, err)
	}
	f := store.Fence{ResourceType: domain.ResourceCandidate, ResourceID: id, OwnerID: owner, ClaimVersion: c.ClaimVersion}
	if err := q.CheckFence(ctx, f); err != nil {
		return err
	}
	rec := candidateRecord(j, out)
	if _, err := q.PutCandidate(ctx, rec); domain.CandidateSettled(err) {
		return fmt.Errorf("%w: %w", ErrRunGone, err)
	} else if err != nil {
		return err
	}
	if h.Observer != nil {
		// Counted once per candidate that ran, as the local path counts it.
		h.Observer.RunSpent(domain.BundleMetadata{Generator: rec.Generator, RunReport: rec.Report})
	}
	_, err = q.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceCandidate, ResourceID: id,
		OwnerID: owner, ClaimVersion: f.ClaimVersion, Now: j.UpdatedAt})
	return err
}

// candidateRecord is the DONE record of candidate job j from its result,
// as a local candidate's run is recorded. Its size, hash and commands
// passed are computed here from the patch and the gate results, not taken
// from the worker.
func candidateRecord(j *domain.Job, out CandidateWorkResult) *domain.Candidate {
	now, finished := j.UpdatedAt, out.FinishedAt.UTC()
	rec := &domain.Candidate{WorkOrderID: j.WorkOrderID, Attempt: j.Candidate, Status: domain.CandidateDone,
		Generator: oneLine(out.Generator), RunnerStatus: out.RunnerStatus, Patch: out.Patch, Report: out.Report,
		GateResults: []domain.CandidateGateResult{}, FinishedAt: &finished, CreatedAt: now, UpdatedAt: now}
	lines := 0
	if out.Patch != "" {
		rec.PatchSHA256, lines = domain.PatchSHA256(out.Patch), patch.DiffLines(out.Patch)
	}
	rec.DiffLines = &lines
	for _, g := range out.Gate {
		rec.GateResults = append(rec.GateResults, domain.CandidateGateResult{Command: g.Command, Passed: g.Passed,
			Detail: oneLine(g.Detail)})
		if g.Passed {
			rec.CommandsPassed++
		}
	}
	return rec
}

// deadLetterCandidate records a candidate whose job was dead-lettered as
// FAILED, with the job's error, unless its record is settled already
// (cancelled meanwhile, or chosen among), and releases the attempt's
// claim if it still holds it.
func deadLetterCandidate(ctx context.Context, q store.Querier, j *domain.Job) error {
	// RunCandidate recorded it RUNNING before enqueuing its job; a record
	// gone missing has nothing to mark.
	rec, err := q.GetCandidate(ctx, j.WorkOrderID, j.Candidate)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	if err == nil && rec.Status == domain.CandidateRunning {
		rec.Status, rec.Why, rec.UpdatedAt = domain.CandidateFailed, JobFailed(j), j.UpdatedAt
		if _, err := q.PutCandidate(ctx, rec); err != nil && !domain.CandidateSettled(err) {
			return err
		}
	}
	id, owner := candidateClaim(j)
	c, err := q.GetClaim(ctx, domain.ResourceCandidate, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.OwnerID != owner || c.ReleasedAt != nil {
		return nil
	}
	_, err = q.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceCandidate, ResourceID: id,
		OwnerID: owner, ClaimVersion: c.ClaimVersion, Now: j.UpdatedAt})
	return err
}
