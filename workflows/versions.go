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
	// changeLocalStoreSteps, version 1: Load, Ready and Reject run as
	// local activities, inside the workflow task that asks for them
	// (before: activities, each a round trip through the server and one
	// more workflow task). Version 2: Schedule too, for an objective that
	// names no repository (one that does is handed back and scheduled by
	// the activity), and the status Ready sets goes in the next upsert
	// instead of one of its own.
	changeLocalStoreSteps = "local-store-steps"
	// changeOneUpsertPerRun: the IN_PROGRESS status Schedule sets and the
	// attributes of the workorder about to run go in one upsert (before:
	// two, in the same workflow task).
	changeOneUpsertPerRun = "one-upsert-per-run"
	// changeOverdueAttribute, version 1: the Overdue signal (from the
	// deadline monitor) makes the lifecycle upsert AzollaOverdue=true
	// (before: the signal was left unread). Version 2: a lifecycle that
	// ends (DONE or rejected) while overdue sets it back to false, so that
	// AzollaOverdue = true lists what is overdue now.
	changeOverdueAttribute = "overdue-attribute"
	// changePullRequest: a PASS on a repository with a forge gets its pull
	// request (OpenPullRequest) and the lifecycle upserts
	// AzollaPullRequest. Unlike the others it is asked where it applies,
	// after such a PASS only: a run that never reaches one (every run of
	// a repository without a forge, every run recorded before the change,
	// whose gate could not ask for a pull request) carries no marker.
	changePullRequest = "pull-request"
	// changeRunSlots, version 1: the heavy steps (Run, RunCandidate, Gate)
	// go on the run task queue (RunTaskQueue), where each worker takes at
	// most worker.max_runs at once, so that the light steps never wait
	// behind them (before: on the lifecycle's own task queue). Version 2:
	// they carry the objective's urgency as their priority and its
	// repository as their fairness key. Version 3: a run (Run,
	// RunCandidate) that finds its repository's or the deployment's
	// limit reached answers SlotBusy, and the lifecycle queues for a slot
	// (AwaitRunSlot, on its own task queue, flagged AzollaQueued) and runs
	// again with the slot it was granted. Version 4: a gate without gate
	// commands stays on the lifecycle's task queue. Version 5: such a gate
	// runs first as a local activity, in the workflow task that learns the
	// run's result, and only a workorder whose diazotroph checks its work
	// itself is handed back to the Gate activity. Asked where it applies,
	// before a run's first heavy step, as changePullRequest is.
	changeRunSlots = "run-slots"
	// runSlotsPriority is changeRunSlots's version with priorities.
	runSlotsPriority workflow.Version = 2
	// runSlotsQueue is changeRunSlots's version whose runs queue for the
	// limits' slots.
	runSlotsQueue workflow.Version = 3
	// runSlotsLightGate is changeRunSlots's version whose gate takes a run
	// slot only when it runs the repository's gate commands
	// (WorkOrderRef.GateCommands); a gate that only checks the bundle is
	// a light step, on the lifecycle's queue.
	runSlotsLightGate workflow.Version = 4
	// runSlotsLocalGate is changeRunSlots's version whose light gate runs
	// as a local activity first (GateInput.Local).
	runSlotsLocalGate workflow.Version = 5
)

// versions is what the run's history says of each change.
type versions struct {
	wakeReloads, finishHandlers, provenanceAttrs, localStoreSteps, oneUpsertPerRun, overdueAttribute bool
	// localSchedule is version 2 of changeLocalStoreSteps.
	localSchedule bool
	// overdueCleared is version 2 of changeOverdueAttribute.
	overdueCleared bool
}

func getVersions(ctx workflow.Context) versions {
	on := func(change string) bool {
		return workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1) == 1
	}
	wakeReloads, finishHandlers, provenanceAttrs := on(changeWakeReloads), on(changeFinishHandlers), on(changeProvenanceAttrs)
	// The next version of an existing change id, not a new id: every id
	// costs each run a marker and a search attribute upsert at its start.
	local := workflow.GetVersion(ctx, changeLocalStoreSteps, workflow.DefaultVersion, 2)
	oneUpsert := on(changeOneUpsertPerRun)
	overdue := workflow.GetVersion(ctx, changeOverdueAttribute, workflow.DefaultVersion, 2)
	return versions{
		wakeReloads:      wakeReloads,
		finishHandlers:   finishHandlers,
		provenanceAttrs:  provenanceAttrs,
		localStoreSteps:  local >= 1,
		localSchedule:    local >= 2,
		oneUpsertPerRun:  oneUpsert,
		overdueAttribute: overdue >= 1,
		overdueCleared:   overdue >= 2,
	}
}
