package activities_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/lifecycle/pause"
)

// After a failed gate, the retry's workorder is scheduled from a snapshot
// that freezes what went wrong: the previous attempt's gate reason and the
// tail of its output, and the human's comment, as related yields and in the
// prompt every generator reads. The decision is recorded on its event.
func TestSchedule_RetryCarriesTheGateFeedbackAndTheComment(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		longOutput := strings.Repeat("+ compiling...\n", 2000) + "+ main.go:3: undefined: frobnicate\n"
		tb.fake.exec = returning(diazotroph.Result{Title: "attempt 1", Content: longOutput,
			Notes: "error: patch failed: main.go:3\nthe hunk does not match", RunnerStatus: domain.RunnerApplyFailed})
		first := tb.scheduled(t, "obj-1")
		_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: first.WorkOrderID})
		require.NoError(t, err)
		gated, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: first.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, gated.GateResult)

		r, err := tb.steps.Ready(ctx, activities.ReadyInput{ObjectiveID: "obj-1", Mode: activities.ReadyRetry,
			By: "ana", Comment: "frobnicate lives in pkg/frob: import it"})
		require.NoError(t, err)
		ev := tb.event(t, r.EventID)
		require.Equal(t, "ana", ev.DecidedBy, "the event records who decided")
		require.Equal(t, "frobnicate lives in pkg/frob: import it", ev.Comment)

		res, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: r.EventID})
		require.NoError(t, err)
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		snap, err := tb.store.GetContextSnapshot(ctx, tb.workOrder(t, res.WorkOrder.WorkOrderID).ContextSnapshotID)
		require.NoError(t, err)
		require.Len(t, snap.RelatedYieldRefs, 2)
		prev, comment := snap.RelatedYieldRefs[0], snap.RelatedYieldRefs[1]
		require.Equal(t, domain.YieldPreviousAttempt, prev.Kind)
		require.Equal(t, first.WorkOrderID, prev.Ref)
		require.Equal(t, domain.GateFail, prev.GateResult)
		require.Equal(t, gated.GateReason, prev.GateReason)
		require.LessOrEqual(t, len([]rune(prev.OutputTail)), 8192, "the output is bounded")
		require.True(t, strings.HasSuffix(prev.OutputTail, "main.go:3: undefined: frobnicate"), "its tail is kept")
		require.True(t, strings.HasPrefix(prev.OutputTail, "[... earlier output cut ...]"), "the cut is said")
		require.Equal(t, domain.YieldRef{Kind: domain.YieldHumanComment, Ref: r.EventID, By: "ana",
			Comment: "frobnicate lives in pkg/frob: import it"}, comment)

		for _, want := range []string{"Previous attempt " + first.WorkOrderID, "judged FAIL",
			"patch did not apply: error: patch failed: main.go:3", "main.go:3: undefined: frobnicate", "Comment from ana",
			"frobnicate lives in pkg/frob"} {
			require.Contains(t, snap.FullPromptText, want, "the prompt tells the generator")
		}
	})
}

// A first attempt has nothing to draw on: no yields, no feedback section.
func TestSchedule_FirstAttemptHasNoYields(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		wo := tb.scheduled(t, "obj-1")
		snap, err := tb.store.GetContextSnapshot(context.Background(), tb.workOrder(t, wo.WorkOrderID).ContextSnapshotID)
		require.NoError(t, err)
		require.Empty(t, snap.RelatedYieldRefs)
		require.NotContains(t, snap.FullPromptText, "Previous attempt")
	})
}

// Readiness bounds the decision it records and makes who decided one safe
// line; an oversized comment is cut, not refused (the lifecycle must go on).
func TestReady_BoundsTheRecordedDecision(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		tb.newObjective(t, "obj-1", nil)
		r, err := tb.steps.Ready(context.Background(), activities.ReadyInput{ObjectiveID: "obj-1",
			Mode: activities.ReadyApprove, By: "ana\x1b[31m", Comment: strings.Repeat("é", 5000)})
		require.NoError(t, err)
		ev := tb.event(t, r.EventID)
		require.NotContains(t, ev.DecidedBy, "\x1b")
		require.Equal(t, 4096, len([]rune(ev.Comment)))

		// Escaping may make a name longer than the field allows: it is cut
		// after escaping, not refused.
		tb.newObjective(t, "obj-2", nil)
		r, err = tb.steps.Ready(context.Background(), activities.ReadyInput{ObjectiveID: "obj-2",
			Mode: activities.ReadyApprove, By: strings.Repeat("\x1b", 200)})
		require.NoError(t, err)
		require.Len(t, tb.event(t, r.EventID).DecidedBy, 200)
	})
}

// unpushedChecker passes a patch and says its branch was not pushed.
type unpushedChecker struct{ *fakeDiazotroph }

func (unpushedChecker) Check(context.Context, diazotroph.Check) (diazotroph.Verdict, error) {
	return diazotroph.Verdict{Pass: true, Reason: "gate commands passed", Unpushed: true}, nil
}

// When the work branch was not pushed, the pause state says so before the
// workspace holding it may be pruned; the retention sets the words.
func TestGate_WarnsWhenTheBranchWasNotPushed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.steps.Diazotrophs = diazotroph.NewRegistry(unpushedChecker{tb.fake})
		tb.steps.Retention = 7 * 24 * time.Hour
		tb.fake.exec = func(_ context.Context, req diazotroph.Request) (diazotroph.Result, error) {
			res, _ := okResult(ctx, req)
			res.Metadata.CommitSHA = testSHA
			return res, nil
		}
		wo := tb.scheduled(t, "obj-1")
		_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		g, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GatePass, g.GateResult)
		require.Equal(t, []string{pause.ReviewBranch, pause.KeepBranch, pause.ConfirmCompletion}, g.Pause.ActionKinds)
		require.Contains(t, g.Pause.PrioritizedActions[1], "azolla/obj-1")
		require.Contains(t, g.Pause.PrioritizedActions[1], "7 days")
		require.True(t, pause.Warned(&g.Pause))
		require.Equal(t, []*domain.PauseState{&g.Pause}, tb.pausesOf(t, "obj-1", wo.WorkOrderID))
	})
}
