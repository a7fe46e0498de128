package sqlstore

import (
	"context"
	"crypto/subtle"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// The attempt transactions: claim, heartbeat, settle and the reaper's
// expiry. Each reads the job row first and locks it (FOR UPDATE on
// PostgreSQL; SQLite's transactions begin IMMEDIATE and hold the write
// lock), then the attempt and its lease, always in that order, so two of
// them on one job take turns and never deadlock. Every guard is checked on
// the rows as read under that lock; the writes that follow are by primary
// key. The partial unique index job_attempts_one_running stands behind the
// claim's guard: a second RUNNING attempt of a job cannot be inserted.

// StartJobAttempt claims a QUEUED, available job of enqueue p.EnqueueID.
func (s *Store) StartJobAttempt(ctx context.Context, p store.StartJobAttemptParams) (*store.StartedJobAttempt, error) {
	now := store.NowOr(p.Now)
	if p.TTL <= 0 {
		return nil, fmt.Errorf("start attempt of job %q: lease TTL must be positive, got %s: %w", p.JobID, p.TTL, domain.ErrInvalid)
	}
	var out *store.StartedJobAttempt
	err := s.inTx(ctx, func(q *querier) error {
		j, err := q.getJob(ctx, p.JobID, true)
		if err != nil {
			return err
		}
		switch {
		case j.Status != domain.JobQueued:
			return &domain.JobStaleError{JobID: j.JobID, Reason: "job is " + j.Status}
		case j.EnqueueID != p.EnqueueID:
			return &domain.JobStaleError{JobID: j.JobID, Reason: "enqueue " + p.EnqueueID + " was superseded by " + j.EnqueueID}
		case now.Before(j.AvailableAt):
			return &domain.JobStaleError{JobID: j.JobID, Reason: "job is not available until " + j.AvailableAt.Format(time.RFC3339Nano)}
		}
		j.Status, j.AttemptCount, j.UpdatedAt = domain.JobRunning, j.AttemptCount+1, now
		if j.MessageID == "" {
			j.MessageID = p.MessageID // claimed before its enqueuer recorded it
		}
		a := &domain.JobAttempt{AttemptID: p.AttemptID, JobID: j.JobID, WorkerID: p.WorkerID,
			AttemptNumber: j.AttemptCount, Status: domain.AttemptRunning, Stream: p.Stream,
			MessageID: p.MessageID, StartedAt: now}
		l := &domain.JobLease{JobID: j.JobID, AttemptID: p.AttemptID, WorkerID: p.WorkerID, LeaseToken: p.LeaseToken,
			LeaseExpiresAt: leaseEnd(now, p.TTL), HeartbeatAt: now, CreatedAt: now}
		if err := validateJobRecords(j, a, l); err != nil {
			return err
		}
		if err := q.updateJob(ctx, j); err != nil {
			return err
		}
		if err := q.insertAttempt(ctx, a); err != nil {
			return err
		}
		if err := q.insertLease(ctx, l); err != nil {
			return err
		}
		out = &store.StartedJobAttempt{Job: j, Attempt: a, Lease: l}
		if p.OnStart != nil {
			return p.OnStart(q, out)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("start attempt of job %q: %w", p.JobID, err)
	}
	return out, nil
}

// RenewJobLease extends a live lease presenting its token.
func (s *Store) RenewJobLease(ctx context.Context, p store.RenewJobLeaseParams) (*domain.JobLease, error) {
	now := store.NowOr(p.Now)
	if p.TTL <= 0 {
		return nil, fmt.Errorf("renew lease of job %q: lease TTL must be positive, got %s: %w", p.JobID, p.TTL, domain.ErrInvalid)
	}
	var out *domain.JobLease
	err := s.inTx(ctx, func(q *querier) error {
		j, err := q.getJob(ctx, p.JobID, true)
		if err != nil {
			return err
		}
		attemptID := p.AttemptID
		if attemptID == "" {
			// A heartbeat names no attempt (docs/protocol/control-plane.md): the job's running one.
			a, err := q.runningAttempt(ctx, j.JobID)
			if err != nil {
				return err
			}
			if a == nil {
				return &domain.JobLeaseError{JobID: j.JobID, Reason: "job is " + j.Status + " with no running attempt"}
			}
			attemptID = a.AttemptID
		}
		a, l, err := q.attemptAndLease(ctx, j.JobID, attemptID)
		if err != nil {
			return err
		}
		if err := checkLease(a, l, p.WorkerID, p.LeaseToken); err != nil {
			return err
		}
		if !l.Live(now) {
			return &domain.JobLeaseError{JobID: j.JobID, AttemptID: a.AttemptID, Reason: "lease expired at " + l.LeaseExpiresAt.Format(time.RFC3339Nano)}
		}
		l.LeaseExpiresAt, l.HeartbeatAt = leaseEnd(now, p.TTL), now
		if err := schemas.Validate(schemas.JobLease, l); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `UPDATE job_leases SET lease_expires_at = $1, heartbeat_at = $2 WHERE attempt_id = $3`,
			q.t(l.LeaseExpiresAt), q.t(l.HeartbeatAt), l.AttemptID); err != nil {
			return err
		}
		out = l
		if p.OnRenew != nil {
			return p.OnRenew(q, j, l)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("renew lease of job %q: %w", p.JobID, err)
	}
	return out, nil
}

// SettleJobAttempt closes a RUNNING attempt under its lease, or recognizes
// a repeat of the settle that closed it.
func (s *Store) SettleJobAttempt(ctx context.Context, p store.SettleJobAttemptParams) (*store.SettledJobAttempt, error) {
	now := store.NowOr(p.Now)
	next, err := settleNext(p, now)
	if err != nil {
		return nil, fmt.Errorf("settle attempt %q of job %q: %w", p.AttemptID, p.JobID, err)
	}
	var out *store.SettledJobAttempt
	err = s.inTx(ctx, func(q *querier) error {
		j, err := q.getJob(ctx, p.JobID, true)
		if err != nil {
			return err
		}
		a, l, err := q.attemptAndLease(ctx, j.JobID, p.AttemptID)
		if err != nil {
			return err
		}
		if a.Status == domain.AttemptSucceeded || a.Status == domain.AttemptFailed {
			// Closed by a settle: the same token gets the same answer.
			if err := checkToken(a, l, p.WorkerID, p.LeaseToken); err != nil {
				return err
			}
			out = &store.SettledJobAttempt{Job: j, Attempt: a, Repeat: true}
			return nil
		}
		if err := checkLease(a, l, p.WorkerID, p.LeaseToken); err != nil {
			return err
		}
		if !l.Live(now) {
			return &domain.JobLeaseError{JobID: j.JobID, AttemptID: a.AttemptID, Reason: "lease expired at " + l.LeaseExpiresAt.Format(time.RFC3339Nano)}
		}
		if p.Status == domain.AttemptSucceeded {
			j.Result = p.Result
		}
		if err := q.closeAttempt(ctx, j, a, l, p.Status, p.Error, next, now); err != nil {
			return err
		}
		out = &store.SettledJobAttempt{Job: j, Attempt: a}
		if p.OnSettle != nil {
			return p.OnSettle(q, j)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("settle attempt %q of job %q: %w", p.AttemptID, p.JobID, err)
	}
	return out, nil
}

// settleNext checks a settle's outcome and returns the job's next state.
func settleNext(p store.SettleJobAttemptParams, now time.Time) (store.JobNext, error) {
	next := p.Next
	if next.Status == "" {
		next.Status = p.Status
	}
	switch {
	case p.Status == domain.AttemptSucceeded && next.Status != domain.JobSucceeded:
		return next, fmt.Errorf("a SUCCEEDED attempt settles its job as SUCCEEDED, not %q: %w", next.Status, domain.ErrInvalid)
	case p.Status == domain.AttemptFailed && p.Error == nil:
		return next, fmt.Errorf("a FAILED attempt needs its error: %w", domain.ErrInvalid)
	case p.Status == domain.AttemptFailed && next.Status != domain.JobFailed && next.Status != domain.JobDeadLettered && next.Status != domain.JobQueued:
		return next, fmt.Errorf("a FAILED attempt leaves its job FAILED, DEAD_LETTERED or QUEUED, not %q: %w", next.Status, domain.ErrInvalid)
	case p.Status != domain.AttemptSucceeded && p.Status != domain.AttemptFailed:
		return next, fmt.Errorf("an attempt settles as SUCCEEDED or FAILED, not %q: %w", p.Status, domain.ErrInvalid)
	}
	return checkNext(next, now)
}

// checkNext checks that only a requeue names a new enqueue, and dates it.
func checkNext(next store.JobNext, now time.Time) (store.JobNext, error) {
	if next.Status != domain.JobQueued {
		if next.EnqueueID != "" || !next.AvailableAt.IsZero() {
			return next, fmt.Errorf("only a requeue (next status QUEUED) takes an enqueue id and an available time: %w", domain.ErrInvalid)
		}
		return next, nil
	}
	if next.AvailableAt.IsZero() {
		next.AvailableAt = now
	}
	next.AvailableAt = store.NowOr(next.AvailableAt)
	return next, nil
}

// ExpireJobAttempt closes a RUNNING attempt whose lease has expired.
func (s *Store) ExpireJobAttempt(ctx context.Context, p store.ExpireJobAttemptParams) (*domain.Job, error) {
	now := store.NowOr(p.Now)
	next, err := checkNext(p.Next, now)
	if err == nil && next.Status != domain.JobQueued && next.Status != domain.JobFailed && next.Status != domain.JobDeadLettered {
		err = fmt.Errorf("an expired attempt leaves its job QUEUED, FAILED or DEAD_LETTERED, not %q: %w", next.Status, domain.ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("expire attempt %q of job %q: %w", p.AttemptID, p.JobID, err)
	}
	var out *domain.Job
	err = s.inTx(ctx, func(q *querier) error {
		j, err := q.getJob(ctx, p.JobID, true)
		if err != nil {
			return err
		}
		a, l, err := q.attemptAndLease(ctx, j.JobID, p.AttemptID)
		if err != nil {
			return err
		}
		if a.Status != domain.AttemptRunning {
			return &domain.JobStaleError{JobID: j.JobID, Reason: "attempt " + a.AttemptID + " is " + a.Status}
		}
		if l.Live(now) {
			return &domain.JobStaleError{JobID: j.JobID, Reason: "lease of attempt " + a.AttemptID + " is live until " + l.LeaseExpiresAt.Format(time.RFC3339Nano)}
		}
		if err := q.closeAttempt(ctx, j, a, l, domain.AttemptExpired, p.Error, next, now); err != nil {
			return err
		}
		out = j
		if p.OnExpire != nil {
			return p.OnExpire(q, j)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("expire attempt %q of job %q: %w", p.AttemptID, p.JobID, err)
	}
	return out, nil
}

// ListExpiredJobLeases pages through unreleased, expired leases of RUNNING
// attempts, oldest expiry first (the job_leases_unreleased index).
func (s *Store) ListExpiredJobLeases(ctx context.Context, p store.ExpiredJobLeasesParams) ([]*domain.JobLease, error) {
	rows, err := s.query(ctx, `SELECT `+prefixed("l.", leaseCols)+` FROM job_leases l
		JOIN job_attempts a ON a.attempt_id = l.attempt_id AND a.status = 'RUNNING'
		WHERE l.released_at IS NULL AND l.lease_expires_at <= $1
		ORDER BY l.lease_expires_at, l.attempt_id LIMIT $2`, s.t(store.NowOr(p.Now)), limit(p.Limit))
	out, err := collect(rows, err, scanLease)
	if err != nil {
		return nil, fmt.Errorf("list expired job leases: %w", err)
	}
	return out, nil
}

// closeJob moves j to next when one of its attempts closes.
func closeJob(j *domain.Job, next store.JobNext, failure *domain.JobError, now time.Time) error {
	if next.Status == domain.JobQueued {
		if next.EnqueueID == j.EnqueueID {
			return fmt.Errorf("a requeue needs a new enqueue id, not the current one: %w", domain.ErrInvalid)
		}
		// A new enqueue: messages of the old one are stale from now on.
		j.EnqueueID, j.AvailableAt, j.MessageID = next.EnqueueID, next.AvailableAt, ""
	}
	j.Status, j.UpdatedAt = next.Status, now
	if failure != nil {
		j.Error = failure
	}
	return nil
}

// checkToken compares the presented token with the lease's in constant
// time, then the worker if one is named. The token is never in the error.
func checkToken(a *domain.JobAttempt, l *domain.JobLease, workerID, token string) error {
	if subtle.ConstantTimeCompare([]byte(token), []byte(l.LeaseToken)) != 1 {
		return &domain.JobLeaseError{JobID: a.JobID, AttemptID: a.AttemptID, Reason: "wrong lease token"}
	}
	if workerID != "" && workerID != l.WorkerID {
		return &domain.JobLeaseError{JobID: a.JobID, AttemptID: a.AttemptID, Reason: "lease is held by another worker"}
	}
	return nil
}

// checkLease is checkToken on an attempt that must still be RUNNING under
// an unreleased lease.
func checkLease(a *domain.JobAttempt, l *domain.JobLease, workerID, token string) error {
	if err := checkToken(a, l, workerID, token); err != nil {
		return err
	}
	if a.Status != domain.AttemptRunning {
		return &domain.JobLeaseError{JobID: a.JobID, AttemptID: a.AttemptID, Reason: "attempt is " + a.Status}
	}
	if l.ReleasedAt != nil {
		return &domain.JobLeaseError{JobID: a.JobID, AttemptID: a.AttemptID, Reason: "lease was released"}
	}
	return nil
}

// validateJobRecords checks each record an attempt transaction writes.
func validateJobRecords(j *domain.Job, a *domain.JobAttempt, l *domain.JobLease) error {
	if err := schemas.Validate(schemas.Job, j); err != nil {
		return err
	}
	if err := schemas.Validate(schemas.JobAttempt, a); err != nil {
		return err
	}
	return schemas.Validate(schemas.JobLease, l)
}

// runningAttempt returns the job's RUNNING attempt, or nil.
func (q *querier) runningAttempt(ctx context.Context, jobID string) (*domain.JobAttempt, error) {
	rows, err := q.query(ctx, `SELECT `+attemptCols+` FROM job_attempts WHERE job_id = $1 AND status = 'RUNNING'`+q.d.ForUpdate, jobID)
	as, err := collect(rows, err, scanAttempt)
	if err != nil || len(as) == 0 {
		return nil, err
	}
	return as[0], nil
}

// attemptAndLease loads and locks one attempt of the job and its lease. An
// attempt of another job is as unknown as a missing one.
func (q *querier) attemptAndLease(ctx context.Context, jobID, attemptID string) (*domain.JobAttempt, *domain.JobLease, error) {
	a, err := scanAttempt(q.queryRow(ctx, `SELECT `+attemptCols+` FROM job_attempts WHERE attempt_id = $1 AND job_id = $2`+q.d.ForUpdate, attemptID, jobID))
	if err != nil {
		return nil, nil, notFound(err, "attempt of job "+jobID, attemptID)
	}
	l, err := scanLease(q.queryRow(ctx, `SELECT `+leaseCols+` FROM job_leases WHERE attempt_id = $1`+q.d.ForUpdate, attemptID))
	if err != nil {
		return nil, nil, notFound(err, "lease of attempt", attemptID)
	}
	return a, l, nil
}

// updateJob writes the columns an attempt transaction changes.
func (q *querier) updateJob(ctx context.Context, j *domain.Job) error {
	errText, err := nullJSON(j.Error)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `UPDATE jobs SET status = $1, result = $2, error = $3, attempt_count = $4, enqueue_id = $5,
		message_id = $6, available_at = $7, updated_at = $8 WHERE job_id = $9`,
		j.Status, nullRaw(j.Result), errText, j.AttemptCount, j.EnqueueID, nullString(j.MessageID),
		q.t(j.AvailableAt), q.t(j.UpdatedAt), j.JobID)
	if err != nil {
		return fmt.Errorf("update job: %w", err)
	}
	return nil
}

func (q *querier) insertAttempt(ctx context.Context, a *domain.JobAttempt) error {
	errText, err := nullJSON(a.Error)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `INSERT INTO job_attempts (`+attemptCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		a.AttemptID, a.JobID, a.WorkerID, a.AttemptNumber, a.Status, a.Stream, a.MessageID, q.t(a.StartedAt),
		q.nt(a.FinishedAt), errText, nullString(a.NextStatus))
	if q.d.IsUniqueViolation(err) {
		return fmt.Errorf("insert attempt %q: %w", a.AttemptID, domain.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("insert attempt %q: %w", a.AttemptID, err)
	}
	return nil
}

func (q *querier) insertLease(ctx context.Context, l *domain.JobLease) error {
	_, err := q.exec(ctx, `INSERT INTO job_leases (`+leaseCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		l.JobID, l.AttemptID, l.WorkerID, l.LeaseToken, q.t(l.LeaseExpiresAt), q.t(l.HeartbeatAt), q.t(l.CreatedAt), q.nt(l.ReleasedAt))
	if err != nil {
		return fmt.Errorf("insert lease of attempt %q: %w", l.AttemptID, err)
	}
	return nil
}

// closeAttempt closes a as status with failure, moves j to next and
// releases l, all at now; the records are validated, then written.
func (q *querier) closeAttempt(ctx context.Context, j *domain.Job, a *domain.JobAttempt, l *domain.JobLease,
	status string, failure *domain.JobError, next store.JobNext, now time.Time) error {
	a.Status, a.FinishedAt, a.Error, a.NextStatus = status, &now, failure, next.Status
	if err := closeJob(j, next, failure, now); err != nil {
		return err
	}
	l.ReleasedAt = &now
	if err := validateJobRecords(j, a, l); err != nil {
		return err
	}
	if err := q.updateJob(ctx, j); err != nil {
		return err
	}
	errText, err := nullJSON(a.Error)
	if err != nil {
		return err
	}
	if _, err := q.exec(ctx, `UPDATE job_attempts SET status = $1, finished_at = $2, error = $3, next_status = $4 WHERE attempt_id = $5`,
		a.Status, q.nt(a.FinishedAt), errText, nullString(a.NextStatus), a.AttemptID); err != nil {
		return fmt.Errorf("close attempt: %w", err)
	}
	if _, err := q.exec(ctx, `UPDATE job_leases SET released_at = $1 WHERE attempt_id = $2`, q.nt(l.ReleasedAt), l.AttemptID); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	return nil
}
