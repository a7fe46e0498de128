package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// The control plane's job records (docs/protocol/control-plane.md). Every JobStore method is one transaction of
// its own (or one statement); see job_attempts.go for the claim, heartbeat
// and settle transactions.

var _ store.JobStore = (*Store)(nil)

const jobCols = `job_id, job_type, stream, status, payload, result, error, attempt_count, max_attempts,
	work_order_id, enqueue_id, message_id, available_at, activity_workflow_id, activity_run_id, activity_id,
	notified_at, created_at, updated_at, candidate, run_slots`

func scanJob(r rowScanner) (*domain.Job, error) {
	var (
		j         domain.Job
		workflow  sql.NullString
		runID     string
		activity  string
		candidate sql.NullInt64
	)
	err := r.Scan(&j.JobID, &j.JobType, &j.Stream, &j.Status, jsonCol(&j.Payload), jsonCol(&j.Result),
		jsonCol(&j.Error), &j.AttemptCount, &j.MaxAttempts, nullStringCol(&j.WorkOrderID), &j.EnqueueID,
		nullStringCol(&j.MessageID), timeCol(&j.AvailableAt), &workflow, nullStringCol(&runID),
		nullStringCol(&activity), nullTimeCol(&j.NotifiedAt), timeCol(&j.CreatedAt), timeCol(&j.UpdatedAt),
		&candidate, jsonCol(&j.RunSlots))
	if err != nil {
		return nil, err
	}
	j.Candidate = int(candidate.Int64)
	if workflow.Valid {
		j.Activity = &domain.ActivityRef{WorkflowID: workflow.String, RunID: runID, ActivityID: activity}
	}
	return &j, nil
}

// jobArgs are the values of jobCols, in order, for an INSERT.
func (q *querier) jobArgs(j *domain.Job) ([]any, error) {
	errText, err := nullJSON(j.Error)
	if err != nil {
		return nil, err
	}
	var workflow, runID, activity, candidate, slots any
	if a := j.Activity; a != nil {
		workflow, runID, activity = a.WorkflowID, a.RunID, a.ActivityID
	}
	if j.Candidate != 0 {
		candidate = j.Candidate
	}
	if len(j.RunSlots) > 0 {
		if slots, err = jsonText(j.RunSlots); err != nil {
			return nil, err
		}
	}
	return []any{j.JobID, j.JobType, j.Stream, j.Status, string(j.Payload), nullRaw(j.Result), errText,
		j.AttemptCount, j.MaxAttempts, nullString(j.WorkOrderID), j.EnqueueID, nullString(j.MessageID),
		q.t(j.AvailableAt), workflow, runID, activity, q.nt(j.NotifiedAt), q.t(j.CreatedAt), q.t(j.UpdatedAt),
		candidate, slots}, nil
}

// inTx runs fn in one transaction of s, with the concrete querier.
func (s *Store) inTx(ctx context.Context, fn func(q *querier) error) error {
	return s.InTx(ctx, func(q store.Querier) error { return fn(q.(*querier)) })
}

// CreateJob inserts j as QUEUED unless a job with its job_id or its
// (work_order_id, candidate) exists; then that job is returned with
// created=false.
func (s *Store) CreateJob(ctx context.Context, j *domain.Job) (*domain.Job, bool, error) {
	if j.Status == "" {
		j.Status = domain.JobQueued
	}
	if j.Status != domain.JobQueued || j.AttemptCount != 0 {
		return nil, false, fmt.Errorf("create job %q: a new job is QUEUED with no attempts, got %s with %d: %w",
			j.JobID, j.Status, j.AttemptCount, domain.ErrInvalid)
	}
	j.CreatedAt = store.NowOr(j.CreatedAt)
	j.UpdatedAt = store.NowOr(j.UpdatedAt)
	if j.AvailableAt.IsZero() {
		j.AvailableAt = j.CreatedAt
	}
	j.AvailableAt = store.NowOr(j.AvailableAt)
	if err := schemas.Validate(schemas.Job, j); err != nil {
		return nil, false, fmt.Errorf("create job: %w", err)
	}
	args, err := s.jobArgs(j)
	if err != nil {
		return nil, false, fmt.Errorf("create job %q: %w", j.JobID, err)
	}
	what := fmt.Sprintf("create job %q", j.JobID)
	// ON CONFLICT without a target covers every key: the primary key and
	// the partial unique indexes on work_order_id (the workorder's own
	// job) and on (work_order_id, candidate) (its candidates' jobs).
	return insertOrGet(&s.querier, what, func() (*domain.Job, error) {
		return scanJob(s.queryRow(ctx, `INSERT INTO jobs (`+jobCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
			ON CONFLICT DO NOTHING RETURNING `+jobCols, args...))
	}, func() (*domain.Job, error) {
		got, err := s.GetJob(ctx, j.JobID)
		switch {
		case err == nil || j.WorkOrderID == "":
			return got, err
		case j.Candidate != 0:
			return s.GetCandidateJob(ctx, j.WorkOrderID, j.Candidate)
		}
		return s.GetJobByWorkOrder(ctx, j.WorkOrderID)
	})
}

// GetJob loads one job.
func (s *Store) GetJob(ctx context.Context, jobID string) (*domain.Job, error) {
	j, err := s.getJob(ctx, jobID, false)
	if err != nil {
		return nil, fmt.Errorf("get job: %w", err)
	}
	return j, nil
}

// getJob loads one job, locking its row for the rest of the transaction
// when lock is set (SQLite's transactions hold the write lock already).
func (q *querier) getJob(ctx context.Context, jobID string, lock bool) (*domain.Job, error) {
	query := `SELECT ` + jobCols + ` FROM jobs WHERE job_id = $1`
	if lock {
		query += q.d.ForUpdate
	}
	j, err := scanJob(q.queryRow(ctx, query, jobID))
	if err != nil {
		return nil, notFound(err, "job", jobID)
	}
	return j, nil
}

// GetJobByWorkOrder loads the workorder's own job, not a candidate's.
func (s *Store) GetJobByWorkOrder(ctx context.Context, workOrderID string) (*domain.Job, error) {
	j, err := scanJob(s.queryRow(ctx, `SELECT `+jobCols+` FROM jobs WHERE work_order_id = $1 AND candidate IS NULL`,
		workOrderID))
	if err != nil {
		return nil, fmt.Errorf("get job by workorder: %w", notFound(err, "job for workorder", workOrderID))
	}
	return j, nil
}

// GetCandidateJob loads the job of candidate k of a workorder.
func (s *Store) GetCandidateJob(ctx context.Context, workOrderID string, k int) (*domain.Job, error) {
	j, err := scanJob(s.queryRow(ctx, `SELECT `+jobCols+` FROM jobs WHERE work_order_id = $1 AND candidate = $2`,
		workOrderID, k))
	if err != nil {
		return nil, fmt.Errorf("get job of candidate: %w", notFound(err, "job for candidate",
			domain.CandidateKey(workOrderID, k)))
	}
	return j, nil
}

// unnotifiedJobs is the predicate of the jobs_unnotified index, written as
// the index writes it so SQLite recognizes it.
const unnotifiedJobs = `notified_at IS NULL AND activity_workflow_id IS NOT NULL AND status IN ('SUCCEEDED', 'FAILED', 'DEAD_LETTERED')`

// ListJobs pages through jobs in (created_at, job_id) order. Only the
// filters asked for are in the WHERE clause, so each can use its index.
func (s *Store) ListJobs(ctx context.Context, p store.ListJobsParams) ([]*domain.Job, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if p.Status != "" {
		where = append(where, "status = "+arg(p.Status))
	}
	if p.WorkOrderID != "" {
		where = append(where, "work_order_id = "+arg(p.WorkOrderID))
	}
	if p.Unnotified {
		where = append(where, unnotifiedJobs)
	}
	where = append(where, fmt.Sprintf("(created_at, job_id) > (%s, %s)", arg(s.t(p.After.CreatedAt)), arg(p.After.ID)))
	rows, err := s.query(ctx, `SELECT `+jobCols+` FROM jobs WHERE `+strings.Join(where, " AND ")+
		` ORDER BY created_at, job_id LIMIT `+arg(limit(p.Limit)), args...)
	out, err := collect(rows, err, scanJob)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

// SetJobActivity records the Temporal activity the job completes.
func (s *Store) SetJobActivity(ctx context.Context, jobID string, a domain.ActivityRef, now time.Time) (*domain.Job, error) {
	var out *domain.Job
	err := s.inTx(ctx, func(q *querier) error {
		j, err := q.getJob(ctx, jobID, true)
		if err != nil {
			return err
		}
		j.Activity, j.UpdatedAt = &a, store.NowOr(now)
		if err := schemas.Validate(schemas.Job, j); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `UPDATE jobs SET activity_workflow_id = $1, activity_run_id = $2, activity_id = $3,
			updated_at = $4 WHERE job_id = $5`, a.WorkflowID, a.RunID, a.ActivityID, q.t(j.UpdatedAt), jobID); err != nil {
			return err
		}
		out = j
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set activity of job %q: %w", jobID, err)
	}
	return out, nil
}

// SetJobMessage records the message of the job's enqueue p.EnqueueID.
func (s *Store) SetJobMessage(ctx context.Context, p store.SetJobMessageParams) (bool, error) {
	changed := false
	err := s.inTx(ctx, func(q *querier) error {
		j, err := q.getJob(ctx, p.JobID, true)
		if err != nil {
			return err
		}
		if j.EnqueueID != p.EnqueueID {
			return nil // the job moved on to another enqueue
		}
		j.MessageID, j.UpdatedAt = p.MessageID, store.NowOr(p.Now)
		if err := schemas.Validate(schemas.Job, j); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `UPDATE jobs SET message_id = $1, updated_at = $2 WHERE job_id = $3`,
			nullString(p.MessageID), q.t(j.UpdatedAt), p.JobID); err != nil {
			return err
		}
		changed = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("set message of job %q: %w", p.JobID, err)
	}
	return changed, nil
}

// MarkJobNotified sets notified_at once on a settled job.
func (s *Store) MarkJobNotified(ctx context.Context, jobID string, now time.Time) error {
	res, err := s.exec(ctx, `UPDATE jobs SET notified_at = $1
		WHERE job_id = $2 AND notified_at IS NULL AND status IN ('SUCCEEDED', 'FAILED', 'DEAD_LETTERED')`,
		s.t(store.NowOr(now)), jobID)
	if err != nil {
		return fmt.Errorf("mark job %q notified: %w", jobID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return nil
	}
	// Marked already, not settled, or unknown.
	j, err := s.getJob(ctx, jobID, false)
	if err != nil {
		return fmt.Errorf("mark job notified: %w", err)
	}
	if !domain.JobSettled(j.Status) {
		return &domain.JobStaleError{JobID: jobID, Reason: "job is " + j.Status + ", not settled; nothing to notify"}
	}
	return nil
}

const attemptCols = `attempt_id, job_id, worker_id, attempt_number, status, stream, message_id, started_at,
	finished_at, error, next_status`

func scanAttempt(r rowScanner) (*domain.JobAttempt, error) {
	var a domain.JobAttempt
	err := r.Scan(&a.AttemptID, &a.JobID, &a.WorkerID, &a.AttemptNumber, &a.Status, &a.Stream, &a.MessageID,
		timeCol(&a.StartedAt), nullTimeCol(&a.FinishedAt), jsonCol(&a.Error), nullStringCol(&a.NextStatus))
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// ListJobAttempts returns a job's attempts, first first.
func (s *Store) ListJobAttempts(ctx context.Context, jobID string) ([]*domain.JobAttempt, error) {
	rows, err := s.query(ctx, `SELECT `+attemptCols+` FROM job_attempts WHERE job_id = $1 ORDER BY attempt_number`, jobID)
	out, err := collect(rows, err, scanAttempt)
	if err != nil {
		return nil, fmt.Errorf("list attempts of job %q: %w", jobID, err)
	}
	return out, nil
}

const leaseCols = `job_id, attempt_id, worker_id, lease_token, lease_expires_at, heartbeat_at, created_at, released_at`

func scanLease(r rowScanner) (*domain.JobLease, error) {
	var l domain.JobLease
	err := r.Scan(&l.JobID, &l.AttemptID, &l.WorkerID, &l.LeaseToken, timeCol(&l.LeaseExpiresAt),
		timeCol(&l.HeartbeatAt), timeCol(&l.CreatedAt), nullTimeCol(&l.ReleasedAt))
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// ListJobLeases returns a job's leases in the order of their attempts.
func (s *Store) ListJobLeases(ctx context.Context, jobID string) ([]*domain.JobLease, error) {
	rows, err := s.query(ctx, `SELECT `+prefixed("l.", leaseCols)+` FROM job_leases l
		JOIN job_attempts a ON a.attempt_id = l.attempt_id
		WHERE l.job_id = $1 ORDER BY a.attempt_number`, jobID)
	out, err := collect(rows, err, scanLease)
	if err != nil {
		return nil, fmt.Errorf("list leases of job %q: %w", jobID, err)
	}
	return out, nil
}

// nullJSON encodes v for a nullable JSON column; a nil pointer is NULL.
func nullJSON[T any](v *T) (any, error) {
	if v == nil {
		return nil, nil
	}
	return jsonText(v)
}

// nullRaw stores an absent raw JSON value as NULL.
func nullRaw(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
