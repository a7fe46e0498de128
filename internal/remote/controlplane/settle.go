package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// afterCommitTimeout bounds the work done after a settle has committed
// (acknowledging the message, notifying the activity): it runs even when
// the worker has hung up, since the outcome is durable and only this
// follow-up remains, and the reaper repairs whatever it does not finish.
const afterCommitTimeout = 15 * time.Second

// Complete settles an attempt as succeeded: result, the job SUCCEEDED, the
// attempt closed and the lease released in one transaction, with
// Hooks.OnSucceed inside it. Only then is the attempt's message
// acknowledged (the message it was claimed from, as stored, whatever the
// request names) and the activity completed.
//
// A repeat for an attempt already settled as succeeded gets the same
// answer and writes nothing. If the activity cannot be reached, the answer
// is still ok: the outcome is durable and the reaper notifies settled,
// unnotified jobs.
//
// A complete that comes after the gate's verdict on the job's workorder
// (the Run activity is gone, see ErrRunGone) is refused with 409
// activity_cancelled: the verdict is looked up in the settle's own
// transaction, which rolls back, so neither the result nor an output
// bundle is written. The job stays as it was; once the lease lapses the
// reaper dead-letters it.
func (s *Service) Complete(ctx context.Context, req CompleteRequest) (CompleteResponse, error) {
	if err := validateRequest(schemas.WorkerCompleteRequest, req); err != nil {
		return CompleteResponse{}, err
	}
	if _, err := s.authorize(ctx, req.JobID, req.AttemptID, req.WorkerID, ""); err != nil {
		return CompleteResponse{}, err
	}
	result, err := s.cfg.Redact.JSON(req.Result)
	if err != nil {
		return CompleteResponse{}, errInvalid("complete: result: %v", err)
	}
	req.Result = result
	res, err := s.st.SettleJobAttempt(ctx, store.SettleJobAttemptParams{
		JobID:      req.JobID,
		AttemptID:  req.AttemptID,
		WorkerID:   req.WorkerID,
		LeaseToken: req.LeaseToken,
		Status:     domain.AttemptSucceeded,
		Result:     req.Result,
		Next:       store.JobNext{Status: domain.JobSucceeded},
		Now:        s.now(),
		OnSettle: func(q store.Querier, j *domain.Job) error {
			if err := runGone(ctx, q, j); err != nil {
				return err
			}
			return s.hooks.OnSucceed(ctx, q, j)
		},
	})
	if err != nil {
		return CompleteResponse{}, asError("complete", err)
	}
	if res.Repeat && res.Attempt.Status != domain.AttemptSucceeded {
		return CompleteResponse{}, errStale("complete: attempt %s was settled as %s", req.AttemptID, res.Attempt.Status)
	}
	after, cancel := context.WithTimeout(context.WithoutCancel(ctx), afterCommitTimeout)
	defer cancel()
	// A repeat acknowledges again: nothing is written, and it mends an
	// acknowledgement the first answer could not make.
	s.ack(after, res.Attempt)
	if !res.Repeat {
		s.notifyLogged(after, res.Job)
	}
	return CompleteResponse{OK: true, Ack: true}, nil
}

// Fail settles an attempt as failed. By policy, a retryable failure of an
// attempt before the job's last is requeued: a new enqueue, available
// after Config.Backoff; anything else is DEAD_LETTERED, with
// Hooks.OnDeadLetter in the transaction and the activity failed after it.
// The attempt's message is acknowledged after the commit either way. A
// requeue available at once gets its message now; one that waits for its
// backoff gets it from the reaper when it is due.
//
// A job whose Run activity is gone (ErrRunGone) is never requeued: its
// failure is recorded and it is dead-lettered.
//
// A repeat for an attempt already settled as failed gets the same answer
// and writes nothing.
func (s *Service) Fail(ctx context.Context, req FailRequest) (FailResponse, error) {
	if err := validateRequest(schemas.WorkerFailRequest, req); err != nil {
		return FailResponse{}, err
	}
	j, err := s.authorize(ctx, req.JobID, req.AttemptID, req.WorkerID, "")
	if err != nil {
		return FailResponse{}, err
	}
	gone := runGone(ctx, s.st, j)
	if gone != nil && !errors.Is(gone, ErrRunGone) {
		return FailResponse{}, asError("fail", gone)
	}
	now := s.now()
	next := store.JobNext{Status: domain.JobDeadLettered}
	if gone == nil && req.Error.Retryable && j.AttemptCount < j.MaxAttempts {
		next = store.JobNext{Status: domain.JobQueued, EnqueueID: newUUID(),
			AvailableAt: now.Add(s.cfg.Backoff(j.AttemptCount))}
	}
	jerr := req.Error
	jerr.Message, jerr.Stack = s.cfg.Redact.String(jerr.Message), s.cfg.Redact.String(jerr.Stack)
	if gone != nil {
		je := goneError(gone, fmt.Sprintf("attempt failed with %s: %s", jerr.Code, jerr.Message))
		je.Stack = jerr.Stack
		jerr = *je
	}
	res, err := s.st.SettleJobAttempt(ctx, store.SettleJobAttemptParams{
		JobID:      req.JobID,
		AttemptID:  req.AttemptID,
		WorkerID:   req.WorkerID,
		LeaseToken: req.LeaseToken,
		Status:     domain.AttemptFailed,
		Error:      &jerr,
		Next:       next,
		Now:        now,
		OnSettle: func(q store.Querier, j *domain.Job) error {
			if j.Status == domain.JobDeadLettered {
				return s.hooks.OnDeadLetter(ctx, q, j)
			}
			return nil
		},
	})
	if err != nil {
		return FailResponse{}, asError("fail", err)
	}
	if res.Repeat && res.Attempt.Status != domain.AttemptFailed {
		return FailResponse{}, errStale("fail: attempt %s was settled as %s", req.AttemptID, res.Attempt.Status)
	}
	// On a repeat the job may have moved on since: the answer is what the
	// attempt's own close decided.
	dlq := res.Job.Status == domain.JobDeadLettered
	if res.Repeat {
		dlq = res.Attempt.NextStatus == domain.JobDeadLettered
	}
	after, cancel := context.WithTimeout(context.WithoutCancel(ctx), afterCommitTimeout)
	defer cancel()
	s.ack(after, res.Attempt)
	if !res.Repeat {
		switch {
		case dlq:
			s.observer.JobDeadLettered()
			s.notifyLogged(after, res.Job)
		case !res.Job.AvailableAt.After(now):
			if err := s.publish(after, res.Job); err != nil {
				s.log.Warn("job requeued, its message left to the reaper", "job_id", res.Job.JobID, "error", err)
			}
		}
	}
	return FailResponse{OK: true, Ack: true, Requeued: !dlq, DLQ: dlq}, nil
}

// ack acknowledges the message an attempt was claimed from, once the
// database has committed the attempt's outcome. A failure is logged: the
// message stays pending, is delivered again after the transport's
// min-idle, and is acknowledged then as stale.
func (s *Service) ack(ctx context.Context, a *domain.JobAttempt) {
	if a == nil || a.MessageID == "" {
		return
	}
	if err := s.tr.Ack(ctx, a.Stream, a.MessageID); err != nil {
		s.log.Warn("acknowledge a settled attempt's message; acknowledged when delivered again",
			"job_id", a.JobID, "attempt_id", a.AttemptID, "stream", a.Stream, "message_id", a.MessageID, "error", err)
	}
}

// notify tells a settled job's activity its outcome and records that it
// did. An activity gone meanwhile has no one to tell: that is recorded
// too, so the reaper stops trying.
func (s *Service) notify(ctx context.Context, j *domain.Job) error {
	if j.Activity == nil || j.NotifiedAt != nil || !domain.JobSettled(j.Status) {
		return nil
	}
	var err error
	if j.Status == domain.JobSucceeded {
		err = s.acts.Complete(ctx, j)
	} else {
		err = s.acts.Fail(ctx, j)
	}
	if err != nil && !errors.Is(err, ErrActivityGone) {
		return fmt.Errorf("notify the activity of job %s: %w", j.JobID, err)
	}
	if err := s.st.MarkJobNotified(ctx, j.JobID, s.now()); err != nil {
		return fmt.Errorf("mark job %s notified: %w", j.JobID, err)
	}
	return nil
}

func (s *Service) notifyLogged(ctx context.Context, j *domain.Job) {
	if err := s.notify(ctx, j); err != nil {
		s.log.Warn("settled job not yet notified; the reaper retries", "job_id", j.JobID, "error", err)
	}
}
