// Package store is azolla's storage seam: one interface over every record of
// the lifecycle (the types live in package domain) and the claim table,
// implemented for SQLite (the embedded default) and PostgreSQL
// (production). Both implementations pass the same conformance suite in
// storetest.
//
// Every write validates its record against the record's JSON Schema first;
// an invalid record is refused with an error naming the field and nothing
// is written. Idempotency is enforced by unique keys in the database: one
// workorder per event, one output bundle and one run record per workorder,
// one readiness event per objective state transition, one pull request per
// objective.
//
// Methods take params structs where time matters; their Now field makes the
// clock injectable (zero means time.Now).
package store

import (
	"context"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// The store's roles. A consumer takes the narrow interface of what it uses
// (one role, or a few composed where it is used); Querier and Store are
// every role at once, and the one implementation, package sqlstore, is all
// of them behind both backends.

// Querier is every role's reads and writes, usable alone or inside a
// transaction.
type Querier interface {
	ObjectiveQuerier
	EventQuerier
	RunQuerier
	PauseQuerier
	CaptureQuerier
	PullRequestQuerier
	PullRequestFeedbackQuerier
	SpendQuerier
	CandidateQuerier
	ClaimQuerier
	TranscriptQuerier
	IntakeQuerier
}

// ObjectiveQuerier reads and moves objectives.
type ObjectiveQuerier interface {
	CreateObjective(ctx context.Context, o *domain.Objective) error
	GetObjective(ctx context.Context, objectiveID string) (*domain.Objective, error)
	ListObjectives(ctx context.Context, p ListObjectivesParams) ([]*domain.Objective, error)
	// ListObjectivesPage pages through objectives in (created_at,
	// objective_id) order, strictly after p.After, keeping those whose
	// status is one of p.Statuses (every status when empty).
	ListObjectivesPage(ctx context.Context, p ObjectivesPageParams) ([]*domain.Objective, error)
	// TransitionObjective moves an objective to p.To if its current status is one
	// of p.From, incrementing status_seq. A status outside p.From returns a
	// *TransitionError and changes nothing.
	TransitionObjective(ctx context.Context, p TransitionObjectiveParams) (*domain.Objective, error)
	// MarkHandedOver records that the objective was handed to Temporal: its
	// lifecycle was started or found, or it needs none. It sets
	// handed_over_at once; marking again changes nothing. An unknown
	// objective is a *NotFoundError.
	MarkHandedOver(ctx context.Context, p MarkHandedOverParams) error
	// ListObjectivesToHandOver pages through the objectives not handed over,
	// in (created_at, objective_id) order, strictly after p.After.
	ListObjectivesToHandOver(ctx context.Context, p PageParams) ([]*domain.Objective, error)
}

// EventQuerier emits events and records how each was handed over and
// processed.
type EventQuerier interface {
	// EmitEvent inserts an event unless one exists for the same (event_type,
	// subject_id, transition_seq); then it returns that one and created=false.
	EmitEvent(ctx context.Context, e *domain.Event) (stored *domain.Event, created bool, err error)
	GetEvent(ctx context.Context, eventID string) (*domain.Event, error)
	// ListUnprocessedEvents returns unprocessed events, oldest first.
	ListUnprocessedEvents(ctx context.Context, p ListEventsParams) ([]*domain.Event, error)
	ListEvents(ctx context.Context, p ListEventsParams) ([]*domain.Event, error)
	// ListPendingEvents pages through the unprocessed events of
	// p.EventType, in (created_at, event_id) order, strictly after p.After,
	// each with whether its subject is an objective handed over.
	ListPendingEvents(ctx context.Context, p PendingEventsParams) ([]*domain.PendingEvent, error)
	// MarkEventHandedOver records that the event was handed to Temporal
	// (a track event enqueued on its TrackWorkflow). It sets the mark once;
	// marking again changes nothing. An unknown event is a *NotFoundError.
	MarkEventHandedOver(ctx context.Context, p MarkEventHandedOverParams) error
	// MarkEventProcessed sets processed=true with a terminal reason exactly once;
	// a second call returns ErrAlreadyProcessed and changes nothing.
	MarkEventProcessed(ctx context.Context, p MarkEventProcessedParams) (*domain.Event, error)
}

// RunQuerier keeps a round's records: its context snapshot, workorder,
// output bundle and run record.
type RunQuerier interface {
	CreateContextSnapshot(ctx context.Context, s *domain.ContextSnapshot) error
	GetContextSnapshot(ctx context.Context, contextSnapshotID string) (*domain.ContextSnapshot, error)

	// CreateWorkOrder inserts a workorder unless its event already has one; then
	// it returns the existing one and created=false.
	CreateWorkOrder(ctx context.Context, w *domain.WorkOrder) (stored *domain.WorkOrder, created bool, err error)
	GetWorkOrder(ctx context.Context, workOrderID string) (*domain.WorkOrder, error)
	GetWorkOrderByEvent(ctx context.Context, eventID string) (*domain.WorkOrder, error)
	ListWorkOrders(ctx context.Context, p ListWorkOrdersParams) ([]*domain.WorkOrder, error)
	// MarkWorkOrderExecuted sets CREATED -> EXECUTED; on an EXECUTED workorder it
	// is a no-op that returns changed=false.
	MarkWorkOrderExecuted(ctx context.Context, p MarkWorkOrderExecutedParams) (w *domain.WorkOrder, changed bool, err error)

	// CreateOutputBundle inserts the workorder's one bundle; if it exists it
	// returns the stored one and created=false.
	CreateOutputBundle(ctx context.Context, b *domain.OutputBundle) (stored *domain.OutputBundle, created bool, err error)
	GetOutputBundle(ctx context.Context, workOrderID string) (*domain.OutputBundle, error)

	// UpsertRunRecord writes the workorder's one run record, replacing the
	// verdict if one exists (created_at is kept).
	UpsertRunRecord(ctx context.Context, r *domain.RunRecord) (*domain.RunRecord, error)
	GetRunRecord(ctx context.Context, workOrderID string) (*domain.RunRecord, error)
}

// PauseQuerier keeps the pause states handed to humans.
type PauseQuerier interface {
	CreatePauseState(ctx context.Context, p *domain.PauseState) error
	// CreatePauseStateOnce inserts p unless a pause state with its
	// pause_state_id exists; then it returns that one and created=false.
	// Deterministic ids make a step's pause idempotent (one OVERDUE pause
	// per objective and deadline).
	CreatePauseStateOnce(ctx context.Context, p *domain.PauseState) (stored *domain.PauseState, created bool, err error)
	GetPauseState(ctx context.Context, pauseStateID string) (*domain.PauseState, error)
	// ListPauseStates returns an objective's pause states, oldest first.
	ListPauseStates(ctx context.Context, objectiveID string) ([]*domain.PauseState, error)
	// ListPauseStatesPage pages through pause states in (created_at,
	// pause_state_id) order, strictly after p.After, filtered by p.
	ListPauseStatesPage(ctx context.Context, p ListPauseStatesParams) ([]*domain.PauseState, error)
}

// CaptureQuerier keeps the capture buffers triage reads.
type CaptureQuerier interface {
	CreateCaptureBuffer(ctx context.Context, c *domain.CaptureBuffer) error
	GetCaptureBuffer(ctx context.Context, captureBufferID string) (*domain.CaptureBuffer, error)
	ListCaptureBuffers(ctx context.Context, p ListCaptureBuffersParams) ([]*domain.CaptureBuffer, error)
	// ListCapturesWithoutEvent pages through the PENDING captures that have
	// no CAPTURE_READY event, in (created_at, capture_buffer_id) order,
	// strictly after p.After.
	ListCapturesWithoutEvent(ctx context.Context, p PageParams) ([]*domain.CaptureBuffer, error)
	// ListUntakenCaptures returns up to limit PENDING captures no workorder
	// has taken, oldest first (created_at, capture_buffer_id).
	ListUntakenCaptures(ctx context.Context, limit int) ([]*domain.CaptureBuffer, error)
	// TakeCaptures sets work_order_id on each of p.CaptureBufferIDs. Every
	// one must be PENDING and untaken, or taken by p.WorkOrderID already
	// (a retry); otherwise it returns a *TransitionError and changes
	// nothing.
	TakeCaptures(ctx context.Context, p TakeCapturesParams) error
	// ProcessCapture sets a capture taken by p.WorkOrderID to PROCESSED with
	// the objective ids it became. Processing it again with the same
	// workorder is a no-op; a capture taken by another workorder, or not
	// taken, is a *TransitionError.
	ProcessCapture(ctx context.Context, p ProcessCaptureParams) (*domain.CaptureBuffer, error)
	// ReleaseCaptures hands back to triage the captures of
	// p.CaptureBufferIDs that p.WorkOrderID still holds PENDING: it clears
	// their work_order_id and emits each a new CAPTURE_READY event (its
	// highest transition_seq plus one), in one transaction, and returns
	// those events. A capture the workorder does not hold (released
	// already, taken by another workorder, PROCESSED) is left as it is, so
	// a second call is a no-op.
	ReleaseCaptures(ctx context.Context, p ReleaseCapturesParams) ([]*domain.Event, error)
}

// ClaimQuerier is the storage side of the claim/lease protocol; package claim
// builds the bridge on it. See claim/doc.go for the protocol.
type ClaimQuerier interface {
	// AcquireClaim creates the claim or takes it over if expired, in one
	// round trip whose write re-checks its condition as it writes. It
	// returns acquired=false, and no error, while an unexpired claim exists.
	AcquireClaim(ctx context.Context, p AcquireClaimParams) (c *domain.ClaimRecord, acquired bool, err error)
	// RenewClaim extends the lease by compare-and-swap on (owner_id,
	// claim_version). When the swap fails it returns a *LeaseLostError.
	RenewClaim(ctx context.Context, p RenewClaimParams) (*domain.ClaimRecord, error)
	// ReleaseClaim ends the lease; only the holder of p.ClaimVersion may. A
	// non-holder gets a *NotHolderError and nothing changes.
	ReleaseClaim(ctx context.Context, p ReleaseClaimParams) (*domain.ClaimRecord, error)
	GetClaim(ctx context.Context, resourceType, resourceID string) (*domain.ClaimRecord, error)
	ListClaims(ctx context.Context, p ListClaimsParams) ([]*domain.ClaimRecord, error)
	// CheckFence locks the claim row for the rest of the transaction and returns
	// a *LeaseLostError unless f still holds it. Call it first inside InTx so the
	// terminal write that follows is refused once the claim has moved on.
	CheckFence(ctx context.Context, f Fence) error
}

// Transactor runs several writes as one transaction.
type Transactor interface {
	// InTx runs fn in one transaction, committed if fn returns nil.
	InTx(ctx context.Context, fn func(q Querier) error) error
}

// Store is a Querier with transactions, migrations and a lifetime.
type Store interface {
	Querier
	// JobStore's methods run their own transactions; their On* callbacks
	// get a Querier bound to that transaction.
	JobStore
	Transactor
	// Migrate applies pending migrations and returns the versions it applied;
	// running it again applies nothing.
	Migrate(ctx context.Context) (applied []int, err error)
	// Dialect names the backend: "sqlite" or "postgres".
	Dialect() string
	// PruneFinished deletes, in batches of p.Batch, the rows that served
	// only a finished step and whose use ended before p.Before; see
	// PruneFinishedParams for what goes and what stays.
	PruneFinished(ctx context.Context, p PruneFinishedParams) (PruneFinishedCounts, error)
	Close() error
}

// ListObjectivesParams filters ListObjectives. Zero values mean no filter.
type ListObjectivesParams struct {
	Status domain.Status
	Limit  int
}

// TransitionObjectiveParams describes one status transition.
type TransitionObjectiveParams struct {
	ObjectiveID string
	From        []domain.Status
	To          domain.Status
	// BlockerRef, when non-nil, replaces blocker_ref ("" clears it).
	BlockerRef *domain.BlockerRef
	// Blockers, when non-nil, replaces the blockers list (empty clears it).
	Blockers *[]string
	Now      time.Time
}

// PageParams asks for one page of a keyset listing.
type PageParams struct {
	After domain.Cursor
	Limit int // zero means no limit
}

// PendingEventsParams asks for one page of unprocessed events.
type PendingEventsParams struct {
	EventType string // "" means every type
	After     domain.Cursor
	Limit     int // zero means no limit
}

// ObjectivesPageParams asks for one page of objectives.
type ObjectivesPageParams struct {
	Statuses []domain.Status
	// PastDeadline, when set, keeps only the objectives whose deadline is
	// before it, so that a scan for overdue ones reads those alone.
	PastDeadline *DeadlineFilter
	After        domain.Cursor
	Limit        int // zero means no limit
}

// DeadlineFilter keeps the objectives whose deadline is strictly before
// Before: due_at when set, else created_at plus SLA[urgency]. SLA must name
// every urgency the caller counts a deadline for; an objective without
// due_at whose urgency it does not name is left out.
type DeadlineFilter struct {
	Before time.Time
	SLA    map[string]time.Duration
}

// ListPauseStatesParams filters ListPauseStatesPage. Zero values mean no
// filter.
type ListPauseStatesParams struct {
	Reason string
	// SubjectType keeps one subject type (SubjectObjective also matches
	// records without one).
	SubjectType string
	After       domain.Cursor
	Limit       int // zero means no limit
}

// MarkEventHandedOverParams marks one event handed over.
type MarkEventHandedOverParams struct {
	EventID string
	Now     time.Time
}

// TakeCapturesParams hands PENDING captures to a triage workorder.
type TakeCapturesParams struct {
	WorkOrderID      string
	CaptureBufferIDs []string
	Now              time.Time
}

// ReleaseCapturesParams hands a failed triage round's captures back.
type ReleaseCapturesParams struct {
	WorkOrderID      string
	CaptureBufferIDs []string
	Now              time.Time
}

// ProcessCaptureParams records what a taken capture became.
type ProcessCaptureParams struct {
	CaptureBufferID string
	WorkOrderID     string
	ObjectiveIDs    []string
	Now             time.Time
}

// MarkHandedOverParams marks one objective handed over.
type MarkHandedOverParams struct {
	ObjectiveID string
	Now         time.Time
}

// ListEventsParams filters event listings. Zero values mean no filter.
type ListEventsParams struct {
	EventType string
	SubjectID string
	Limit     int
}

// MarkEventProcessedParams records an event's terminal reason.
type MarkEventProcessedParams struct {
	EventID string
	Reason  string
	Now     time.Time
}

// ListWorkOrdersParams filters ListWorkOrders. Zero values mean no filter.
type ListWorkOrdersParams struct {
	Status      string
	ObjectiveID string
	// Track keeps the workorders of one task-management track.
	Track string
	// DiazotrophType keeps the workorders of one diazotroph type.
	DiazotrophType string
	Limit          int
}

// MarkWorkOrderExecutedParams marks a workorder EXECUTED.
type MarkWorkOrderExecutedParams struct {
	WorkOrderID string
	Now         time.Time
}

// ListCaptureBuffersParams filters ListCaptureBuffers.
type ListCaptureBuffersParams struct {
	Status string
	Limit  int
}

// AcquireClaimParams asks for a lease of TTL on one resource.
type AcquireClaimParams struct {
	ResourceType string
	ResourceID   string
	OwnerID      string
	TTL          time.Duration
	Now          time.Time
}

// RenewClaimParams extends a held lease; ClaimVersion is the version the
// holder last saw.
type RenewClaimParams struct {
	ResourceType string
	ResourceID   string
	OwnerID      string
	ClaimVersion int64
	TTL          time.Duration
	Now          time.Time
}

// ReleaseClaimParams ends a held lease.
type ReleaseClaimParams struct {
	ResourceType string
	ResourceID   string
	OwnerID      string
	ClaimVersion int64
	Now          time.Time
}

// ListClaimsParams filters ListClaims. LiveAt, when set, keeps only claims
// unexpired and unreleased at that instant. ResourceTypes, when set, keeps
// those of its types (read through the primary key's prefix), as
// ResourceType keeps one.
type ListClaimsParams struct {
	ResourceType  string
	ResourceTypes []string
	LiveAt        *time.Time
}

// Fence identifies the exact claim a terminal write is made under.
type Fence struct {
	ResourceType string
	ResourceID   string
	OwnerID      string
	ClaimVersion int64
}

// NowOr returns t, or the current UTC time if t is zero, truncated to the
// microsecond precision both backends store.
func NowOr(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Microsecond)
}
