package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// A TICKET_READY event written straight into the store while the lifecycle
// waits for approval is handled once a wake says to look: the lifecycle
// reads the objective again, schedules the event and runs to DONE.
func TestObjective_WakeWhileWaitingReloadsAndSchedulesTheStoredEvent(t *testing.T) {
	b := setup(t)
	env := b.env
	env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	approvedInTheStore := view(domain.StatusTodo)
	approvedInTheStore.PendingEventID = eventA
	env.OnActivity(steps.Load, mock.Anything, objID).Return(approvedInTheStore, nil).Once()
	env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
	env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(passed(), nil).Once()

	waiting := b.queryAt(time.Minute)
	b.signalAt(2*time.Minute, workflows.Wake, workflows.Decision{})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	require.Equal(t, workflows.StepAwaitingApproval, waiting.Step)
	s, err := b.result()
	require.NoError(t, err)
	require.Equal(t, workflows.StepDone, s.Step)
	require.Equal(t, []string{woA.WorkOrderID}, s.WorkOrderIDs)
}

// A lifecycle waiting for a retry whose objective was settled in the store
// meanwhile (DONE by hand) ends when woken, instead of waiting forever.
func TestObjective_WakeWhileAwaitingRetryFindsTheObjectiveDone(t *testing.T) {
	b := setup(t)
	env := b.env
	gateFail := view(domain.StatusTodo)
	gateFail.BlockerRef = domain.GateBlocker(woA.WorkOrderID)
	env.OnActivity(steps.Load, mock.Anything, objID).Return(gateFail, nil).Once()
	env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusDone), nil).Once()

	waiting := b.queryAt(time.Minute)
	b.signalAt(2*time.Minute, workflows.Wake, workflows.Decision{})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	require.Equal(t, workflows.StepAwaitingRetry, waiting.Step)
	s, err := b.result()
	require.NoError(t, err)
	require.Equal(t, workflows.StepDone, s.Step)
	require.Equal(t, domain.StatusDone, s.Status)
}

// The wake that starts a lifecycle (SignalWithStart) is answered by the
// first Load: it costs no second one.
func TestObjective_StartingWakeCostsNoReload(t *testing.T) {
	b := setup(t)
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	b.signalAt(0, workflows.Wake, workflows.Decision{})
	waiting := b.queryAt(time.Minute)
	b.cancelAt(2 * time.Minute)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	require.Equal(t, workflows.StepAwaitingApproval, waiting.Step)
	b.canceled()
}

// Runs recorded before wakes were read keep draining them unread, so their
// histories replay: with the change's DefaultVersion a wake loads nothing.
func TestObjective_RunsBeforeWakeReloadsIgnoreWakes(t *testing.T) {
	b := setup(t)
	b.env.OnGetVersion("wake-reloads", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	b.signalAt(time.Minute, workflows.Wake, workflows.Decision{})
	after := b.queryAt(2 * time.Minute)
	b.cancelAt(3 * time.Minute)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	require.Equal(t, workflows.StepAwaitingApproval, after.Step)
	b.canceled()
}

// A decision sent while the lifecycle loads, when the load then fails for
// good, is answered before the workflow fails: no update is left hanging.
func TestObjective_FailureAnswersTheUpdateWaitingToBeJudged(t *testing.T) {
	b := setup(t)
	b.env.OnActivity(steps.Load, mock.Anything, objID).After(time.Minute).Return(activities.ObjectiveView{}, invalidStatus()).Once()
	u := b.updateAt(time.Second, workflows.Approve, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	_, err := b.result()
	require.Error(t, err)
	require.True(t, u.completed, "the update accepted while loading is answered, not abandoned: %s", u)
	require.ErrorContains(t, u.err, "the lifecycle has ended")
}

// Runs recorded before handlers were awaited on every way out fail at once,
// as they did, leaving the update unanswered.
func TestObjective_RunsBeforeFinishHandlersFailAtOnce(t *testing.T) {
	b := setup(t)
	b.env.OnGetVersion("finish-handlers", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	b.env.OnActivity(steps.Load, mock.Anything, objID).After(time.Minute).Return(activities.ObjectiveView{}, invalidStatus()).Once()
	u := b.updateAt(time.Second, workflows.Approve, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	_, err := b.result()
	require.Error(t, err)
	require.True(t, u.accepted, u)
	require.False(t, u.completed, u)
}
