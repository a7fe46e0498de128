// Package workflows holds azolla's workflow definitions: deterministic code
// that decides what runs next and leaves every I/O to the activities.
package workflows

import (
	"go.temporal.io/sdk/temporal"
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
	// Wake is the signal of SignalWithStart: it only makes the lifecycle look
	// at the store again.
	Wake = "wake"
)

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
)

// SearchAttributes lists every custom search attribute, for registration.
func SearchAttributes() []temporal.SearchAttributeKey {
	return []temporal.SearchAttributeKey{AttrObjectiveID, AttrStatus, AttrObjectiveType, AttrDiazotroph, AttrGateResult}
}

// Steps of the lifecycle, as reported by the state query.
const (
	StepLoading          = "loading"
	StepAwaitingApproval = "awaiting_approval"
	StepReadying         = "readying"
	StepScheduling       = "scheduling"
	StepRunning          = "running"
	StepGating           = "gating"
	StepAwaitingRetry    = "awaiting_retry"
	StepAwaitingUnblock  = "awaiting_unblock"
	StepDone             = "done"
	StepRejected         = "rejected"
	StepMissing          = "missing"
)
