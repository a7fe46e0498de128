package controlplane

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// Enqueue stores a QUEUED job, available now, then writes its message and
// records the message id on the job.
//
// The row comes first: the database is the truth, and a message for a job
// that does not exist would be skipped anyway. If the message cannot be
// written (the transport is down, or this process dies in between), the
// job is still returned and the reaper writes the message, for the same
// enqueue, once DefaultMessageGrace has passed.
//
// Enqueue is idempotent by work order, and by candidate: for a work order
// (or candidate of one) that already has a job, that job is returned
// instead of a new one. If it is not settled
// and p.Activity is set, the activity is recorded on it (a retried Run
// activity keeps its ids, but a new workflow run has a new run id). A
// settled job is returned as it is: its outcome is the caller's answer.
func (s *Service) Enqueue(ctx context.Context, p EnqueueParams) (*domain.Job, error) {
	if p.JobType == "" {
		return nil, errInvalid("enqueue: job type is required")
	}
	if err := ValidateStream(p.Stream); err != nil {
		return nil, errInvalid("enqueue: %v", err)
	}
	if len(p.Payload) == 0 {
		return nil, errInvalid("enqueue: payload is required")
	}
	if err := checkCandidate(p); err != nil {
		return nil, err
	}
	maxAttempts := p.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = s.cfg.MaxAttempts
	}
	now := s.now()
	j := &domain.Job{
		JobID:       newUUID(),
		JobType:     p.JobType,
		Stream:      p.Stream,
		Status:      domain.JobQueued,
		Payload:     p.Payload,
		MaxAttempts: maxAttempts,
		WorkOrderID: p.WorkOrderID,
		Candidate:   p.Candidate,
		EnqueueID:   newUUID(),
		AvailableAt: now,
		Activity:    p.Activity,
		RunSlots:    p.RunSlots,
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	stored, created, err := s.st.CreateJob(ctx, j)
	if err != nil {
		return nil, fmt.Errorf("enqueue %s job for work order %q: %w", p.JobType, p.WorkOrderID, err)
	}
	if !created {
		if p.Activity != nil && !domain.JobSettled(stored.Status) && !sameActivity(stored.Activity, p.Activity) {
			stored, err = s.st.SetJobActivity(ctx, stored.JobID, *p.Activity, now)
			if err != nil {
				return nil, fmt.Errorf("enqueue: record the activity of job %s: %w", j.JobID, err)
			}
		}
		return stored, nil
	}
	s.keepQueuedSlots(ctx, stored, now)
	if err := s.publish(ctx, stored); err != nil {
		s.log.Warn("job stored, its message left to the reaper", "job_id", stored.JobID,
			"enqueue_id", stored.EnqueueID, "error", err)
	}
	return stored, nil
}

// publish writes the message of j's current enqueue and records its id on
// j. A job that moved on meanwhile keeps its own message id; the message
// written is then stale and skipped when claimed.
func (s *Service) publish(ctx context.Context, j *domain.Job) error {
	id, err := s.tr.Enqueue(ctx, j.Stream, j.JobID, j.EnqueueID)
	if err != nil {
		return fmt.Errorf("write the message of job %s: %w", j.JobID, err)
	}
	changed, err := s.st.SetJobMessage(ctx, store.SetJobMessageParams{JobID: j.JobID, EnqueueID: j.EnqueueID,
		MessageID: id, Now: s.now()})
	if err != nil {
		return fmt.Errorf("record message %s of job %s: %w", id, j.JobID, err)
	}
	if changed {
		j.MessageID = id
	}
	return nil
}

func sameActivity(a, b *domain.ActivityRef) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// checkCandidate refuses a candidate job whose payload is not a valid
// CandidatePayload of that very candidate of that workorder.
func checkCandidate(p EnqueueParams) error {
	if p.Candidate == 0 {
		return nil
	}
	if p.WorkOrderID == "" {
		return errInvalid("enqueue: candidate %d names no work order", p.Candidate)
	}
	cp, err := DecodeJobPayload(p.Payload)
	if err != nil {
		return errInvalid("enqueue: candidate %s: %v", domain.CandidateKey(p.WorkOrderID, p.Candidate), err)
	}
	if err := cp.Validate(); err != nil {
		return errInvalid("enqueue: candidate %s: %v", domain.CandidateKey(p.WorkOrderID, p.Candidate), err)
	}
	if cp.Candidate != p.Candidate || cp.WorkOrder.WorkOrderID != p.WorkOrderID {
		return errInvalid("enqueue: the payload is candidate %s, not %s",
			domain.CandidateKey(cp.WorkOrder.WorkOrderID, cp.Candidate), domain.CandidateKey(p.WorkOrderID, p.Candidate))
	}
	return nil
}

// Job returns the job of candidate k of a work order, or of the work
// order itself for k 0, or an error wrapping domain.ErrNotFound when it
// has none yet.
func (s *Service) Job(ctx context.Context, workOrderID string, k int) (*domain.Job, error) {
	if k == 0 {
		return s.st.GetJobByWorkOrder(ctx, workOrderID)
	}
	j, err := s.st.GetCandidateJob(ctx, workOrderID, k)
	if err != nil {
		return nil, fmt.Errorf("candidate job of %s: %w", domain.CandidateKey(workOrderID, k), err)
	}
	return j, nil
}
