package workflows

import "go.temporal.io/sdk/workflow"

// Change ids of ObjectiveWorkflow, one per change to the commands it emits
// (see doc.go). Each is asked once, at the start of every run, so a run
// keeps the behaviour it started with for its whole life.
const (
	// changeWakeReloads: a wake signal makes a waiting lifecycle read its
	// objective from the store again (before: wakes were drained unread).
	changeWakeReloads = "wake-reloads"
	// changeFinishHandlers: every completion, failure included, waits for
	// the update handlers to finish, answering a pending decision first
	// (before: only continue-as-new waited).
	changeFinishHandlers = "finish-handlers"
	// changeProvenanceAttrs: the lifecycle upserts AzollaWorkOrderId,
	// AzollaBranch and AzollaCommitSha.
	changeProvenanceAttrs = "provenance-attributes"
	// changeLocalStoreSteps: Load, Ready and Reject run as local activities,
	// inside the workflow task that asks for them (before: activities, each
	// a round trip through the server and one more workflow task).
	changeLocalStoreSteps = "local-store-steps"
	// changeOneUpsertPerRun: the IN_PROGRESS status Schedule sets and the
	// attributes of the workorder about to run go in one upsert (before:
	// two, in the same workflow task).
	changeOneUpsertPerRun = "one-upsert-per-run"
	// changeOverdueAttribute: the Overdue signal (from the deadline
	// monitor) makes the lifecycle upsert AzollaOverdue=true (before: the
	// signal was left unread).
	changeOverdueAttribute = "overdue-attribute"
)

// versions is what the run's history says of each change.
type versions struct {
	wakeReloads, finishHandlers, provenanceAttrs, localStoreSteps, oneUpsertPerRun, overdueAttribute bool
}

func getVersions(ctx workflow.Context) versions {
	on := func(change string) bool {
		return workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1) == 1
	}
	return versions{
		wakeReloads:      on(changeWakeReloads),
		finishHandlers:   on(changeFinishHandlers),
		provenanceAttrs:  on(changeProvenanceAttrs),
		localStoreSteps:  on(changeLocalStoreSteps),
		oneUpsertPerRun:  on(changeOneUpsertPerRun),
		overdueAttribute: on(changeOverdueAttribute),
	}
}
