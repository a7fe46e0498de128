package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// Where a (re)started lifecycle picks up, from what Load finds in the store.

func TestObjective_MissingObjectiveEnds(t *testing.T) {
	b := setup(t)
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(activities.ObjectiveView{ObjectiveID: objID}, nil).Once()

	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	b.done(workflows.State{ObjectiveID: objID, Step: workflows.StepMissing})
	require.Equal(t, map[string]string{"AzollaObjectiveId": objID}, b.attrs)
}

func TestObjective_PendingEventIsScheduledFirst(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		status   domain.Status // at load
		schedule activities.ScheduleResult
		want     workflows.State
	}{
		{"missing ticket", domain.StatusTodo,
			activities.ScheduleResult{Reason: domain.ReasonMissingTicket, ObjectiveID: objID},
			workflows.State{ObjectiveID: objID, Status: domain.StatusTodo, Step: workflows.StepMissing}},
		{"non-executable, done", domain.StatusDone,
			activities.ScheduleResult{Reason: domain.ReasonNonExecutableStatus, ObjectiveID: objID, Status: domain.StatusDone},
			workflows.State{ObjectiveID: objID, Status: domain.StatusDone, Step: workflows.StepDone}},
		{"non-executable, done meanwhile", domain.StatusTodo,
			activities.ScheduleResult{Reason: domain.ReasonNonExecutableStatus, ObjectiveID: objID, Status: domain.StatusDone},
			workflows.State{ObjectiveID: objID, Status: domain.StatusDone, Step: workflows.StepDone}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			v := view(tc.status)
			v.PendingEventID = eventA
			b.env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()
			b.env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(tc.schedule, nil).Once()

			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			b.done(tc.want)
		})
	}
}

// A TODO objective with no event (written straight into the store) gets its
// TICKET_READY from Ready(resume), then runs.
func TestObjective_TodoWithoutEventResumesThenSchedules(t *testing.T) {
	b := setup(t)
	env := b.env
	env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusTodo), nil).Once()
	env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyResume)).Return(readied(eventA), nil).Once()
	env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
	env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(passed(), nil).Once()

	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	p := runComplete
	b.done(workflows.State{ObjectiveID: objID, Status: domain.StatusDone, Step: workflows.StepDone,
		WorkOrderIDs: []string{woA.WorkOrderID}, GateResult: domain.GatePass, GateReason: "output bundle valid", LastPause: &p})
}

// An IN_PROGRESS objective with an open workorder is a lifecycle cut short
// mid-run: the next one runs and gates that workorder, and schedules nothing.
func TestObjective_InProgressWithOpenWorkOrderRunsAndGates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		pending string // a stale unprocessed event at load
		carried []string
		want    []string
	}{
		{"new workorder", "", []string{woA.WorkOrderID}, []string{woA.WorkOrderID, woB.WorkOrderID}},
		{"workorder already listed", "", []string{woA.WorkOrderID, woB.WorkOrderID}, []string{woA.WorkOrderID, woB.WorkOrderID}},
		{"stale pending event", eventA, nil, []string{woB.WorkOrderID}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			env := b.env
			v := view(domain.StatusInProgress)
			v.OpenWorkOrder, v.PendingEventID = &woB, tc.pending
			env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()
			if tc.pending != "" {
				env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(tc.pending)).Return(
					activities.ScheduleResult{Reason: domain.ReasonNonExecutableStatus, ObjectiveID: objID,
						Status: domain.StatusInProgress}, nil).Once()
			}
			env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woB.WorkOrderID, Queue: true}).Return(ran(woB), nil).Once()
			env.OnActivity(steps.Gate, mock.Anything, gateIn(woB)).Return(passed(), nil).Once()

			b.execute(workflows.ObjectiveInput{ObjectiveID: objID, Round: 4, WorkOrderIDs: tc.carried})

			p := runComplete
			b.done(workflows.State{ObjectiveID: objID, Status: domain.StatusDone, Step: workflows.StepDone, Round: 4,
				WorkOrderIDs: tc.want, GateResult: domain.GatePass, GateReason: "output bundle valid", LastPause: &p})
		})
	}
}

// Run's heartbeat timeout is the lease, so a dead worker's attempt is
// retried once its claim has lapsed; its start-to-close leaves the budget
// room plus two leases.
func TestObjective_RunHeartbeatTimeoutIsTheLease(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name             string
		lease            time.Duration
		wantHeartbeat    time.Duration
		wantStartToClose time.Duration
	}{
		// The budget (90 s), the setup's allowance (a patch run's), two
		// leases and a minute.
		{"configured lease", 45 * time.Second, 45 * time.Second, 90*time.Second + 6*time.Hour + 90*time.Second + time.Minute},
		{"no lease defaults to a minute", 0, time.Minute, 90*time.Second + 6*time.Hour + 2*time.Minute + time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			env := b.env
			v := view(domain.StatusInProgress)
			v.OpenWorkOrder, v.LeaseTTL = &woA, tc.lease
			env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()
			var info activity.Info
			env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(
				func(ctx context.Context, in activities.RunInput) (activities.RunResult, error) {
					info = activity.GetInfo(ctx)
					return ran(woA), nil
				}).Once()
			env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(passed(), nil).Once()

			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			require.Equal(t, tc.wantHeartbeat, info.HeartbeatTimeout)
			require.Equal(t, tc.wantStartToClose, info.StartToCloseTimeout)
			s, err := b.result()
			require.NoError(t, err)
			require.Equal(t, workflows.StepDone, s.Step)
		})
	}
}

// A cancelled lifecycle stops at once: a Run cut short by the cancellation is
// not gated as a failure.
func TestObjective_CancelDuringRunSkipsGate(t *testing.T) {
	b := setup(t)
	env := b.env
	v := view(domain.StatusInProgress)
	v.OpenWorkOrder = &woA
	env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).
		After(time.Hour).Return(ran(woA), nil).Maybe()

	running := b.queryAt(time.Minute)
	b.cancelAt(2 * time.Minute)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	require.Equal(t, workflows.StepRunning, running.Step)
	require.Equal(t, woA.WorkOrderID, running.CurrentWorkOrderID)
	b.canceled()
	env.AssertActivityNotCalled(t, "Gate", mock.Anything, mock.Anything)
	require.Equal(t, workflows.StepRunning, b.state().Step, "a cancelled run is not taken to the gate")
}

// A step that fails for good fails the lifecycle, and the state says why.
func TestObjective_StepFailureFailsTheLifecycle(t *testing.T) {
	t.Parallel()
	boom := func(msg string) error {
		return temporal.NewNonRetryableApplicationError(msg, activities.ErrTypeNotFound, nil)
	}
	inProgress := view(domain.StatusInProgress)
	inProgress.OpenWorkOrder = &woA
	pending := view(domain.StatusTodo)
	pending.PendingEventID = eventA
	cases := []struct {
		name    string
		mock    func(b *testBundle)
		approve string // decision sent at 1m, "" for none
		wantErr string
		step    string
	}{
		{"load", func(b *testBundle) {
			b.env.OnActivity(steps.Load, mock.Anything, objID).Return(activities.ObjectiveView{}, boom("store is gone")).Once()
		}, "", "store is gone", workflows.StepLoading},
		{"in progress without a workorder", func(b *testBundle) {
			b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusInProgress), nil).Once()
		}, "", "objective obj-1 is IN_PROGRESS without an open workorder", workflows.StepLoading},
		{"schedule", func(b *testBundle) {
			b.env.OnActivity(steps.Load, mock.Anything, objID).Return(pending, nil).Once()
			b.env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).
				Return(activities.ScheduleResult{}, boom("event vanished")).Once()
		}, "", "event vanished", workflows.StepScheduling},
		{"gate", func(b *testBundle) {
			b.env.OnActivity(steps.Load, mock.Anything, objID).Return(inProgress, nil).Once()
			b.env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
			b.env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).
				Return(activities.GateResult{}, boom("workorder vanished")).Once()
		}, "", "workorder vanished", workflows.StepGating},
		{"approve", func(b *testBundle) {
			b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
			b.env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).
				Return(activities.ReadyResult{}, boom("objective vanished")).Once()
		}, workflows.Approve, "objective vanished", workflows.StepReadying},
		{"reject", func(b *testBundle) {
			b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
			b.env.OnActivity(steps.Reject, mock.Anything, activities.RejectInput{ObjectiveID: objID, By: "ana"}).
				Return(domain.PauseState{}, boom("objective vanished")).Once()
		}, workflows.Reject, "objective vanished", workflows.StepAwaitingApproval},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			tc.mock(b)
			var u *update
			if tc.approve != "" {
				u = b.updateAt(time.Minute, tc.approve, workflows.Decision{By: "ana"})
			}
			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			err := b.env.GetWorkflowError()
			require.ErrorContains(t, err, tc.wantErr)
			s := b.state()
			require.Equal(t, tc.step, s.Step)
			require.Contains(t, s.Error, tc.wantErr)
			if u != nil {
				require.True(t, u.completed, u)
				require.ErrorContains(t, u.err, tc.wantErr)
			}
		})
	}
}

// A patch run's allowance covers the longest setup the configuration
// accepts.
func TestObjective_SetupAllowanceIsTheLongestSetup(t *testing.T) {
	t.Parallel()
	require.Equal(t, config.MaxSetupBudget, workflows.SetupAllowance)
}
