package workflows_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// overdueUpserts counts the upserts that set AzollaOverdue.
func (b *testBundle) overdueUpserts() int {
	n := 0
	for _, keys := range b.upserts {
		if slices.Contains(keys, workflows.AttrOverdue.GetName()) {
			n++
		}
	}
	return n
}

// The deadline monitor's Overdue signal marks the lifecycle AzollaOverdue,
// once however often it comes, and changes nothing else: the objective
// still waits for approval.
func TestObjective_OverdueSignalSetsTheAttributeOnce(t *testing.T) {
	b := setup(t)
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()

	b.at(time.Minute, func() { b.env.SignalWorkflow(workflows.Overdue, nil) })
	b.at(2*time.Minute, func() { b.env.SignalWorkflow(workflows.Overdue, nil) })
	waiting := b.queryAt(3 * time.Minute)
	b.cancelAt(4 * time.Minute)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	b.canceled()
	require.Equal(t, workflows.StepAwaitingApproval, waiting.Step)
	require.Equal(t, "true", b.attrs[workflows.AttrOverdue.GetName()])
	require.Equal(t, 1, b.overdueUpserts())
}

// A lifecycle started before the change leaves the signal unread: its
// history has no such upsert to replay.
func TestObjective_OverdueSignalUnreadBeforeTheChange(t *testing.T) {
	b := setup(t)
	b.env.OnGetVersion("overdue-attribute", workflow.DefaultVersion, 2).Return(workflow.DefaultVersion)
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()

	b.at(time.Minute, func() { b.env.SignalWorkflow(workflows.Overdue, nil) })
	b.cancelAt(2 * time.Minute)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	b.canceled()
	require.Zero(t, b.overdueUpserts())
}

// A lifecycle that ends while overdue, approved to DONE or rejected, sets
// AzollaOverdue back to false: the filter AzollaOverdue = true lists what is
// overdue now.
func TestObjective_OverdueClearedWhenTheLifecycleEnds(t *testing.T) {
	for _, end := range []string{"done", "rejected"} {
		t.Run(end, func(t *testing.T) {
			b := setup(t)
			env := b.env
			env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
			b.at(time.Minute, func() { env.SignalWorkflow(workflows.Overdue, nil) })
			overdue := b.queryAt(90 * time.Second)
			yes := workflows.Decision{By: "ana"}
			if end == "done" {
				env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, yes)).Return(readied(eventA), nil).Once()
				env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
				env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
				env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(passed(), nil).Once()
				b.signalAt(2*time.Minute, workflows.Approve, yes)
			} else {
				env.OnActivity(steps.Reject, mock.Anything, activities.RejectInput{ObjectiveID: objID, By: "ana"}).
					Return(rejectedPause, nil).Once()
				b.signalAt(2*time.Minute, workflows.Reject, yes)
			}
			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			_, err := b.result()
			require.NoError(t, err)
			require.Equal(t, workflows.StepAwaitingApproval, overdue.Step)
			require.Equal(t, 2, b.overdueUpserts(), "set when overdue, cleared at the end")
			require.Equal(t, "false", b.attrs[workflows.AttrOverdue.GetName()])
		})
	}
}

// A run recorded at version 1 of the change keeps AzollaOverdue at the end.
func TestObjective_OverdueKeptAtTheEndBeforeTheChange(t *testing.T) {
	b := setup(t)
	b.env.OnGetVersion("overdue-attribute", workflow.DefaultVersion, 2).Return(workflow.Version(1))
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	b.env.OnActivity(steps.Reject, mock.Anything, activities.RejectInput{ObjectiveID: objID, By: "ana"}).
		Return(rejectedPause, nil).Once()
	b.at(time.Minute, func() { b.env.SignalWorkflow(workflows.Overdue, nil) })
	b.signalAt(2*time.Minute, workflows.Reject, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	_, err := b.result()
	require.NoError(t, err)
	require.Equal(t, 1, b.overdueUpserts())
	require.Equal(t, "true", b.attrs[workflows.AttrOverdue.GetName()])
}
