package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// The records below are the control plane's (docs/protocol/control-plane.md): the control plane's jobs, their
// attempts and leases, the messages of the database transport and the
// tokens remote workers present. The database is the truth of a job; a
// stream message only says "look at job X".

// JobStore is the control plane's side of the store. Every method is one
// transaction (or one statement) of its own; the On* callbacks run inside
// that transaction, so a caller's own writes (an output bundle, a
// WORKORDER claim's renewal) commit or roll back with the job's.
//
// Lease tokens are compared in constant time. A wrong, released or expired
// token, or an attempt that is no longer RUNNING, is a *JobLeaseError
// (errors.Is ErrJobLeaseLost) and nothing is written.
type JobStore interface {
	// CreateJob inserts j as QUEUED. A job already stored for the same
	// job_id, or for the same (work_order_id, candidate), is returned
	// with created=false and nothing is written: a workorder has at most
	// one job of its own (no candidate) and one per candidate.
	CreateJob(ctx context.Context, j *domain.Job) (stored *domain.Job, created bool, err error)
	GetJob(ctx context.Context, jobID string) (*domain.Job, error)
	// GetJobByWorkOrder loads the workorder's own job (not a candidate's).
	GetJobByWorkOrder(ctx context.Context, workOrderID string) (*domain.Job, error)
	// GetCandidateJob loads the job of candidate k of the workorder.
	GetCandidateJob(ctx context.Context, workOrderID string, k int) (*domain.Job, error)
	ListJobs(ctx context.Context, p ListJobsParams) ([]*domain.Job, error)
	ListJobAttempts(ctx context.Context, jobID string) ([]*domain.JobAttempt, error)
	// ListJobLeases returns a job's leases, one per attempt, oldest first.
	ListJobLeases(ctx context.Context, jobID string) ([]*domain.JobLease, error)
	// SetJobActivity records the Temporal activity a job completes.
	SetJobActivity(ctx context.Context, jobID string, a domain.ActivityRef, now time.Time) (*domain.Job, error)
	// SetJobMessage records the message written for the job's enqueue
	// p.EnqueueID; if the job has moved on to another enqueue it changes
	// nothing and returns changed=false.
	SetJobMessage(ctx context.Context, p SetJobMessageParams) (changed bool, err error)

	// StartJobAttempt is a claim: it moves a QUEUED, available job whose
	// enqueue_id is p.EnqueueID to RUNNING, counts the attempt, and inserts
	// the attempt and its lease. Any other state is a *JobStaleError
	// (errors.Is ErrJobStale) saying why, and nothing is written.
	StartJobAttempt(ctx context.Context, p StartJobAttemptParams) (*StartedJobAttempt, error)
	// RenewJobLease extends the live lease of p.AttemptID's RUNNING attempt
	// presenting p.LeaseToken; p.AttemptID "" means the job's RUNNING
	// attempt, whichever it is (a heartbeat names no attempt), and
	// a job without one is a *JobLeaseError. An attempt of another job, or
	// none, is a *NotFoundError.
	RenewJobLease(ctx context.Context, p RenewJobLeaseParams) (*domain.JobLease, error)
	// SettleJobAttempt closes a RUNNING attempt under its lease: it writes
	// the outcome (p.Status SUCCEEDED with p.Result, or FAILED with p.Error),
	// the job's next status (p.Next), and releases the lease, in one
	// transaction. Settling an attempt again with its token returns the
	// stored outcome with Repeat=true and writes nothing: Attempt is the
	// attempt as its first settle closed it (its Status and NextStatus say
	// what was decided, whatever p asks now) and Job is the job as it is
	// now, which may have moved on. An attempt the reaper EXPIRED is a
	// *JobLeaseError, not a repeat. An unknown attempt of the job is a
	// *NotFoundError.
	//
	// p.Next.Status "" means p.Status. SUCCEEDED must go to SUCCEEDED;
	// FAILED may go to FAILED, DEAD_LETTERED or QUEUED (a requeue: the job
	// gets p.Next.EnqueueID, p.Next.AvailableAt (zero is now) and no
	// message id until SetJobMessage).
	SettleJobAttempt(ctx context.Context, p SettleJobAttemptParams) (*SettledJobAttempt, error)
	// ExpireJobAttempt closes a RUNNING attempt whose lease has expired as
	// EXPIRED and sets the job's next status, for the reaper. An attempt
	// that is not RUNNING, or whose lease is live, is a *JobStaleError.
	ExpireJobAttempt(ctx context.Context, p ExpireJobAttemptParams) (*domain.Job, error)
	// ListExpiredJobLeases pages through the unreleased leases expired at
	// p.Now whose attempt is still RUNNING, oldest expiry first.
	ListExpiredJobLeases(ctx context.Context, p ExpiredJobLeasesParams) ([]*domain.JobLease, error)
	// MarkJobNotified records that a settled job's outcome reached its
	// activity; marking again changes nothing. updated_at is kept: the
	// job did not change. A job not settled is a *JobStaleError.
	MarkJobNotified(ctx context.Context, jobID string, now time.Time) error

	// The database transport.

	// EnqueueJobMessage inserts m (its MessageID assigned by the store if
	// empty) and returns the stored message. Assigned ids are 20 decimal
	// digits, zero-padded ("00000000000000000042"), from one counter that
	// never repeats, so text order is enqueue order across all streams.
	EnqueueJobMessage(ctx context.Context, m *domain.JobMessage) (*domain.JobMessage, error)
	// ReceiveJobMessage takes the oldest message of the first stream in
	// p.Streams that has one: never delivered, or pending longer than
	// p.MinIdle (its consumer died); p.MinIdle <= 0 takes no pending
	// message. Within a stream the lowest message id goes first. It is
	// marked delivered to p.Consumer at p.Now and its Deliveries counted.
	// Nil and no error when every stream is empty. Concurrent receivers
	// never get the same message unless it was left pending past MinIdle.
	ReceiveJobMessage(ctx context.Context, p ReceiveJobMessageParams) (*domain.JobMessage, error)
	// AckJobMessage deletes the message; acknowledging a missing message
	// is not an error.
	AckJobMessage(ctx context.Context, stream, messageID string) error
	// GetJobMessage returns a message not yet acknowledged, or a
	// *NotFoundError.
	GetJobMessage(ctx context.Context, stream, messageID string) (*domain.JobMessage, error)

	// Worker tokens.

	// CreateWorkerToken stores t; a worker_id with a live (unrevoked)
	// token is an error wrapping ErrAlreadyExists.
	CreateWorkerToken(ctx context.Context, t *domain.WorkerToken) error
	// GetWorkerTokenByHash returns the unrevoked token with this hash.
	GetWorkerTokenByHash(ctx context.Context, tokenHash string) (*domain.WorkerToken, error)
	ListWorkerTokens(ctx context.Context) ([]*domain.WorkerToken, error)
	// RevokeWorkerToken revokes the worker's live token; none is a
	// *NotFoundError.
	RevokeWorkerToken(ctx context.Context, workerID string, now time.Time) error
}

// ListJobsParams filters ListJobs, paging in (created_at, job_id) order.
// Zero values mean no filter.
type ListJobsParams struct {
	Status      string
	WorkOrderID string
	// Unnotified keeps settled jobs with an activity not yet notified.
	Unnotified bool
	After      domain.Cursor
	Limit      int
}

// SetJobMessageParams records the message of one enqueue.
type SetJobMessageParams struct {
	JobID     string
	EnqueueID string
	MessageID string
	Now       time.Time
}

// StartJobAttemptParams claims a job for one attempt. AttemptID and
// LeaseToken are made by the caller (a UUID; 256 random bits).
type StartJobAttemptParams struct {
	JobID      string
	EnqueueID  string
	Stream     string
	MessageID  string
	WorkerID   string
	AttemptID  string
	LeaseToken string
	TTL        time.Duration
	Now        time.Time
	// OnStart runs in the transaction once the rows are written; an error
	// rolls everything back.
	OnStart func(q Querier, s *StartedJobAttempt) error
}

// StartedJobAttempt is what a claim wrote.
type StartedJobAttempt struct {
	Job     *domain.Job
	Attempt *domain.JobAttempt
	Lease   *domain.JobLease
}

// RenewJobLeaseParams extends one attempt's lease. AttemptID "" means the
// job's RUNNING attempt (a heartbeat carries no attempt_id); the
// token still has to be that attempt's. WorkerID, when set, must be the
// lease holder's.
type RenewJobLeaseParams struct {
	JobID      string
	AttemptID  string
	WorkerID   string
	LeaseToken string
	TTL        time.Duration
	Now        time.Time
	// OnRenew runs in the transaction after the lease is extended.
	OnRenew func(q Querier, j *domain.Job, l *domain.JobLease) error
}

// JobNext is what becomes of a job when an attempt closes.
type JobNext struct {
	// Status is the job's next status: SUCCEEDED, FAILED, DEAD_LETTERED,
	// or QUEUED for a requeue.
	Status string
	// EnqueueID and AvailableAt describe a requeue's new enqueue.
	EnqueueID   string
	AvailableAt time.Time
}

// SettleJobAttemptParams closes one attempt under its lease. WorkerID,
// when set, must be the lease holder's.
type SettleJobAttemptParams struct {
	JobID      string
	AttemptID  string
	WorkerID   string
	LeaseToken string
	// Status is the attempt's outcome: SUCCEEDED or FAILED.
	Status string
	Result json.RawMessage
	Error  *domain.JobError
	Next   JobNext
	Now    time.Time
	// OnSettle runs in the transaction after the job is written (not on a
	// repeat).
	OnSettle func(q Querier, j *domain.Job) error
}

// SettledJobAttempt is the outcome of a settle.
type SettledJobAttempt struct {
	Job     *domain.Job
	Attempt *domain.JobAttempt
	// Repeat is true when the attempt was settled before; nothing was
	// written.
	Repeat bool
}

// ExpireJobAttemptParams closes one expired attempt. Next.Status is QUEUED
// (a requeue, with a new EnqueueID), FAILED or DEAD_LETTERED; Error, if
// set, becomes the attempt's error and the job's last failure.
type ExpireJobAttemptParams struct {
	JobID     string
	AttemptID string
	Error     *domain.JobError
	Next      JobNext
	Now       time.Time
	// OnExpire runs in the transaction after the job is written.
	OnExpire func(q Querier, j *domain.Job) error
}

// ExpiredJobLeasesParams asks for one page of expired leases.
type ExpiredJobLeasesParams struct {
	Now   time.Time
	Limit int
}

// ReceiveJobMessageParams takes one message of the database transport.
type ReceiveJobMessageParams struct {
	Streams  []string
	Consumer string
	MinIdle  time.Duration
	Now      time.Time
}
