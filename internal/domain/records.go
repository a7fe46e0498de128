package domain

import (
	"strings"
	"time"
)

// Status is an objective's status: NEW -> TODO -> IN_PROGRESS -> DONE |
// BLOCKED (package transition has the whole machine).
type Status string

// Objective statuses.
const (
	StatusNew        Status = "NEW"
	StatusTodo       Status = "TODO"
	StatusInProgress Status = "IN_PROGRESS"
	StatusDone       Status = "DONE"
	StatusBlocked    Status = "BLOCKED"
)

// Statuses returns all of them, in the lifecycle's order (a new slice
// each time, the caller's to change).
func Statuses() []Status {
	return []Status{StatusNew, StatusTodo, StatusInProgress, StatusDone, StatusBlocked}
}

// StatusStrings returns ss as strings, for SQL and messages.
func StatusStrings(ss []Status) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// OpenStatuses returns the statuses of objectives not yet DONE, the work
// that waits or runs (a new slice each time).
func OpenStatuses() []Status { return []Status{StatusNew, StatusTodo, StatusInProgress, StatusBlocked} }

// Objective is the unit of intent a human approves.
type Objective struct {
	ObjectiveID        string   `json:"objective_id"`
	ObjectiveType      string   `json:"objective_type"`
	Title              string   `json:"title"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	// Description is the objective's longer text, when it came with one
	// (an issue's body); the agent reads it after the title.
	Description string `json:"description,omitempty"`
	// Provenance is where the objective came from, when not from azolla's
	// CLI: the page of the issue it was made from.
	Provenance string `json:"provenance,omitempty"`
	Status     Status `json:"status"`
	// StatusSeq counts status transitions; a readiness event is keyed by it so
	// one transition can never emit two events.
	StatusSeq  int64      `json:"status_seq"`
	Blockers   []string   `json:"blockers"`
	BlockerRef BlockerRef `json:"blocker_ref,omitempty"`
	Urgency    string     `json:"urgency"`
	DueAt      *time.Time `json:"due_at,omitempty"`
	Repository string     `json:"repository,omitempty"`
	BaseBranch string     `json:"base_branch,omitempty"`
	// Generator overrides the configured patch generator for this
	// objective; Patch is the static generator's input.
	Generator string `json:"generator,omitempty"`
	Patch     string `json:"patch,omitempty"`
	// BudgetUSD caps what the objective's runs may spend, in dollars; nil
	// is no cap.
	BudgetUSD *float64 `json:"budget_usd,omitempty"`
	// Attempts is how many candidate patches a run makes, the best one
	// delivered (1..MaxAttempts); nil is 1.
	Attempts  *int      `json:"attempts,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// BlockerRef says what an objective waits on before it can go on, as
// "<kind>:<id>": a failed gate's workorder (gate:wo-x-3) or the objective's
// own blockers list (blockers:x). The empty ref means nothing.
type BlockerRef string

// Kinds of blocker_ref.
const (
	BlockerGate     = "gate"
	BlockerBlockers = "blockers"
)

// GateBlocker is the blocker_ref of a workorder that failed its gate.
func GateBlocker(workOrderID string) BlockerRef { return BlockerRef(BlockerGate + ":" + workOrderID) }

// BlockersOf is the blocker_ref of an objective blocked by its blockers.
func BlockersOf(objectiveID string) BlockerRef {
	return BlockerRef(BlockerBlockers + ":" + objectiveID)
}

// Kind is the ref's kind (BlockerGate, BlockerBlockers), "" for none.
func (r BlockerRef) Kind() string {
	kind, _, _ := strings.Cut(string(r), ":")
	return kind
}

// ID is what the ref points at: a workorder or an objective id.
func (r BlockerRef) ID() string {
	_, id, _ := strings.Cut(string(r), ":")
	return id
}

// Event types.
const (
	EventTicketReady       = "TICKET_READY"
	EventCaptureReady      = "CAPTURE_READY"
	EventManifestRequested = "MANIFEST_REQUESTED"
)

// TrackEventTypes are the event types of the task-management track, in the
// order it takes them: triage first (a new slice each time).
func TrackEventTypes() []string { return []string{EventCaptureReady, EventManifestRequested} }

// Terminal processed reasons of an event (docs/protocol/lifecycle.md#scheduling).
const (
	ReasonScheduled           = "SCHEDULED"
	ReasonMissingTicket       = "MISSING_TICKET"
	ReasonNonExecutableStatus = "NON_EXECUTABLE_STATUS"
	ReasonBlocked             = "BLOCKED"
	// ReasonAlreadyTaken processes a CAPTURE_READY event whose capture an
	// earlier triage workorder already took (or processed): a no-op that
	// creates nothing.
	ReasonAlreadyTaken = "ALREADY_TAKEN"
)

// Event is a readiness signal. SubjectID names the objective (or capture
// buffer) it is about; TransitionSeq is the subject's status_seq at emission.
type Event struct {
	EventID         string     `json:"event_id"`
	EventType       string     `json:"event_type"`
	SubjectID       string     `json:"subject_id"`
	TransitionSeq   int64      `json:"transition_seq"`
	Processed       bool       `json:"processed"`
	ProcessedReason string     `json:"processed_reason,omitempty"`
	ProcessedAt     *time.Time `json:"processed_at,omitempty"`
	// DecidedBy and Comment record the human decision that emitted the
	// event (approve, retry, unblock), if one did: a retry's comment is
	// frozen into the next run's snapshot.
	DecidedBy string `json:"decided_by,omitempty"`
	Comment   string `json:"comment,omitempty"`
	// Scope is what a MANIFEST_REQUESTED event asks the manifest to cover
	// (manifest request --scope); "" for everything.
	Scope string `json:"scope,omitempty"`
	// Fresh: the round this TICKET_READY event asks for starts from its
	// snapshot's commit, not from the partial work of the round before
	// (objective retry --fresh).
	Fresh     bool      `json:"fresh,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// PendingEvent is an unprocessed event as the poller pages through them:
// SubjectHandedOver says its subject is an objective already handed to
// Temporal (see Querier.MarkHandedOver).
type PendingEvent struct {
	*Event
	SubjectHandedOver bool
	// HandedOver says the event itself was handed to Temporal (a track
	// event given to its TrackWorkflow); see Querier.MarkEventHandedOver.
	HandedOver bool
}

// SnapshotMetadata freezes the repository state a run starts from.
type SnapshotMetadata struct {
	CommitSHA  string `json:"commit_sha,omitempty"`
	BaseBranch string `json:"base_branch,omitempty"`
}

// Kinds of related yield a snapshot draws on.
const (
	// YieldPreviousAttempt is the gated workorder a retry follows: its
	// verdict and the tail of its output.
	YieldPreviousAttempt = "PREVIOUS_ATTEMPT"
	// YieldHumanComment is what the human said when deciding to go on.
	YieldHumanComment = "HUMAN_COMMENT"
	// YieldQuestion is the question the previous round's agent asked
	// (Comment), Ref its workorder; the HUMAN_COMMENT after it is the
	// answer.
	YieldQuestion = "QUESTION"
	// YieldCapture is a capture a triage round took: Ref is its
	// capture_buffer_id.
	YieldCapture = "CAPTURE"
	// YieldSubstrateQuery is one named substrate query a manifest read:
	// Ref is the query's name; Version, Substrate, Parameters, RowCount
	// and ContentHash say exactly what it returned.
	YieldSubstrateQuery = "SUBSTRATE_QUERY"
)

// YieldRef is one earlier output a snapshot draws on, frozen with it so the
// run can be reproduced from the snapshot alone. Ref names the record it
// comes from (a workorder, an event); the other fields are what the run
// was told of it, bounded.
type YieldRef struct {
	Kind       string `json:"kind"`
	Ref        string `json:"ref"`
	GateResult string `json:"gate_result,omitempty"`
	GateReason string `json:"gate_reason,omitempty"`
	OutputTail string `json:"output_tail,omitempty"`
	By         string `json:"by,omitempty"`
	Comment    string `json:"comment,omitempty"`
	// The fields of a SUBSTRATE_QUERY ref.
	Version     int               `json:"version,omitempty"`
	Substrate   string            `json:"substrate,omitempty"`
	Parameters  map[string]string `json:"parameters,omitempty"`
	RowCount    *int              `json:"row_count,omitempty"`
	ContentHash string            `json:"content_hash,omitempty"`
}

// ContextSnapshot is the frozen input of one run. A track workorder's
// snapshot (triage, manifest) names its Track instead of an objective.
type ContextSnapshot struct {
	ContextSnapshotID string           `json:"context_snapshot_id"`
	ObjectiveID       string           `json:"objective_id,omitempty"`
	Track             string           `json:"track,omitempty"`
	FullPromptText    string           `json:"full_prompt_text"`
	Metadata          SnapshotMetadata `json:"metadata"`
	RelatedYieldRefs  []YieldRef       `json:"related_yield_refs"`
	CreatedAt         time.Time        `json:"created_at"`
}

// Workorder statuses.
const (
	WorkOrderCreated  = "CREATED"
	WorkOrderExecuted = "EXECUTED"
)

// WorkOrder is one unit of execution handed to a diazotroph. A track
// workorder (TRIAGE_DIAZOTROPH, MANIFEST_DIAZOTROPH) works for a
// task-management track, not an objective: it names its Track and has no
// objective_id and no branch.
type WorkOrder struct {
	WorkOrderID       string `json:"work_order_id"`
	EventID           string `json:"event_id"`
	ObjectiveID       string `json:"objective_id,omitempty"`
	Track             string `json:"track,omitempty"`
	DiazotrophType    string `json:"diazotroph_type"`
	ContextSnapshotID string `json:"context_snapshot_id"`
	BranchName        string `json:"branch_name,omitempty"`
	BudgetMS          int64  `json:"budget_ms"`
	// BudgetUSDRemaining is what was left of the objective's budget_usd
	// when the workorder was scheduled; nil when it has no budget.
	BudgetUSDRemaining *float64   `json:"budget_usd_remaining,omitempty"`
	Status             string     `json:"status"`
	CreatedAt          time.Time  `json:"created_at"`
	ExecutedAt         *time.Time `json:"executed_at,omitempty"`
}

// Runner statuses of an output bundle.
const (
	RunnerOK              = "OK"
	RunnerBudgetExhausted = "BUDGET_EXHAUSTED"
	// RunnerStalled: the run wrote no output and changed no file for
	// executor.stall_timeout and was stopped (docs/patches.md).
	RunnerStalled     = "STALLED"
	RunnerApplyFailed = "APPLY_FAILED"
	// RunnerEnvironmentFailed: the repository's environment could not be
	// prepared (its setup failed) and no agent ran: the environment's
	// failure, which blocks the objective rather than failing a round.
	RunnerEnvironmentFailed = "ENVIRONMENT_FAILED"
	// RunnerStopped: the run was stopped before its end because its work
	// is no longer wanted (the issue it came from was closed); its notes'
	// first line says why.
	RunnerStopped = "STOPPED"
	// RunnerQuestion: the agent asked a human a question and exited
	// before it finished (BundleMetadata.Question); what it had written
	// is kept as partial work, and the answer starts the next round.
	RunnerQuestion = "QUESTION"
)

// BundleMetadata carries what a reviewer needs besides the diff.
type BundleMetadata struct {
	BranchName         string `json:"branch_name,omitempty"`
	PRDescriptionDraft string `json:"pr_description_draft,omitempty"`
	CommitSHA          string `json:"commit_sha,omitempty"`
	// Generator is the patch generator that wrote the content.
	Generator string `json:"generator,omitempty"`
	// RunReport is what the executor reported of its run (model, cost,
	// tokens, turns, summary): the run_report it wrote, or the usage its
	// model endpoint returned.
	RunReport *RunReport `json:"run_report,omitempty"`
	// Transcript links the run's stored transcript (TranscriptRef).
	Transcript *TranscriptRef `json:"transcript,omitempty"`
	// Partial is the work a run left without delivering it (its budget
	// ran out, it stalled), kept for the next round (PartialWork).
	Partial *PartialWork `json:"partial,omitempty"`
	// Question is what the agent of a QUESTION run asks a human.
	Question string `json:"question,omitempty"`
}

// PartialWork is what a run that delivered no patch had changed, kept on
// a ref of its own in its workspace (never the work branch), checked as a
// patch is, for the next round of its objective to resume from.
type PartialWork struct {
	Ref       string `json:"ref"`
	CommitSHA string `json:"commit_sha"`
	// Files are the paths it changes (at most maxPartialFiles listed);
	// FilesChanged how many there are, Bytes the size of its diff.
	Files        []string `json:"files"`
	FilesChanged int      `json:"files_changed"`
	Bytes        int      `json:"bytes"`
}

// OutputBundle is the single output of one workorder run.
type OutputBundle struct {
	WorkOrderID  string         `json:"work_order_id"`
	Title        string         `json:"title"`
	Content      string         `json:"content"`
	Notes        string         `json:"notes"`
	Metadata     BundleMetadata `json:"metadata"`
	RunnerStatus string         `json:"runner_status"`
	CreatedAt    time.Time      `json:"created_at"`
}

// Gate results.
const (
	GatePass = "PASS"
	GateFail = "FAIL"
)

// RunRecord is the gate's verdict; exactly one per workorder.
type RunRecord struct {
	WorkOrderID string    `json:"work_order_id"`
	ObjectiveID string    `json:"objective_id,omitempty"`
	Track       string    `json:"track,omitempty"`
	GateResult  string    `json:"gate_result"`
	GateReason  string    `json:"gate_reason"`
	CommitSHA   string    `json:"commit_sha,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Blame is BlameEnvironment when a FAIL is the environment's, not the
	// patch's: the objective is BLOCKED, not charged a failed round.
	Blame string `json:"blame,omitempty"`
}

// BlameEnvironment says a FAIL is the repository's environment's: its
// setup failed, a gate command could not start, a run hit a sandbox limit.
const BlameEnvironment = "ENVIRONMENT"

// Pause reasons.
const (
	PauseRunComplete = "RUN_COMPLETE"
	PauseGateFailed  = "GATE_FAILED"
	PauseBlocked     = "BLOCKED"
	PauseOverdue     = "OVERDUE"
	PauseRejected    = "REJECTED"
	// PausePullRequestClosed: the objective's pull request was closed
	// without merge; PauseRevisionLimit: it has had its rounds and still
	// asks for changes.
	PausePullRequestClosed = "PULL_REQUEST_CLOSED"
	PauseRevisionLimit     = "REVISION_LIMIT"
	// PauseBudgetSpent: a run failed its gate and the objective's runs
	// have spent its budget_usd; no round starts until it is raised.
	PauseBudgetSpent = "BUDGET_SPENT"
	// PauseProposalsReview hands a triage round's proposed objectives to
	// the human ("Review N proposed objectives").
	PauseProposalsReview = "PROPOSALS_REVIEW"
	// PauseManifestReady hands a manifest and its top actions to the human.
	PauseManifestReady = "MANIFEST_READY"
	// PauseClosedOnForge: the issue the objective came from was closed on
	// its forge while the objective was in flight (running, or its pull
	// request open): no round and no pull request follows by itself.
	PauseClosedOnForge = "CLOSED_ON_FORGE"
	// PauseQuestion: the round's agent asked a question and waits for a
	// human's answer (objective answer), which starts the next round.
	PauseQuestion = "QUESTION"
)

// Subject types of a pause state: what it hands back.
const (
	// SubjectObjective: an objective (objective_id); what a pause state
	// without a subject_type means, as every record before subjects.
	SubjectObjective = "OBJECTIVE"
	// SubjectTriage: a triage run; subject_id is its workorder.
	SubjectTriage = "TRIAGE"
	// SubjectManifest: a manifest run; subject_id is its workorder.
	SubjectManifest = "MANIFEST"
)

// PauseState hands the objective (or, by SubjectType, a triage or
// manifest run) back to a human with what to do next. ActionKinds, when
// present, names the kind of each prioritized action (one per action, same
// order), so a client can offer the command that does it; package pause
// builds both.
type PauseState struct {
	PauseStateID string `json:"pause_state_id"`
	ObjectiveID  string `json:"objective_id,omitempty"`
	// SubjectType and SubjectID name what the pause is about when it is
	// not an objective; "" means SubjectObjective.
	SubjectType        string   `json:"subject_type,omitempty"`
	SubjectID          string   `json:"subject_id,omitempty"`
	WorkOrderID        string   `json:"work_order_id,omitempty"`
	Reason             string   `json:"reason"`
	PrioritizedActions []string `json:"prioritized_actions"`
	ActionKinds        []string `json:"action_kinds,omitempty"`
	// DeadlineAt is, on an OVERDUE pause, the deadline that passed: one
	// OVERDUE pause per (objective, deadline).
	DeadlineAt *time.Time `json:"deadline_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
}

// Subject returns the pause's subject type, SubjectObjective when unset.
func (p *PauseState) Subject() string {
	if p.SubjectType == "" {
		return SubjectObjective
	}
	return p.SubjectType
}

// Claim resource types.
const (
	ResourceEvent     = "EVENT"
	ResourceWorkOrder = "WORKORDER"
	// ResourcePoller is the leadership of a store's lifecycle poller: one
	// claim, on resource PollerLeadership, held by the active instance.
	ResourcePoller = "POLLER"
	// ResourceControlPlaneReaper is the leadership of the control plane's
	// reaper: one claim, on resource ControlPlaneReaperLeadership, held by
	// the active control-plane instance.
	ResourceControlPlaneReaper = "CONTROL_PLANE_REAPER"
	// ResourceTrack serializes a task-management track: one claim, on
	// resource TrackResource(name), held for the whole life of the
	// track's active triage or manifest workorder.
	ResourceTrack = "TRACK"
	// ResourceCandidate is one candidate of a best-of-N workorder's run,
	// <work_order_id>-c<k>: each candidate holds its own lease.
	ResourceCandidate = "CANDIDATE"
	// ResourceForgeIntake is the leadership of the forge intake: one
	// claim, on resource ForgeIntakeLeadership, held by the instance that
	// reads the forges' issues and comments.
	ResourceForgeIntake = "FORGE_INTAKE"
	// ResourceRunSlot is one run slot under a concurrency limit
	// (package slots): <key>:<i>, where key is a repository's or "all"
	// for the deployment's, held by one run for its whole length.
	ResourceRunSlot = "RUN_SLOT"
	// ResourceRunSlotWait is one run's place in a limit's queue: held
	// while it waits, its resource id orders it among the others.
	ResourceRunSlotWait = "RUN_SLOT_WAIT"
)

// ForgeIntakeLeadership is the resource id of the forge intake's
// leadership claim.
const ForgeIntakeLeadership = "forge-intake"

// TrackResource is the resource id of a track's TRACK claim.
func TrackResource(track string) string { return "track-" + track }

// trackOwnerPrefix begins the owner id of every TRACK claim.
const trackOwnerPrefix = "track:"

// TrackOwner is the owner id of the TRACK claim held for a track event: the
// same whatever the attempt or worker that schedules, runs or gates it.
func TrackOwner(eventID string) string { return trackOwnerPrefix + eventID }

// TrackOwnerEvent is the event a TRACK claim's owner id names, ok false
// when ownerID is not a TrackOwner.
func TrackOwnerEvent(ownerID string) (eventID string, ok bool) {
	return strings.CutPrefix(ownerID, trackOwnerPrefix)
}

// ControlPlaneReaperLeadership is the resource id of the reaper's
// leadership claim.
const ControlPlaneReaperLeadership = "control-plane-reaper"

// PollerLeadership is the resource id of the poller's leadership claim.
const PollerLeadership = "lifecycle-poller"

// ClaimRecord is one row of the claim/lease protocol (docs/protocol/claims.md). A released
// claim keeps its row, expired and with a higher version, so claim_version
// stays monotonic for the resource's whole life.
type ClaimRecord struct {
	ResourceType   string     `json:"resource_type"`
	ResourceID     string     `json:"resource_id"`
	OwnerID        string     `json:"owner_id"`
	LeaseExpiresAt time.Time  `json:"lease_expires_at"`
	HeartbeatAt    time.Time  `json:"heartbeat_at"`
	ClaimVersion   int64      `json:"claim_version"`
	ReleasedAt     *time.Time `json:"released_at,omitempty"`
}

// Live reports whether the claim holds an unexpired lease at now.
func (c *ClaimRecord) Live(now time.Time) bool {
	return c.ReleasedAt == nil && c.LeaseExpiresAt.After(now)
}

// Capture buffer statuses.
const (
	CapturePending   = "PENDING"
	CaptureProcessed = "PROCESSED"
)

// CaptureBuffer is a raw capture waiting for triage (docs/protocol/tasks.md). A triage
// workorder takes it (WorkOrderID set, still PENDING); that run's gate
// processes it (PROCESSED, with the ObjectiveIDs it became, none if it
// yielded no proposal).
type CaptureBuffer struct {
	CaptureBufferID string    `json:"capture_buffer_id"`
	Source          string    `json:"source"`
	Content         string    `json:"content"`
	Status          string    `json:"status"`
	WorkOrderID     string    `json:"work_order_id,omitempty"`
	ObjectiveIDs    []string  `json:"objective_ids,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}
