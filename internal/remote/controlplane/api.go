package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// The wire form of the four endpoints (docs/protocol/control-plane.md#the-endpoints);
// every request and response kind has a schema in schemas/ and is validated
// on both sides.

// Endpoint paths.
const (
	PathClaim     = "/internal/worker/claim"
	PathHeartbeat = "/internal/worker/heartbeat"
	PathComplete  = "/internal/worker/complete"
	PathFail      = "/internal/worker/fail"
)

// ClaimRequest asks for one job from streams, in priority order, waiting up
// to MaxWaitMS (capped by the server) for one to arrive.
type ClaimRequest struct {
	WorkerID  string   `json:"worker_id"`
	Streams   []string `json:"streams"`
	MaxWaitMS int      `json:"max_wait_ms"`
}

// StreamRef names the message a job was claimed from.
type StreamRef struct {
	Name      string `json:"name"`
	MessageID string `json:"message_id"`
}

// ClaimResponse carries a job when Claimed; otherwise only Claimed=false.
type ClaimResponse struct {
	Claimed                  bool            `json:"claimed"`
	JobID                    string          `json:"job_id,omitempty"`
	AttemptID                string          `json:"attempt_id,omitempty"`
	LeaseToken               string          `json:"lease_token,omitempty"`
	Stream                   *StreamRef      `json:"stream,omitempty"`
	Payload                  json.RawMessage `json:"payload,omitempty"`
	LeaseTTLSeconds          int             `json:"lease_ttl_seconds,omitempty"`
	HeartbeatIntervalSeconds int             `json:"heartbeat_interval_seconds,omitempty"`
}

// HeartbeatRequest extends the lease of the job's running attempt.
type HeartbeatRequest struct {
	WorkerID   string `json:"worker_id"`
	JobID      string `json:"job_id"`
	LeaseToken string `json:"lease_token"`
}

// HeartbeatResponse says until when the lease now runs.
type HeartbeatResponse struct {
	OK             bool      `json:"ok"`
	LeaseExpiresAt time.Time `json:"lease_expires_at"`
}

// CompleteRequest settles an attempt as succeeded with Result.
type CompleteRequest struct {
	WorkerID   string          `json:"worker_id"`
	JobID      string          `json:"job_id"`
	AttemptID  string          `json:"attempt_id"`
	LeaseToken string          `json:"lease_token"`
	Stream     string          `json:"stream"`
	MessageID  string          `json:"message_id"`
	Result     json.RawMessage `json:"result"`
}

// CompleteResponse: Ack means the control plane has acknowledged the stream
// message on the worker's behalf (workers hold no stream credentials).
type CompleteResponse struct {
	OK  bool `json:"ok"`
	Ack bool `json:"ack"`
}

// FailRequest settles an attempt as failed.
type FailRequest struct {
	WorkerID   string          `json:"worker_id"`
	JobID      string          `json:"job_id"`
	AttemptID  string          `json:"attempt_id"`
	LeaseToken string          `json:"lease_token"`
	Stream     string          `json:"stream"`
	MessageID  string          `json:"message_id"`
	Error      domain.JobError `json:"error"`
}

// FailResponse says what the policy made of the failure: the job was
// requeued for another attempt, or dead-lettered.
type FailResponse struct {
	OK       bool `json:"ok"`
	Ack      bool `json:"ack"`
	Requeued bool `json:"requeued"`
	DLQ      bool `json:"dlq"`
}

// ErrorResponse is the body of every 4xx and 5xx answer.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is a stable code and a message for people.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Stable error codes and their HTTP statuses.
const (
	CodeInvalid         = "invalid_request"    // 400
	CodeUnauthenticated = "unauthenticated"    // 401
	CodeForbidden       = "forbidden"          // 403: another worker's job or worker_id
	CodeNotFound        = "not_found"          // 404: unknown job or attempt
	CodeLeaseLost       = "lease_lost"         // 409: wrong, released or expired token
	CodeStale           = "stale"              // 409: the job moved on (requeued, settled)
	CodeCancelled       = "activity_cancelled" // 409: the lifecycle no longer wants the result
	CodeTooLarge        = "request_too_large"  // 413
	CodeUnavailable     = "unavailable"        // 503: store or transport down; retry
	CodeInternal        = "internal"           // 500
)

// Message is one transport entry: "job JobID's enqueue EnqueueID is ready".
type Message struct {
	Stream    string
	MessageID string
	JobID     string
	EnqueueID string
}

// MessageState is what the transport knows of one message.
type MessageState struct {
	// Exists: the message is still in its stream (not acknowledged and
	// deleted, not trimmed, not lost with a flushed Redis).
	Exists bool
	// Pending: delivered to a consumer and not acknowledged.
	Pending bool
}

// Transport carries messages from the enqueuer to the claim handler. Two
// implementations: Redis Streams (production) and the database (azolla dev
// without Redis; the baseline of benchmark B5). The database stays the
// truth: a message may be duplicated, redelivered or lost, and the claim
// handler checks every one against the job row.
type Transport interface {
	// Enqueue writes one message for the job's enqueue and returns its id.
	Enqueue(ctx context.Context, stream, jobID, enqueueID string) (messageID string, err error)
	// Receive returns one message for consumer: each stream is first
	// checked without blocking, in priority order, together with messages
	// a crashed consumer left pending longer than the transport's min-idle;
	// then it blocks up to wait (capped below the client's read timeout)
	// for the first message on any stream. Nil and no error when wait
	// passes with nothing.
	Receive(ctx context.Context, consumer string, streams []string, wait time.Duration) (*Message, error)
	// Ack acknowledges the message and deletes it, so neither the pending
	// list nor the stream grows without bound. A missing message is not an
	// error.
	Ack(ctx context.Context, stream, messageID string) error
	// State reports what the transport knows of one message.
	State(ctx context.Context, stream, messageID string) (MessageState, error)
	Close() error
}

// Activities is the Temporal side the control plane reports to, addressed
// by ids (workers/ implements it with a Temporal client; this package knows
// nothing of Temporal). Nothing Temporal-side is ever sent to workers.
type Activities interface {
	// Heartbeat records a heartbeat of the pending activity. ErrActivityGone
	// when the activity was cancelled, completed or timed out for good.
	Heartbeat(ctx context.Context, ref domain.ActivityRef) error
	// Complete completes the activity with the settled job's outcome.
	Complete(ctx context.Context, j *domain.Job) error
	// Fail fails the activity, non-retryably, with the job's error.
	Fail(ctx context.Context, j *domain.Job) error
}

// ErrActivityGone: the Temporal activity a job completes no longer waits
// for it.
var ErrActivityGone = errors.New("activity no longer pending")
