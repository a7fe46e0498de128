package activities_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
)

func dollars(v float64) *float64 { return &v }

// costing is a run that reports cost dollars and fails its gate (no
// content) with notes, or passes when pass is set.
func costing(cost float64, notes string, pass bool) func(context.Context, diazotroph.Request) (diazotroph.Result, error) {
	return func(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
		res, err := okResult(ctx, req)
		if !pass {
			res.Content = ""
		}
		res.Notes = notes
		res.Metadata.Generator = "command"
		res.Metadata.RunReport = &domain.RunReport{Model: "agent-1", CostUSD: &cost}
		return res, err
	}
}

// round runs and gates the objective's open workorder.
func (tb *testBundle) round(t *testing.T, wo *activities.WorkOrderRef) activities.GateResult {
	t.Helper()
	ctx := context.Background()
	_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
	require.NoError(t, err)
	res, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
	require.NoError(t, err)
	return res
}

// retried retries obj-1 and schedules its event.
func (tb *testBundle) retried(t *testing.T) *activities.WorkOrderRef {
	t.Helper()
	ev := tb.ready(t, "obj-1", activities.ReadyRetry)
	res, err := tb.steps.Schedule(context.Background(), activities.ScheduleInput{EventID: ev.EventID})
	require.NoError(t, err)
	require.Equal(t, domain.ReasonScheduled, res.Reason)
	return res.WorkOrder
}

func TestBudget_SpentStopsTheNextRoundUntilRaised(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.newObjective(t, "obj-1", func(o *domain.Objective) { o.BudgetUSD = dollars(2) })
		ev := tb.ready(t, "obj-1", activities.ReadyApprove)
		sr, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
		require.NoError(t, err)
		wo := sr.WorkOrder
		require.Equal(t, dollars(2), tb.workOrder(t, wo.WorkOrderID).BudgetUSDRemaining)

		tb.fake.exec = costing(1.5, "nothing changed", false)
		g := tb.round(t, wo)
		require.Equal(t, domain.PauseGateFailed, g.Pause.Reason, "$1.50 of $2: the budget is not spent")

		wo = tb.retried(t)
		require.Equal(t, dollars(0.5), tb.workOrder(t, wo.WorkOrderID).BudgetUSDRemaining,
			"the run is told what is left")
		tb.fake.exec = costing(1, "something else went wrong", false)
		g = tb.round(t, wo)
		calls := tb.fake.Calls()
		require.Equal(t, dollars(0.5), calls[len(calls)-1].WorkOrder.BudgetUSDRemaining, "the executor gets it")
		require.Equal(t, domain.GateFail, g.GateResult, "the run's outcome stands: it is gated as usual")
		require.Equal(t, domain.PauseBudgetSpent, g.Pause.Reason)
		require.Equal(t, []string{pause.ReviewGateFailure, pause.AddBudget, pause.Retry}, g.Pause.ActionKinds)
		require.Equal(t, "Spent $2.50 of its $2.00 budget (over by $0.50): raise the budget to run again",
			g.Pause.PrioritizedActions[1])

		_, err = tb.steps.Ready(ctx, activities.ReadyInput{ObjectiveID: "obj-1", Mode: activities.ReadyRetry})
		var spent *budget.SpentError
		require.True(t, errors.As(err, &spent), "got %v", err)
		require.ErrorContains(t, err, "has spent $2.50 of its $2.00 budget")
		require.Equal(t, domain.StatusTodo, tb.objective(t, "obj-1").Status, "the refused retry changed nothing")
		require.Len(t, tb.workOrders(t, "obj-1"), 2)

		_, err = tb.store.SetObjectiveBudget(ctx, store.SetObjectiveBudgetParams{ObjectiveID: "obj-1", BudgetUSD: dollars(5)})
		require.NoError(t, err)
		wo = tb.retried(t)
		require.Equal(t, dollars(2.5), tb.workOrder(t, wo.WorkOrderID).BudgetUSDRemaining)
	})
}

func TestBudget_PassPastTheBudgetRecordsTheOverrun(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.newObjective(t, "obj-1", func(o *domain.Objective) { o.BudgetUSD = dollars(1) })
		ev := tb.ready(t, "obj-1", activities.ReadyApprove)
		sr, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
		require.NoError(t, err)
		tb.fake.exec = costing(3.25, "done", true)
		g := tb.round(t, sr.WorkOrder)
		require.Equal(t, domain.GatePass, g.GateResult, "the money is spent and the work is real")
		require.Equal(t, domain.StatusDone, g.Status)
		require.Equal(t, domain.PauseRunComplete, g.Pause.Reason)
		require.Contains(t, g.Pause.ActionKinds, pause.ReviewSpend)
		require.Contains(t, g.Pause.PrioritizedActions, "Spent $3.25 of its $1.00 budget (over by $2.25)")
	})
}

func TestBudget_NoBudgetNoCapAndNoRemaining(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		tb.fake.exec = costing(50, "nothing changed", false)
		wo := tb.scheduled(t, "obj-1")
		require.Nil(t, tb.workOrder(t, wo.WorkOrderID).BudgetUSDRemaining)
		g := tb.round(t, wo)
		require.Equal(t, domain.PauseGateFailed, g.Pause.Reason)
		require.NotContains(t, g.Pause.ActionKinds, pause.ReviewSpend)
		tb.retried(t) // nothing caps it
	})
}

func TestBudget_SameFailureTwiceIsSaidSo(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		tb.fake.exec = costing(0, "no change at 0x7f3a after 3.2s", false)
		g := tb.round(t, tb.scheduled(t, "obj-1"))
		require.NotContains(t, g.Pause.ActionKinds, pause.ReviewRepeatedFailure, "no round before it")

		tb.fake.exec = costing(0, "no change at 0x9b21 after 0.4s", false)
		first := tb.workOrders(t, "obj-1")[0].WorkOrderID
		g = tb.round(t, tb.retried(t))
		require.Equal(t, domain.PauseGateFailed, g.Pause.Reason)
		require.Equal(t, []string{pause.ReviewGateFailure, pause.ReviewRepeatedFailure, pause.Retry}, g.Pause.ActionKinds)
		require.Contains(t, g.Pause.PrioritizedActions[1], first)

		tb.fake.exec = costing(0, "the build broke", false)
		g = tb.round(t, tb.retried(t))
		require.NotContains(t, g.Pause.ActionKinds, pause.ReviewRepeatedFailure, "another failure")
	})
}

func TestFailureFingerprint(t *testing.T) {
	t.Parallel()
	reason := func(cmd, took, tail string) string {
		return "gate command \"" + cmd + "\" exited 1 after " + took + "\noutput tail:\n" + tail
	}
	base := reason("go test ./...", "2.1s", "ok  \tpkg/a\t0.3s\n--- FAIL: TestX (0.01s)\n    x_test.go:12: expected 3, got 4\nFAIL\tpkg/b\t0.5s")
	same := reason("go test ./...", "9.9s", "ok  \tpkg/a\t1.3s\n--- FAIL: TestX (0.20s)\n    x_test.go:12: expected 3, got 4\nFAIL\tpkg/b\t0.1s")
	require.Equal(t, activities.FailureFingerprint(base), activities.FailureFingerprint(same),
		"durations and numbers differ, the failure does not")
	for name, other := range map[string]string{
		"another command":    reason("make lint", "2.1s", "--- FAIL: TestX (0.01s)\n    x_test.go:12: expected 3, got 4\nFAIL\tpkg/b\t0.5s"),
		"another error line": reason("go test ./...", "2.1s", "--- FAIL: TestY (0.01s)\n    y_test.go:12: expected 3, got 4\nFAIL\tpkg/b\t0.5s"),
		"no gate command":    "patch did not apply: conflict in x.go",
	} {
		require.NotEqual(t, activities.FailureFingerprint(base), activities.FailureFingerprint(other), name)
	}
}

// spentRecorder is an Observer that keeps the runs it was told were spent.
type spentRecorder struct {
	mu    sync.Mutex
	spent []domain.BundleMetadata
}

func (*spentRecorder) WorkOrderExecuted(string)   {}
func (*spentRecorder) GateVerdict(string, string) {}
func (*spentRecorder) PullRequest(string)         {}
func (r *spentRecorder) RunSpent(m domain.BundleMetadata) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spent = append(r.spent, m)
}

// Each gate counts its run's spend once: a retried gate counts nothing.
func TestGate_CountsWhatTheRunSpentOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		rec := &spentRecorder{}
		tb.observe(rec)
		tb.fake.exec = costing(0.5, "nothing changed", false)
		wo := tb.scheduled(t, "obj-1")
		tb.round(t, wo)
		_, err := tb.steps.Gate(context.Background(), activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Len(t, rec.spent, 1)
		require.Equal(t, 0.5, *rec.spent[0].RunReport.CostUSD)
	})
}
