package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
)

func TestLoad_UnknownObjectiveIsNotFoundWithoutError(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		v, err := tb.steps.Load(context.Background(), "ghost")
		require.NoError(t, err)
		require.Equal(t, activities.ObjectiveView{ObjectiveID: "ghost", LeaseTTL: testLease}, v)
	})
}

// TestLoad_FollowsTheLifecycle walks one objective through a failed run and
// a retried, passing one, and checks what Load sees at every step.
func TestLoad_FollowsTheLifecycle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		load := func() activities.ObjectiveView {
			t.Helper()
			v, err := tb.steps.Load(ctx, "obj-1")
			require.NoError(t, err)
			require.True(t, v.Found)
			require.Equal(t, "obj-1", v.ObjectiveID)
			require.Equal(t, "TICKET", v.ObjectiveType)
			require.Equal(t, testLease, v.LeaseTTL)
			return v
		}
		schedule := func(eventID string) *activities.WorkOrderRef {
			t.Helper()
			res, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: eventID})
			require.NoError(t, err)
			require.NotNil(t, res.WorkOrder)
			return res.WorkOrder
		}
		runAndGate := func(wo *activities.WorkOrderRef) activities.GateResult {
			t.Helper()
			_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
			require.NoError(t, err)
			v := load()
			require.Equal(t, &activities.WorkOrderRef{WorkOrderID: wo.WorkOrderID, DiazotrophType: fakeType,
				BudgetMS: testBudget.Milliseconds(), Status: domain.WorkOrderExecuted, BranchName: wo.BranchName,
				Urgency: "NORMAL"}, v.OpenWorkOrder,
				"an executed workorder stays open until gated")
			res, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
			require.NoError(t, err)
			return res
		}

		tb.newObjective(t, "obj-1", nil)
		v := load()
		require.Equal(t, domain.StatusNew, v.Status)
		require.Empty(t, v.PendingEventID)
		require.Nil(t, v.OpenWorkOrder)
		require.Nil(t, v.LastPause)

		ev := tb.ready(t, "obj-1", activities.ReadyApprove)
		v = load()
		require.Equal(t, domain.StatusTodo, v.Status)
		require.Equal(t, int64(1), v.StatusSeq)
		require.Equal(t, ev.EventID, v.PendingEventID)

		first := schedule(ev.EventID)
		v = load()
		require.Equal(t, domain.StatusInProgress, v.Status)
		require.Empty(t, v.PendingEventID, "the event is processed")
		require.Equal(t, first, v.OpenWorkOrder)

		tb.fake.exec = returning(diazotroph.Result{Title: "nothing", Notes: "no change needed", RunnerStatus: domain.RunnerOK})
		failed := runAndGate(first)
		require.Equal(t, domain.GateFail, failed.GateResult)
		v = load()
		require.Equal(t, domain.StatusTodo, v.Status)
		require.Equal(t, domain.GateBlocker(first.WorkOrderID), v.BlockerRef)
		require.Nil(t, v.OpenWorkOrder, "a gated workorder is closed")
		require.Equal(t, &failed.Pause, v.LastPause)

		retry := tb.ready(t, "obj-1", activities.ReadyRetry)
		v = load()
		require.Equal(t, retry.EventID, v.PendingEventID)
		require.Empty(t, v.BlockerRef)
		require.Equal(t, &failed.Pause, v.LastPause)

		second := schedule(retry.EventID)
		require.NotEqual(t, first.WorkOrderID, second.WorkOrderID)
		require.Equal(t, second, load().OpenWorkOrder, "the newest open workorder")

		tb.fake.exec = okResult
		passed := runAndGate(second)
		require.Equal(t, domain.GatePass, passed.GateResult)
		v = load()
		require.Equal(t, domain.StatusDone, v.Status)
		require.Nil(t, v.OpenWorkOrder)
		require.Empty(t, v.PendingEventID)
		require.Equal(t, &passed.Pause, v.LastPause, "the newest pause state")
		require.Len(t, tb.pauses(t, "obj-1"), 2)
	})
}
