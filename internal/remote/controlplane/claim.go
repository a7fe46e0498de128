package controlplane

import (
	"context"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// maxSkipsPerClaim bounds the stale messages one claim acknowledges and
// skips before it answers "nothing": a stream full of stale messages is
// drained over several claims instead of holding one request.
const maxSkipsPerClaim = 100

// errSkipped: the message named no job a claim can start; it was dealt
// with and the claim reads the next one.
var errSkipped = errors.New("stale message skipped")

// Claim long-polls req.Streams, in priority order, for up to
// req.MaxWaitMS (capped by Config.MaxWait) and starts an attempt on the
// first message whose job can start one. A message whose job is unknown,
// settled, of another enqueue or not yet available is acknowledged and
// skipped: the database decides, the message only says where to look. See
// skip for the one exception.
//
// If the attempt is started but the answer never reaches the worker, no
// one heartbeats it: the reaper expires it after the lease and requeues.
func (s *Service) Claim(ctx context.Context, req ClaimRequest) (ClaimResponse, error) {
	if err := validateRequest(schemas.WorkerClaimRequest, req); err != nil {
		return ClaimResponse{}, err
	}
	wait := min(time.Duration(req.MaxWaitMS)*time.Millisecond, s.cfg.MaxWait)
	// The long-poll runs on the wall clock whatever Config.Now says: it
	// is the worker's real wait, not a lease time.
	deadline := time.Now().Add(wait)
	for range maxSkipsPerClaim {
		m, err := s.tr.Receive(ctx, s.cfg.InstanceID, req.Streams, max(time.Until(deadline), 0))
		if err != nil {
			return ClaimResponse{}, asError("claim: receive a message", err)
		}
		if m == nil {
			return ClaimResponse{Claimed: false}, nil
		}
		resp, err := s.start(ctx, req.WorkerID, m)
		if !errors.Is(err, errSkipped) {
			return resp, err
		}
	}
	return ClaimResponse{Claimed: false}, nil
}

// start turns one message into an attempt of its job, or skips it.
func (s *Service) start(ctx context.Context, workerID string, m *Message) (ClaimResponse, error) {
	p := store.StartJobAttemptParams{
		JobID:      m.JobID,
		EnqueueID:  m.EnqueueID,
		Stream:     m.Stream,
		MessageID:  m.MessageID,
		WorkerID:   workerID,
		AttemptID:  newUUID(),
		LeaseToken: newLeaseToken(),
		TTL:        s.cfg.LeaseTTL,
		Now:        s.now(),
		OnStart: func(q store.Querier, st *store.StartedJobAttempt) error {
			if err := runGone(ctx, q, st.Job); err != nil {
				return err
			}
			return s.hooks.OnStart(ctx, q, st)
		},
	}
	st, err := s.st.StartJobAttempt(ctx, p)
	// A job whose Run activity is gone is not started: the attempt rolls
	// back, the message goes, and the reaper dead-letters the job.
	if errors.Is(err, domain.ErrJobStale) || errors.Is(err, domain.ErrNotFound) || errors.Is(err, ErrRunGone) {
		return ClaimResponse{}, s.skip(ctx, m, err)
	}
	if errors.Is(err, errSlotTaken) {
		// Not this worker's failure: the claim reads on, and the
		// message, left pending, is delivered again after its min-idle.
		s.log.Info("job waits for its run slot", "job_id", m.JobID, "error", err)
		return ClaimResponse{}, errSkipped
	}
	if err != nil {
		// The message stays pending: the transport delivers it again
		// after its min-idle, and it is judged then.
		return ClaimResponse{}, asError("claim: start an attempt", err)
	}
	return ClaimResponse{
		Claimed:                  true,
		JobID:                    st.Job.JobID,
		AttemptID:                st.Attempt.AttemptID,
		LeaseToken:               p.LeaseToken,
		Stream:                   &StreamRef{Name: m.Stream, MessageID: m.MessageID},
		Payload:                  st.Job.Payload,
		LeaseTTLSeconds:          seconds(s.cfg.LeaseTTL),
		HeartbeatIntervalSeconds: seconds(s.cfg.HeartbeatInterval),
	}, nil
}

// skip acknowledges a message whose job cannot start an attempt, except
// the message of a RUNNING job's own enqueue: that one is the running
// attempt's (or a duplicate of it) redelivered after a control-plane
// instance died, and acknowledging it would acknowledge a job the
// database has not settled. It stays pending and is acknowledged when the
// attempt settles, or when it is delivered again after that.
//
// A message of a QUEUED job not yet available (a requeue's backoff) is
// acknowledged too rather than kept waiting in the pending list: the
// reaper writes a new message for the same enqueue once the job is
// available and finds its message gone.
func (s *Service) skip(ctx context.Context, m *Message, cause error) error {
	j, err := s.st.GetJob(ctx, m.JobID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
	case err != nil:
		// Unable to judge: leave the message pending for a later look.
		return asError("claim: look at a stale message's job", err)
	case j.Status == domain.JobRunning && j.EnqueueID == m.EnqueueID:
		s.log.Debug("message of a running attempt redelivered; left pending", "job_id", m.JobID,
			"stream", m.Stream, "message_id", m.MessageID)
		return errSkipped
	}
	s.log.Debug("stale message acknowledged", "job_id", m.JobID, "stream", m.Stream,
		"message_id", m.MessageID, "reason", cause)
	if err := s.tr.Ack(ctx, m.Stream, m.MessageID); err != nil {
		// It is delivered again later and judged stale again.
		s.log.Warn("acknowledge a stale message", "job_id", m.JobID, "stream", m.Stream,
			"message_id", m.MessageID, "error", err)
	}
	return errSkipped
}

// Heartbeat extends the lease of the job's running attempt held by
// req.LeaseToken, then records a heartbeat of the job's pending activity.
//
// When the activity is gone (the lifecycle cancelled it, or it ended for
// good), the worker is refused with 409 activity_cancelled so it stops and
// writes nothing; the job itself is left as it is: its lease lapses, the
// reaper requeues or dead-letters it by attempt count, and a Run activity
// that enqueues the work order again takes the job over with its own ids.
// Temporal merely unreachable is logged and the heartbeat answered: the
// lease in the database is what fences the worker. A job whose workorder
// the gate has judged (ErrRunGone) is refused the same way, whatever
// Temporal says, and the lease is not extended.
func (s *Service) Heartbeat(ctx context.Context, req HeartbeatRequest) (HeartbeatResponse, error) {
	if err := validateRequest(schemas.WorkerHeartbeatRequest, req); err != nil {
		return HeartbeatResponse{}, err
	}
	if _, err := s.authorize(ctx, req.JobID, "", req.WorkerID, req.LeaseToken); err != nil {
		return HeartbeatResponse{}, err
	}
	var job *domain.Job
	l, err := s.st.RenewJobLease(ctx, store.RenewJobLeaseParams{
		JobID:      req.JobID,
		WorkerID:   req.WorkerID,
		LeaseToken: req.LeaseToken,
		TTL:        s.cfg.LeaseTTL,
		Now:        s.now(),
		OnRenew: func(q store.Querier, j *domain.Job, l *domain.JobLease) error {
			job = j
			if err := runGone(ctx, q, j); err != nil {
				return err
			}
			return s.hooks.OnRenew(ctx, q, j, l)
		},
	})
	if err != nil {
		return HeartbeatResponse{}, asError("heartbeat", err)
	}
	if job != nil && job.Activity != nil {
		err := s.acts.Heartbeat(ctx, *job.Activity)
		switch {
		case errors.Is(err, ErrActivityGone):
			return HeartbeatResponse{}, asError("heartbeat", err)
		case err != nil:
			s.log.Warn("record the activity heartbeat of a remote job", "job_id", job.JobID,
				"workflow_id", job.Activity.WorkflowID, "activity_id", job.Activity.ActivityID, "error", err)
		}
	}
	return HeartbeatResponse{OK: true, LeaseExpiresAt: l.LeaseExpiresAt.UTC()}, nil
}

// authorize checks, before anything is written, that the job exists and
// that the attempt named (complete, fail) or the lease presented
// (heartbeat, attemptID "") is workerID's own. Whether the token is right
// and the lease live is the store's call, in the write's transaction.
func (s *Service) authorize(ctx context.Context, jobID, attemptID, workerID, token string) (*domain.Job, error) {
	j, err := s.st.GetJob(ctx, jobID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errNotFound("job %s not found", jobID)
	}
	if err != nil {
		return nil, asError("read the job", err)
	}
	leases, err := s.st.ListJobLeases(ctx, jobID)
	if err != nil {
		return nil, asError("read the job's leases", err)
	}
	if attemptID != "" {
		for _, l := range leases {
			if l.AttemptID == attemptID {
				if l.WorkerID != workerID {
					return nil, errForbidden("attempt %s of job %s is another worker's", attemptID, jobID)
				}
				return j, nil
			}
		}
		return nil, errNotFound("attempt %s of job %s not found", attemptID, jobID)
	}
	own := false
	for _, l := range leases {
		if subtle.ConstantTimeCompare([]byte(l.LeaseToken), []byte(token)) == 1 {
			if l.WorkerID != workerID {
				return nil, errForbidden("job %s's lease is another worker's", jobID)
			}
			return j, nil
		}
		own = own || l.WorkerID == workerID
	}
	if own {
		return nil, errLeaseLost("heartbeat: wrong lease token for job %s", jobID)
	}
	return nil, errForbidden("job %s is not leased to worker %s", jobID, workerID)
}

// validateRequest checks a request against its schema.
func validateRequest(kind schemas.Kind, v any) error {
	if err := schemas.Validate(kind, v); err != nil {
		e := errInvalid("%v", err)
		e.Err = err
		return e
	}
	return nil
}

// seconds is d in whole seconds, at least 1.
func seconds(d time.Duration) int { return max(1, int(d/time.Second)) }
