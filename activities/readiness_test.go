package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
)

var allModes = []string{activities.ReadyApprove, activities.ReadyRetry, activities.ReadyUnblock, activities.ReadyResume}

func TestReady_ApproveEmitsOneEventKeyedByStatusSeq(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		tb.newObjective(t, "obj-1", nil)
		res := tb.ready(t, "obj-1", activities.ReadyApprove)

		o := tb.objective(t, "obj-1")
		require.Equal(t, domain.StatusTodo, o.Status)
		require.Equal(t, int64(1), o.StatusSeq)
		require.Equal(t, activities.ReadyResult{EventID: res.EventID, Status: domain.StatusTodo, StatusSeq: 1}, res)
		evs := tb.events(t, "obj-1")
		require.Len(t, evs, 1)
		require.Equal(t, res.EventID, evs[0].EventID)
		require.Equal(t, domain.EventTicketReady, evs[0].EventType)
		require.Equal(t, o.StatusSeq, evs[0].TransitionSeq, "the event is keyed by the transition")
		require.False(t, evs[0].Processed)
	})
}

func TestReady_RetriedApproveReturnsSameEventAndEmitsNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		tb.newObjective(t, "obj-1", nil)
		first := tb.ready(t, "obj-1", activities.ReadyApprove)
		before := tb.objective(t, "obj-1")

		again := tb.ready(t, "obj-1", activities.ReadyApprove)
		require.Equal(t, first, again)
		require.Equal(t, before, tb.objective(t, "obj-1"), "no second transition")
		require.Len(t, tb.events(t, "obj-1"), 1, "no second event")
	})
}

func TestReady_ApproveRefusesObjectiveThatIsNotNew(t *testing.T) {
	for _, status := range []domain.Status{domain.StatusTodo, domain.StatusInProgress, domain.StatusDone, domain.StatusBlocked} {
		t.Run(string(status), func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				before := tb.newObjective(t, "obj-1", func(o *domain.Objective) { o.Status, o.StatusSeq = status, 2 })
				_, err := tb.steps.Ready(context.Background(), activities.ReadyInput{ObjectiveID: "obj-1",
					Mode: activities.ReadyApprove})
				requirePermanent(t, err, activities.ErrTypeInvalidStatus)
				require.Equal(t, before, tb.objective(t, "obj-1"), "nothing changed")
				require.Empty(t, tb.events(t, "obj-1"), "nothing emitted")
			})
		})
	}
}

func TestReady_RetryClearsBlockerRefAndEmitsAtNewSeq(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		tb.newObjective(t, "obj-1", func(o *domain.Objective) {
			o.Status, o.StatusSeq, o.BlockerRef = domain.StatusTodo, 3, "gate:wo-obj-1-1"
		})
		res := tb.ready(t, "obj-1", activities.ReadyRetry)

		o := tb.objective(t, "obj-1")
		require.Equal(t, domain.StatusTodo, o.Status)
		require.Empty(t, o.BlockerRef, "retry clears the blocker_ref")
		require.Equal(t, int64(4), o.StatusSeq)
		require.Equal(t, activities.ReadyResult{EventID: res.EventID, Status: domain.StatusTodo, StatusSeq: 4}, res)
		evs := tb.events(t, "obj-1")
		require.Len(t, evs, 1)
		require.Equal(t, res.EventID, evs[0].EventID)
		require.Equal(t, int64(4), evs[0].TransitionSeq)

		again := tb.ready(t, "obj-1", activities.ReadyRetry)
		require.Equal(t, res, again, "a retried retry finds its event")
		require.Equal(t, int64(4), tb.objective(t, "obj-1").StatusSeq)
		require.Len(t, tb.events(t, "obj-1"), 1)
	})
}

func TestReady_UnblockClearsBlockersRetryKeepsThem(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		blocked := func(o *domain.Objective) {
			o.Status, o.StatusSeq = domain.StatusBlocked, 2
			o.Blockers, o.BlockerRef = []string{"needs an API key"}, domain.BlockersOf(o.ObjectiveID)
		}
		tb.newObjective(t, "obj-unblock", blocked)
		tb.newObjective(t, "obj-retry", blocked)

		res := tb.ready(t, "obj-unblock", activities.ReadyUnblock)
		o := tb.objective(t, "obj-unblock")
		require.Equal(t, domain.StatusTodo, o.Status)
		require.Empty(t, o.Blockers, "unblock clears the blockers")
		require.Empty(t, o.BlockerRef)
		require.Equal(t, activities.ReadyResult{EventID: res.EventID, Status: domain.StatusTodo, StatusSeq: 3}, res)
		evs := tb.events(t, "obj-unblock")
		require.Len(t, evs, 1)
		require.Equal(t, int64(3), evs[0].TransitionSeq)
		require.Equal(t, res, tb.ready(t, "obj-unblock", activities.ReadyUnblock), "idempotent")
		require.Len(t, tb.events(t, "obj-unblock"), 1)

		tb.ready(t, "obj-retry", activities.ReadyRetry)
		o = tb.objective(t, "obj-retry")
		require.Equal(t, domain.StatusTodo, o.Status)
		require.Empty(t, o.BlockerRef)
		require.Equal(t, []string{"needs an API key"}, o.Blockers, "retry leaves the blockers to the scheduler")
	})
}

// TestReady_UnblockBeforeSchedulingClearsBlockers unblocks an approved
// objective whose event still waits for the scheduler: the human said the
// blockers are resolved, so they must be gone before the scheduler looks.
func TestReady_UnblockBeforeSchedulingClearsBlockers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.newObjective(t, "obj-1", func(o *domain.Objective) { o.Blockers = []string{"needs an API key"} })
		approved := tb.ready(t, "obj-1", activities.ReadyApprove)

		res := tb.ready(t, "obj-1", activities.ReadyUnblock)
		o := tb.objective(t, "obj-1")
		require.Empty(t, o.Blockers, "unblock clears the blockers")
		require.Equal(t, activities.ReadyResult{EventID: res.EventID, Status: domain.StatusTodo, StatusSeq: o.StatusSeq}, res)
		require.Equal(t, res, tb.ready(t, "obj-1", activities.ReadyUnblock), "idempotent")

		sched, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: approved.EventID})
		require.NoError(t, err)
		require.Equal(t, domain.ReasonScheduled, sched.Reason, "the waiting event now schedules work")
	})
}

func TestReady_ResumeEmitsForTodoWithoutEventOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		before := tb.newObjective(t, "obj-1", func(o *domain.Objective) { o.Status, o.StatusSeq = domain.StatusTodo, 2 })
		res := tb.ready(t, "obj-1", activities.ReadyResume)

		require.Equal(t, before, tb.objective(t, "obj-1"), "resume makes no transition")
		require.Equal(t, activities.ReadyResult{EventID: res.EventID, Status: domain.StatusTodo, StatusSeq: 2}, res)
		evs := tb.events(t, "obj-1")
		require.Len(t, evs, 1)
		require.Equal(t, res.EventID, evs[0].EventID)
		require.Equal(t, int64(2), evs[0].TransitionSeq)

		require.Equal(t, res, tb.ready(t, "obj-1", activities.ReadyResume))
		require.Len(t, tb.events(t, "obj-1"), 1, "no second event")
	})
}

func TestReady_ResumeRefusesObjectiveThatIsNotPlainTodo(t *testing.T) {
	cases := map[string]func(o *domain.Objective){
		"NEW":                 func(o *domain.Objective) {},
		"IN_PROGRESS":         func(o *domain.Objective) { o.Status, o.StatusSeq = domain.StatusInProgress, 2 },
		"TODO with blocker":   func(o *domain.Objective) { o.Status, o.StatusSeq, o.BlockerRef = domain.StatusTodo, 3, "gate:wo-1" },
		"BLOCKED":             func(o *domain.Objective) { o.Status, o.StatusSeq = domain.StatusBlocked, 2 },
		"DONE after its work": func(o *domain.Objective) { o.Status, o.StatusSeq = domain.StatusDone, 3 },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				before := tb.newObjective(t, "obj-1", edit)
				_, err := tb.steps.Ready(context.Background(), activities.ReadyInput{ObjectiveID: "obj-1",
					Mode: activities.ReadyResume})
				requirePermanent(t, err, activities.ErrTypeInvalidStatus)
				require.Equal(t, before, tb.objective(t, "obj-1"))
				require.Empty(t, tb.events(t, "obj-1"))
			})
		})
	}
}

func TestReady_UnknownObjectiveIsNotFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		for _, mode := range allModes {
			_, err := tb.steps.Ready(context.Background(), activities.ReadyInput{ObjectiveID: "ghost", Mode: mode})
			requirePermanent(t, err, activities.ErrTypeNotFound)
		}
		require.Empty(t, tb.events(t, "ghost"))
	})
}

func TestReject_NewObjectiveGetsOneRejectedPause(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		before := tb.newObjective(t, "obj-1", nil)
		in := activities.RejectInput{ObjectiveID: "obj-1", By: "alice", Comment: "too vague"}
		ps, err := tb.steps.Reject(ctx, in)
		require.NoError(t, err)

		require.Equal(t, "obj-1", ps.ObjectiveID)
		require.Equal(t, domain.PauseRejected, ps.Reason)
		require.Empty(t, ps.WorkOrderID)
		require.Len(t, ps.PrioritizedActions, 2)
		require.Equal(t, "Rejected by alice: too vague", ps.PrioritizedActions[0])
		stored := tb.pauses(t, "obj-1")
		require.Len(t, stored, 1)
		require.Equal(t, ps, *stored[0])
		require.Equal(t, before, tb.objective(t, "obj-1"), "the objective stays NEW")
		require.Empty(t, tb.events(t, "obj-1"))

		again, err := tb.steps.Reject(ctx, in)
		require.NoError(t, err)
		require.Equal(t, ps, again, "the same pause state")
		require.Len(t, tb.pauses(t, "obj-1"), 1)
	})
}

func TestReject_RefusesObjectiveThatIsNotNew(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.newObjective(t, "obj-1", nil)
		tb.ready(t, "obj-1", activities.ReadyApprove)
		before := tb.objective(t, "obj-1")

		_, err := tb.steps.Reject(ctx, activities.RejectInput{ObjectiveID: "obj-1", By: "alice"})
		requirePermanent(t, err, activities.ErrTypeInvalidStatus)
		require.Empty(t, tb.pauses(t, "obj-1"))
		require.Equal(t, before, tb.objective(t, "obj-1"))

		_, err = tb.steps.Reject(ctx, activities.RejectInput{ObjectiveID: "ghost"})
		requirePermanent(t, err, activities.ErrTypeNotFound)
	})
}
