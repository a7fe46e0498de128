package workflows

import (
	"crypto/sha256"
	"encoding/hex"

	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/lifecycle/transition"
)

// ObjectiveWorkflowName is the registered name of ObjectiveWorkflow.
const ObjectiveWorkflowName = "ObjectiveWorkflow"

// ObjectiveWorkflowID is the workflow id of an objective's lifecycle: one id
// per objective, so Temporal never runs two lifecycles of one objective.
func ObjectiveWorkflowID(objectiveID string) string { return "objective-" + objectiveID }

// Signals and updates of ObjectiveWorkflow. Each decision is both a signal
// (fire and forget) and an update of the same name (validated, answered).
const (
	// Approve moves a NEW objective to TODO (human validation); payload Decision.
	Approve = "approve"
	// Reject ends a NEW objective's lifecycle; payload Decision.
	Reject = "reject"
	// Unblock clears a BLOCKED objective's blockers and re-emits TICKET_READY.
	Unblock = "unblock"
	// Retry re-emits TICKET_READY after a failed gate or a block.
	Retry = "retry"
	// Wake is the signal of SignalWithStart: it makes a waiting lifecycle
	// read its objective from the store again (a TICKET_READY event or a
	// status written straight into the database). No payload.
	Wake = "wake"
)

// decisions maps each decision to the objective's transition it asks for.
var decisions = map[string]transition.Name{
	Approve: transition.Approve,
	Reject:  transition.Reject,
	Unblock: transition.Unblock,
	Retry:   transition.Retry,
}

// StateQuery is the query returning the lifecycle's State.
const StateQuery = "state"

// Custom search attributes (keywords) the lifecycle upserts, so the Web UI
// can filter objectives.
var (
	// AttrObjectiveID is the objective_id.
	AttrObjectiveID = temporal.NewSearchAttributeKeyKeyword("AzollaObjectiveId")
	// AttrStatus is the objective's status (NEW, TODO, ...).
	AttrStatus = temporal.NewSearchAttributeKeyKeyword("AzollaStatus")
	// AttrObjectiveType is the objective_type.
	AttrObjectiveType = temporal.NewSearchAttributeKeyKeyword("AzollaObjectiveType")
	// AttrDiazotroph is the diazotroph_type of the current workorder.
	AttrDiazotroph = temporal.NewSearchAttributeKeyKeyword("AzollaDiazotroph")
	// AttrGateResult is the last gate verdict (PASS, FAIL).
	AttrGateResult = temporal.NewSearchAttributeKeyKeyword("AzollaGateResult")
	// AttrWorkOrderID is the current (or last) workorder's work_order_id.
	AttrWorkOrderID = temporal.NewSearchAttributeKeyKeyword("AzollaWorkOrderId")
	// AttrBranch is the work branch, azolla/<objective_id>.
	AttrBranch = temporal.NewSearchAttributeKeyKeyword("AzollaBranch")
	// AttrCommitSHA is the commit the last gated run produced, so a
	// lifecycle can be found from a commit.
	AttrCommitSHA = temporal.NewSearchAttributeKeyKeyword("AzollaCommitSha")
	// AttrPullRequest is the URL of the objective's pull request.
	AttrPullRequest = temporal.NewSearchAttributeKeyKeyword("AzollaPullRequest")
	// AttrIssue is the page of the issue an objective was made from (its
	// provenance), set when its lifecycle starts. A keyword list, as
	// azolla's keywords fill the ten a SQL visibility store has.
	AttrIssue = temporal.NewSearchAttributeKeyKeywordList("AzollaIssue")
	// AttrQueued is true while a run of the lifecycle waits for a run
	// slot under a limit (max_concurrent_runs), false once it has one.
	AttrQueued = temporal.NewSearchAttributeKeyBool("AzollaQueued")
)

// SearchAttributes lists every custom search attribute, for registration
// (each with its own type: AttrOverdue is a bool, AttrIssue a keyword
// list, the others keywords).
func SearchAttributes() []temporal.SearchAttributeKey {
	return []temporal.SearchAttributeKey{AttrObjectiveID, AttrStatus, AttrObjectiveType, AttrDiazotroph, AttrGateResult,
		AttrWorkOrderID, AttrBranch, AttrCommitSHA, AttrTrack, AttrOverdue, AttrPullRequest, AttrIssue, AttrQueued}
}

// Steps of the lifecycle, as reported by the state query.
const (
	StepLoading          = "loading"
	StepAwaitingApproval = "awaiting_approval"
	StepReadying         = "readying"
	StepScheduling       = "scheduling"
	StepRunning          = "running"
	StepGating           = "gating"
	StepPullRequest      = "opening_pull_request"
	StepAwaitingReview   = "awaiting_review"
	StepMerged           = "merged"
	StepAwaitingRetry    = "awaiting_retry"
	// StepAwaitingAnswer is StepAwaitingRetry after a round whose agent
	// asked a question: the answer (a retry with Answer) goes on.
	StepAwaitingAnswer = "awaiting_answer"
	// StepAwaitingRunSlot: the run waits for a slot under its
	// repository's or the deployment's limit (max_concurrent_runs).
	StepAwaitingRunSlot = "awaiting_run_slot"
	StepAwaitingUnblock = "awaiting_unblock"
	StepDone            = "done"
	StepRejected        = "rejected"
	StepMissing         = "missing"
)

// RunTaskQueue is the task queue of the heavy steps (agent runs,
// candidates, gate commands) of the lifecycles on taskQueue:
// <taskQueue>-runs. A worker polls it with at most worker.max_runs of
// them at once.
func RunTaskQueue(taskQueue string) string { return taskQueue + "-runs" }

// urgencyPriority is the priority key of each urgency: lower keys are
// dispatched first, out of Temporal's default five levels (3 is the
// default, an unknown urgency's).
var urgencyPriority = map[string]int{"CRITICAL": 1, "HIGH": 2, "NORMAL": 3, "LOW": 4}

// Priority is a run's place in its task queue: its objective's urgency
// orders who gets the next free run slot, and its repository is the
// fairness key, so that a repository with many queued runs shares the
// slots with the others (where the server weighs fairness).
func Priority(urgency, repository string) temporal.Priority {
	p := temporal.Priority{PriorityKey: urgencyPriority[urgency]}
	if repository != "" {
		p.FairnessKey = fairnessKey(repository)
	}
	return p
}

// fairnessKey is repository cut to the 64 bytes Temporal takes of a
// fairness key, with a hash of the whole when it is longer.
func fairnessKey(repository string) string {
	if len(repository) <= 64 {
		return repository
	}
	sum := sha256.Sum256([]byte(repository))
	return repository[:47] + "#" + hex.EncodeToString(sum[:8])
}
