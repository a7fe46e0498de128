package workflows_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/internal/store"
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
	b.env.OnActivity(a.Load, mock.Anything, objID).Return(view(store.StatusNew), nil).Once()

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
	b.env.OnGetVersion("overdue-attribute", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	b.env.OnActivity(a.Load, mock.Anything, objID).Return(view(store.StatusNew), nil).Once()

	b.at(time.Minute, func() { b.env.SignalWorkflow(workflows.Overdue, nil) })
	b.cancelAt(2 * time.Minute)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	b.canceled()
	require.Zero(t, b.overdueUpserts())
}
