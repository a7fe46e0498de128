package controlplane

import (
	"context"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/store"
)

// CodeRunGone is the error code of a job dead-lettered because the Run
// activity it was enqueued for is gone for good.
const CodeRunGone = "RUN_ACTIVITY_GONE"

// ErrRunGone: the Run activity a job was enqueued for is gone for good,
// because the job's workorder already has the gate's verdict (its run
// record). Nothing the job produces can count any more: the control plane
// refuses to start, renew or complete its attempts, never requeues it, and
// the reaper dead-letters it (docs/protocol/control-plane.md#when-the-run-step-is-gone).
//
// The verdict in the store is the signal, not Temporal's "activity not
// found": Temporal answers that too while a Run activity waits out the
// backoff between two of its attempts, and the next attempt comes back for
// the same job. A verdict is written once and never taken back, so reading
// it is safe in or out of a job's transaction.
var ErrRunGone = errors.New("run activity gone")

// runGoneError says which verdict made a job's Run activity gone, or
// what settled a candidate job's candidate.
type runGoneError struct {
	workOrderID string
	verdict     string
	// candidate is set for a candidate job gone because its candidate
	// is settled; verdict is then the candidate's status.
	candidate int
}

func (e *runGoneError) Error() string {
	if e.candidate > 0 {
		return fmt.Sprintf("candidate activity gone: candidate %d of workorder %s is settled already (%s)",
			e.candidate, e.workOrderID, e.verdict)
	}
	return fmt.Sprintf("run activity gone: workorder %s already has its gate's verdict (%s)", e.workOrderID, e.verdict)
}

// Is makes errors.Is(err, ErrRunGone) true.
func (e *runGoneError) Is(target error) bool { return target == ErrRunGone }

// verdicts is what runGone reads: a workorder's run record and its
// candidates, in or out of a job's transaction.
type verdicts interface {
	store.RunQuerier
	store.CandidateQuerier
}

// runGone returns an error wrapping ErrRunGone when j's workorder has been
// judged by its gate, nil while it has not (or j names no workorder). A
// candidate job is gone too once its candidate's record is settled:
// recorded CANCELLED when another candidate won first or the budget ran
// out (SelectCandidate records the candidates still running so), DONE or
// FAILED by an earlier outcome of the job. The local path's rule is the
// same: a candidate recorded as finished is not run again, and a record
// once settled stays settled.
func runGone(ctx context.Context, q verdicts, j *domain.Job) error {
	if j.WorkOrderID == "" {
		return nil
	}
	if j.Candidate > 0 {
		c, err := q.GetCandidate(ctx, j.WorkOrderID, j.Candidate)
		switch {
		case errors.Is(err, domain.ErrNotFound):
		case err != nil:
			return fmt.Errorf("look up candidate %s: %w", domain.CandidateKey(j.WorkOrderID, j.Candidate), err)
		case c.Status != domain.CandidateRunning:
			return &runGoneError{workOrderID: j.WorkOrderID, verdict: c.Status, candidate: j.Candidate}
		}
	}
	rr, err := q.GetRunRecord(ctx, j.WorkOrderID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("look up the gate's verdict on workorder %s: %w", j.WorkOrderID, err)
	}
	return &runGoneError{workOrderID: j.WorkOrderID, verdict: rr.GateResult}
}

// goneError is the job error of a job dead-lettered because gone (from
// runGone) says its Run activity is gone; how says what became of the
// attempt that was running, if any.
func goneError(gone error, how string) *domain.JobError {
	msg := gone.Error() + "; dead-lettered instead of run again"
	if how != "" {
		msg = how + "; " + msg
	}
	return &domain.JobError{Code: CodeRunGone, Message: msg}
}

// reaperMessageID stands for the message of the attempt through which the
// reaper dead-letters a QUEUED job that has none (a requeue whose message
// was never written). The attempt was claimed from no message.
const reaperMessageID = "none"

// deadLetterQueued dead-letters a QUEUED, available job whose Run activity
// is gone. The store settles jobs only through attempts, so the reaper
// takes one itself, under its own worker id and a lease of its own, with
// no OnStart hook (nothing runs, nothing is claimed), and closes it at
// once as FAILED with the job DEAD_LETTERED. Both writes are conditional:
// a job a worker claimed meanwhile, or that moved to another enqueue, is
// left to its attempt (ErrJobStale); and if this process dies between the
// two, the reaper's own lease lapses and the expiry dead-letters the job.
func (s *Service) deadLetterQueued(ctx context.Context, j *domain.Job, gone error) (*domain.Job, error) {
	msg := j.MessageID
	if msg == "" {
		msg = reaperMessageID
	}
	worker := reaperWorkerID(s.cfg.InstanceID)
	attemptID, token := newUUID(), newLeaseToken()
	now := s.now()
	if _, err := s.st.StartJobAttempt(ctx, store.StartJobAttemptParams{JobID: j.JobID, EnqueueID: j.EnqueueID,
		Stream: j.Stream, MessageID: msg, WorkerID: worker, AttemptID: attemptID, LeaseToken: token,
		TTL: s.cfg.LeaseTTL, Now: now}); err != nil {
		return nil, fmt.Errorf("take the job to dead-letter it: %w", err)
	}
	res, err := s.st.SettleJobAttempt(ctx, store.SettleJobAttemptParams{JobID: j.JobID, AttemptID: attemptID,
		WorkerID: worker, LeaseToken: token, Status: domain.AttemptFailed,
		Error: goneError(gone, "closed by the reaper before any worker ran it"),
		Next:  store.JobNext{Status: domain.JobDeadLettered}, Now: now,
		OnSettle: func(q store.Querier, j *domain.Job) error { return s.hooks.OnDeadLetter(ctx, q, j) }})
	if err != nil {
		return nil, fmt.Errorf("dead-letter the job: %w", err)
	}
	if msg != reaperMessageID {
		s.ack(ctx, res.Attempt)
	}
	return res.Job, nil
}

// reaperWorkerID names the reaper as the worker of the attempts it takes
// itself, kept within the schemas' bound on worker ids.
func reaperWorkerID(instance string) string {
	return proc.CutAtRune("control-plane-reaper/"+instance, maxWorkerIDLen)
}

// maxWorkerIDLen is the schemas' bound on a worker id.
const maxWorkerIDLen = 256
