package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Job statuses. SUCCEEDED, FAILED and DEAD_LETTERED are settled: nothing
// changes a settled job but the record of its Temporal notification.
const (
	JobQueued       = "QUEUED"
	JobRunning      = "RUNNING"
	JobSucceeded    = "SUCCEEDED"
	JobFailed       = "FAILED"
	JobDeadLettered = "DEAD_LETTERED"
)

// Attempt statuses. Every status but RUNNING is closed.
const (
	AttemptRunning   = "RUNNING"
	AttemptSucceeded = "SUCCEEDED"
	AttemptFailed    = "FAILED"
	AttemptExpired   = "EXPIRED"
)

// JobSettled reports whether a job in status can no longer change.
func JobSettled(status string) bool {
	return status == JobSucceeded || status == JobFailed || status == JobDeadLettered
}

// JobError is the structured failure of a job or an attempt.
type JobError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Stack     string `json:"stack,omitempty"`
	Retryable bool   `json:"retryable"`
}

// Job is the canonical record of one unit of remote work.
type Job struct {
	JobID   string `json:"job_id"` // a UUID
	JobType string `json:"job_type"`
	// Stream is the stream the job's messages are written to.
	Stream  string          `json:"stream"`
	Status  string          `json:"status"`
	Payload json.RawMessage `json:"payload"`
	// Result is set when the job SUCCEEDED.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the last failure.
	Error        *JobError `json:"error,omitempty"`
	AttemptCount int       `json:"attempt_count"`
	MaxAttempts  int       `json:"max_attempts"`
	WorkOrderID  string    `json:"work_order_id,omitempty"`
	// Candidate, when set, makes the job candidate k (1…N) of its
	// workorder's best-of-N run instead of the workorder's own run; it
	// needs WorkOrderID (docs/patches.md#several-candidates).
	Candidate int `json:"candidate,omitempty"`
	// EnqueueID names the job's current enqueue; every requeue makes a new
	// one, so a message of an earlier enqueue is recognized as stale.
	EnqueueID string `json:"enqueue_id"`
	// MessageID is the transport's id of the current enqueue's message; ""
	// until the message is written (the reaper writes it if the enqueuer
	// died first).
	MessageID string `json:"message_id,omitempty"`
	// AvailableAt is when a QUEUED job may be claimed (a requeue's backoff).
	AvailableAt time.Time `json:"available_at"`
	// Activity names the pending Temporal activity the job completes, if
	// any. Only the control plane reads it; workers never see it.
	Activity *ActivityRef `json:"activity,omitempty"`
	// NotifiedAt is when the settled outcome reached the activity; nil
	// while it has not (the reaper repairs a crash in between).
	NotifiedAt *time.Time `json:"notified_at,omitempty"`
	// RunSlots are the run slots (RUN_SLOT claims) the run handed to the
	// job when it enqueued it: the control plane holds them for the job,
	// with its lease, until it is settled (docs/production.md#limits).
	RunSlots  []SlotRef `json:"run_slots,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SlotRef names one held run slot: its RUN_SLOT claim's resource id and
// owner.
type SlotRef struct {
	ResourceID string `json:"resource_id"`
	OwnerID    string `json:"owner_id"`
}

// ActivityRef addresses a pending Temporal activity by ids, which stay
// valid across the activity's attempts (a task token does not).
type ActivityRef struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	ActivityID string `json:"activity_id"`
}

// JobAttempt is one worker's attempt at a job.
type JobAttempt struct {
	AttemptID     string `json:"attempt_id"` // a UUID
	JobID         string `json:"job_id"`
	WorkerID      string `json:"worker_id"`
	AttemptNumber int    `json:"attempt_number"`
	Status        string `json:"status"`
	// Stream and MessageID name the message the attempt was claimed from.
	Stream     string     `json:"stream"`
	MessageID  string     `json:"message_id"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	Error      *JobError  `json:"error,omitempty"`
	// NextStatus is the job status this attempt's close set (SUCCEEDED,
	// FAILED, DEAD_LETTERED, or QUEUED for a requeue); "" while RUNNING. A
	// repeated completion answers from it (requeued, dlq) even after the
	// job has moved on to another attempt.
	NextStatus string `json:"next_status,omitempty"`
}

// JobLease is the exclusive, expiring right of one attempt to settle its
// job. One row per attempt; it is kept, released, after the attempt closes
// so a repeated completion can be recognized.
type JobLease struct {
	JobID     string `json:"job_id"`
	AttemptID string `json:"attempt_id"`
	WorkerID  string `json:"worker_id"`
	// LeaseToken is 256 random bits, base64url; compared in constant time.
	LeaseToken     string     `json:"lease_token"`
	LeaseExpiresAt time.Time  `json:"lease_expires_at"`
	HeartbeatAt    time.Time  `json:"heartbeat_at"`
	CreatedAt      time.Time  `json:"created_at"`
	ReleasedAt     *time.Time `json:"released_at,omitempty"`
}

// Live reports whether the lease is unreleased and unexpired at now.
func (l *JobLease) Live(now time.Time) bool {
	return l.ReleasedAt == nil && now.Before(l.LeaseExpiresAt)
}

// JobMessage is one message of the database transport: the stand-in for a
// stream entry when no Redis is configured.
type JobMessage struct {
	Stream    string `json:"stream"`
	MessageID string `json:"message_id"`
	JobID     string `json:"job_id"`
	EnqueueID string `json:"enqueue_id"`
	// DeliveredAt and Consumer are set while the message is pending: read
	// by a consumer and not acknowledged.
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	Consumer    string     `json:"consumer,omitempty"`
	Deliveries  int        `json:"deliveries"`
	CreatedAt   time.Time  `json:"created_at"`
}

// WorkerToken is a remote worker's credential; only its hash is stored.
type WorkerToken struct {
	// WorkerID is the name the token was created for; a request's
	// worker_id must equal it.
	WorkerID  string     `json:"worker_id"`
	TokenHash string     `json:"token_hash"` // hex SHA-256 of the token
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Sentinels of the job protocol.
var (
	// ErrJobStale: the message or request names a job state that has
	// moved on (settled, running under another attempt, another enqueue).
	ErrJobStale = errors.New("job state moved on")
	// ErrJobLeaseLost: the lease token is wrong, released or expired, or
	// the attempt is no longer RUNNING.
	ErrJobLeaseLost = errors.New("job lease lost")
)

// JobStaleError says why a claim or an expiry found nothing to do.
type JobStaleError struct {
	JobID  string
	Reason string // e.g. "job is RUNNING", "enqueue superseded", "not available until ..."
}

func (e *JobStaleError) Error() string { return fmt.Sprintf("job %q: %s", e.JobID, e.Reason) }

// Is makes errors.Is(err, ErrJobStale) true.
func (e *JobStaleError) Is(target error) bool { return target == ErrJobStale }

// JobLeaseError says why a lease was refused. It never carries the token.
type JobLeaseError struct {
	JobID     string
	AttemptID string
	Reason    string // e.g. "wrong lease token", "lease expired", "attempt is EXPIRED"
}

func (e *JobLeaseError) Error() string {
	return fmt.Sprintf("job %q attempt %q: %s", e.JobID, e.AttemptID, e.Reason)
}

// Is makes errors.Is(err, ErrJobLeaseLost) true.
func (e *JobLeaseError) Is(target error) bool { return target == ErrJobLeaseLost }
