package workflows_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"github.com/azolla/azolla/workflows"
)

// The approval path of a NEW objective, decided by signal or by update.

func TestObjective_ApproveRunsToDone(t *testing.T) {
	t.Parallel()
	for _, viaUpdate := range []bool{false, true} {
		name := "signal"
		if viaUpdate {
			name = "update"
		}
		t.Run(name, func(t *testing.T) {
			b := setup(t)
			env := b.env
			env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
			env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana", Comment: "go"})).Return(readied(eventA), nil).Once()
			env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
			env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
			env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(passed(), nil).Once()

			waiting := b.queryAt(time.Minute)
			yes := workflows.Decision{By: "ana", Comment: "go"}
			var u *update
			if viaUpdate {
				u = b.updateAt(2*time.Minute, workflows.Approve, yes)
			} else {
				b.signalAt(2*time.Minute, workflows.Approve, yes)
			}
			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			require.Equal(t, workflows.State{ObjectiveID: objID, Status: domain.StatusNew,
				Step: workflows.StepAwaitingApproval}, *waiting)
			p := runComplete
			b.done(workflows.State{ObjectiveID: objID, Status: domain.StatusDone, Step: workflows.StepDone,
				WorkOrderIDs: []string{woA.WorkOrderID}, GateResult: domain.GatePass,
				GateReason: "output bundle valid", LastPause: &p})
			if viaUpdate {
				require.True(t, u.accepted, u)
				require.True(t, u.completed, u)
				require.NoError(t, u.err)
				require.Equal(t, workflows.DecisionResult{EventID: eventA}, u.result)
			}
			require.Equal(t, map[string]string{
				"AzollaObjectiveId":   objID,
				"AzollaObjectiveType": "TICKET",
				"AzollaStatus":        string(domain.StatusDone),
				"AzollaDiazotroph":    "PATCH_DIAZOTROPH",
				"AzollaGateResult":    domain.GatePass,
				"AzollaWorkOrderId":   woA.WorkOrderID,
				"AzollaBranch":        "azolla/" + objID,
				"AzollaCommitSha":     commitSHA,
			}, b.attrs, "the Web UI finds the lifecycle by its workorder, branch and commit")
			// TODO lasts from Ready to Schedule, one workflow task: it is
			// never upserted on its own.
			require.Equal(t, domain.StatusStrings([]domain.Status{domain.StatusNew, domain.StatusInProgress, domain.StatusDone}), b.statuses)
		})
	}
}

func TestObjective_RejectEndsNewObjective(t *testing.T) {
	t.Parallel()
	for _, viaUpdate := range []bool{false, true} {
		name := "signal"
		if viaUpdate {
			name = "update"
		}
		t.Run(name, func(t *testing.T) {
			b := setup(t)
			env := b.env
			env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
			env.OnActivity(steps.Reject, mock.Anything, activities.RejectInput{ObjectiveID: objID, By: "ana",
				Comment: "out of scope"}).Return(rejectedPause, nil).Once()

			no := workflows.Decision{By: "ana", Comment: "out of scope"}
			var u *update
			if viaUpdate {
				u = b.updateAt(time.Minute, workflows.Reject, no)
			} else {
				b.signalAt(time.Minute, workflows.Reject, no)
			}
			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			p := rejectedPause
			b.done(workflows.State{ObjectiveID: objID, Status: domain.StatusNew, Step: workflows.StepRejected, LastPause: &p})
			if viaUpdate {
				require.True(t, u.accepted, u)
				require.True(t, u.completed, u)
				require.NoError(t, u.err)
				require.Equal(t, workflows.DecisionResult{Pause: &p}, u.result)
			}
		})
	}
}

func TestObjective_RejectedObjectiveEndsAtOnce(t *testing.T) {
	b := setup(t)
	v := view(domain.StatusNew)
	v.LastPause = &rejectedPause
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()

	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	p := rejectedPause
	b.done(workflows.State{ObjectiveID: objID, Status: domain.StatusNew, Step: workflows.StepRejected, LastPause: &p})
}

// A NEW objective's earlier pause that is not a rejection (say an overdue
// notice) does not end it: it still waits for approval.
func TestObjective_NewObjectiveWithOtherPauseAwaitsApproval(t *testing.T) {
	b := setup(t)
	overdue := domain.PauseState{PauseStateID: "ps-obj-1-1-OVERDUE", ObjectiveID: objID, Reason: domain.PauseOverdue}
	v := view(domain.StatusNew)
	v.LastPause = &overdue
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()

	waiting := b.queryAt(time.Minute)
	b.cancelAt(2 * time.Minute)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	require.Equal(t, workflows.StepAwaitingApproval, waiting.Step)
	require.Equal(t, &overdue, waiting.LastPause)
	b.canceled()
}

func TestObjective_DecisionUpdateRefusedOutsideItsStep(t *testing.T) {
	t.Parallel()
	blocked := view(domain.StatusBlocked)
	blocked.BlockerRef = domain.BlockersOf(objID)
	gateFail := view(domain.StatusTodo)
	gateFail.BlockerRef = domain.GateBlocker(woA.WorkOrderID)
	cases := []struct {
		name     string
		view     activities.ObjectiveView
		decision string
		step     string
		reason   string
	}{
		{"approve while blocked", blocked, workflows.Approve, workflows.StepAwaitingUnblock, "approve is only possible while it is [NEW]"},
		{"reject after a failed gate", gateFail, workflows.Reject, workflows.StepAwaitingRetry, "reject is only possible while it is [NEW]"},
		{"retry while awaiting approval", view(domain.StatusNew), workflows.Retry, workflows.StepAwaitingApproval, "retry is only possible while it is [TODO BLOCKED]"},
		{"unblock while awaiting approval", view(domain.StatusNew), workflows.Unblock, workflows.StepAwaitingApproval, "unblock is only possible while it is [TODO BLOCKED]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			b.env.OnActivity(steps.Load, mock.Anything, objID).Return(tc.view, nil).Once()

			before := b.queryAt(time.Minute)
			u := b.updateAt(2*time.Minute, tc.decision, workflows.Decision{By: "ana"})
			after := b.queryAt(3 * time.Minute)
			b.cancelAt(4 * time.Minute)
			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			require.False(t, u.accepted, u)
			require.ErrorContains(t, u.rejected, tc.reason)
			require.Equal(t, tc.step, before.Step)
			require.Equal(t, *before, *after)
			b.canceled()
		})
	}
}

// A second approval while the first is being handled is refused; so is one
// once the objective has left NEW.
func TestObjective_ApproveRefusedOnceApproved(t *testing.T) {
	b := setup(t)
	env := b.env
	env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).After(time.Minute).Return(readied(eventA), nil).Once()
	env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).After(time.Hour).Return(ran(woA), nil).Once()
	env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(passed(), nil).Once()

	first := b.updateAt(time.Minute, workflows.Approve, workflows.Decision{By: "ana"})
	whileReadying := b.updateAt(time.Minute+time.Second, workflows.Approve, workflows.Decision{By: "bob"})
	whileRunning := b.updateAt(10*time.Minute, workflows.Approve, workflows.Decision{By: "eve"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	require.True(t, first.completed, first)
	require.Equal(t, eventA, first.result.EventID)
	require.ErrorContains(t, whileReadying.rejected, "approve decision is already being handled")
	require.False(t, whileReadying.accepted)
	require.ErrorContains(t, whileRunning.rejected, "objective obj-1 is IN_PROGRESS (running)")
	require.False(t, whileRunning.accepted)
	s, err := b.result()
	require.NoError(t, err)
	require.Equal(t, workflows.StepDone, s.Step)
}

// Signals the lifecycle cannot take now are dropped: the state does not
// change, and the lifecycle still takes the next valid decision.
func TestObjective_InvalidSignalsAreIgnored(t *testing.T) {
	t.Parallel()
	gateFail := view(domain.StatusTodo)
	gateFail.BlockerRef = domain.GateBlocker(woA.WorkOrderID)
	blocked := view(domain.StatusBlocked)
	blocked.BlockerRef = domain.BlockersOf(objID)
	cases := []struct {
		name    string
		view    activities.ObjectiveView
		invalid []string
		valid   string
		step    string
	}{
		{"retry and unblock while awaiting approval", view(domain.StatusNew),
			[]string{workflows.Retry, workflows.Unblock}, workflows.Reject, workflows.StepAwaitingApproval},
		{"approve and reject while awaiting retry", gateFail,
			[]string{workflows.Approve, workflows.Reject}, workflows.Retry, workflows.StepAwaitingRetry},
		{"approve and reject while awaiting unblock", blocked,
			[]string{workflows.Approve, workflows.Reject}, workflows.Unblock, workflows.StepAwaitingUnblock},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			env := b.env
			// Twice: the wake makes the waiting lifecycle read the store again,
			// which finds it unchanged.
			env.OnActivity(steps.Load, mock.Anything, objID).Return(tc.view, nil).Twice()
			switch tc.valid {
			case workflows.Reject:
				env.OnActivity(steps.Reject, mock.Anything, activities.RejectInput{ObjectiveID: objID, By: "ana"}).
					Return(rejectedPause, nil).Once()
			default:
				env.OnActivity(steps.Ready, mock.Anything, readyIn(tc.valid, workflows.Decision{By: "ana"})).Return(readied(eventB), nil).Once()
			}

			before := b.queryAt(time.Minute)
			for i, name := range tc.invalid {
				b.signalAt(2*time.Minute+time.Duration(i)*time.Second, name, workflows.Decision{By: "mallory"})
			}
			b.signalAt(2*time.Minute, workflows.Wake, workflows.Decision{})
			after := b.queryAt(3 * time.Minute)
			b.signalAt(4*time.Minute, tc.valid, workflows.Decision{By: "ana"})
			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			require.Equal(t, tc.step, before.Step)
			require.Equal(t, *before, *after)
			if tc.valid == workflows.Reject {
				s, err := b.result()
				require.NoError(t, err)
				require.Equal(t, workflows.StepRejected, s.Step)
			} else {
				require.Equal(t, 1, b.continuedAsNew().Round)
			}
		})
	}
}

// An approval signalled while the lifecycle is still loading (sent with or
// right after the start) is judged once Load has said the objective awaits
// approval, not dropped.
func TestObjective_ApproveSignalDuringLoadIsKept(t *testing.T) {
	b := setup(t)
	env := b.env
	env.OnActivity(steps.Load, mock.Anything, objID).After(time.Minute).Return(view(domain.StatusNew), nil).Once()
	env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).Return(readied(eventA), nil).Once()
	env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
	env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(passed(), nil).Once()

	loading := b.queryAt(time.Second)
	b.signalAt(2*time.Second, workflows.Approve, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	require.Equal(t, workflows.StepLoading, loading.Step)
	s, err := b.result()
	require.NoError(t, err)
	require.Equal(t, workflows.StepDone, s.Step)
}

// The heavy steps (Run, Gate) go on the run task queue, the light ones
// (Load, Ready, Schedule) stay on the lifecycle's, so a light step never
// waits behind a run.
// The run goes on the run task queue; the gate goes there too when it
// runs the repository's gate commands, and is a light step on the
// lifecycle's queue when it does not.
func TestObjective_HeavyStepsGoOnTheRunTaskQueue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		gateCommands bool
		runSlots     workflow.Version
		// gateQueue is "" where the gate runs as a local activity.
		gateQueue string
	}{
		{"gate commands", true, 5, "azolla-lifecycle-runs"},
		{"no gate command", false, 5, ""},
		{"no gate command, version 4", false, 4, "azolla-lifecycle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			env := b.env
			env.OnGetVersion("run-slots", workflow.DefaultVersion, 5).Return(tc.runSlots)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: "azolla-lifecycle"})
			queues := map[string]string{}
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				queues[info.ActivityType.Name] = info.TaskQueue
			})
			env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
			env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).Return(readied(eventA), nil).Once()
			urgent := woA
			urgent.Urgency, urgent.Repository = "CRITICAL", "https://git.example.com/acme/widgets.git"
			urgent.GateCommands = tc.gateCommands
			env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(urgent), nil).Once()
			env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
			gate := gateIn(urgent)
			gate.Local = gate.Local && tc.runSlots >= 5
			env.OnActivity(steps.Gate, mock.Anything, gate).Return(passed(), nil).Once()
			b.signalAt(time.Minute, workflows.Approve, workflows.Decision{By: "ana"})
			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			// Load, Ready and Schedule ran as local activities, in the
			// lifecycle's own workflow task, and so did a gate without
			// gate commands from version 5 on.
			want := map[string]string{"Run": "azolla-lifecycle-runs"}
			if tc.gateQueue != "" {
				want["Gate"] = tc.gateQueue
			}
			require.Equal(t, want, queues)
			// Their priorities (urgency, repository) are not passed on by
			// the SDK's test environment;
			// TestReplay_NewestGenerationRecordsEveryChange finds them in a
			// recorded history.
		})
	}
}

func TestObjective_ARunTurnedAwayForASlotQueuesAndRunsWithTheGrant(t *testing.T) {
	b := setup(t)
	env := b.env
	grant := slots.Grant{Claims: []domain.ClaimRecord{{ResourceType: domain.ResourceRunSlot, ResourceID: "all:0",
		OwnerID: "r1/" + woA.WorkOrderID, ClaimVersion: 3}}}
	env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).Return(readied(eventA), nil).Once()
	env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).
		Return(activities.RunResult{WorkOrderID: woA.WorkOrderID, SlotBusy: true}, nil).Once()
	var waited activities.SlotInput
	env.OnActivity(runSlots.AwaitRunSlot, mock.Anything, mock.Anything).After(time.Hour).
		Run(func(args mock.Arguments) { waited = args.Get(1).(activities.SlotInput) }).Return(grant, nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true, Slot: &grant}).
		Return(ran(woA), nil).Once()
	env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(passed(), nil).Once()
	b.signalAt(time.Minute, workflows.Approve, workflows.Decision{By: "ana"})
	queued := b.queryAt(30 * time.Minute)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	require.Equal(t, workflows.StepAwaitingRunSlot, queued.Step, "the lifecycle says it waits for a slot")
	require.Equal(t, woA.WorkOrderID, waited.Holder)
	require.Equal(t, woA.WorkOrderID, waited.WorkOrderID)
	require.False(t, waited.Since.IsZero())
	require.Equal(t, "false", b.attrs[workflows.AttrQueued.GetName()], "AzollaQueued is cleared once it has the slot")
	var flagged bool
	for _, keys := range b.upserts {
		flagged = flagged || slices.Contains(keys, workflows.AttrQueued.GetName())
	}
	require.True(t, flagged)
	s, err := b.result()
	require.NoError(t, err)
	require.Equal(t, domain.StatusDone, s.Status)
}

func TestObjective_BeforeTheQueueARunWaitsForItsSlotItself(t *testing.T) {
	b := setup(t)
	env := b.env
	env.OnGetVersion("run-slots", workflow.DefaultVersion, 5).Return(workflow.Version(2))
	env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).Return(readied(eventA), nil).Once()
	env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID}).Return(ran(woA), nil).Once()
	env.OnActivity(steps.Gate, mock.Anything, activities.GateInput{WorkOrderID: woA.WorkOrderID}).Return(passed(), nil).Once()
	b.signalAt(time.Minute, workflows.Approve, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})
	s, err := b.result()
	require.NoError(t, err)
	require.Equal(t, domain.StatusDone, s.Status)
	require.NotContains(t, b.attrs, workflows.AttrQueued.GetName())
}
