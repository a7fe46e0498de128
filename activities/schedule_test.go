package activities_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// emit stores an unprocessed TICKET_READY event about subject at seq.
func (tb *testBundle) emit(t *testing.T, subject string, seq int64) string {
	t.Helper()
	ev, _, err := tb.store.EmitEvent(context.Background(),
		storetest.Event(fmt.Sprintf("ev-%s-%d", subject, seq), subject, seq, storetest.T0))
	require.NoError(t, err)
	return ev.EventID
}

// TestSchedule_TerminalPaths runs every terminal path of scheduling (docs/protocol/lifecycle.md#scheduling)
// and checks what they share: the event processed exactly once with its
// reason, the claim released, and a re-run that changes nothing.
func TestSchedule_TerminalPaths(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(t *testing.T, tb *testBundle) (eventID string)
		reason  string
		check   func(t *testing.T, tb *testBundle, eventID string, res activities.ScheduleResult)
	}{{
		name:    "subject missing",
		prepare: func(t *testing.T, tb *testBundle) string { return tb.emit(t, "ghost", 1) },
		reason:  domain.ReasonMissingTicket,
		check: func(t *testing.T, tb *testBundle, _ string, res activities.ScheduleResult) {
			require.Equal(t, activities.ScheduleResult{Reason: domain.ReasonMissingTicket, ObjectiveID: "ghost"}, res)
		},
	}, {
		name: "objective NEW",
		prepare: func(t *testing.T, tb *testBundle) string {
			tb.newObjective(t, "obj-1", nil)
			return tb.emit(t, "obj-1", 0)
		},
		reason: domain.ReasonNonExecutableStatus,
		check:  nonExecutable(domain.StatusNew),
	}, {
		name: "objective DONE",
		prepare: func(t *testing.T, tb *testBundle) string {
			tb.newObjective(t, "obj-1", func(o *domain.Objective) { o.Status, o.StatusSeq = domain.StatusDone, 3 })
			return tb.emit(t, "obj-1", 3)
		},
		reason: domain.ReasonNonExecutableStatus,
		check:  nonExecutable(domain.StatusDone),
	}, {
		name: "objective BLOCKED after approval",
		prepare: func(t *testing.T, tb *testBundle) string {
			tb.newObjective(t, "obj-1", nil)
			ev := tb.ready(t, "obj-1", activities.ReadyApprove)
			_, err := tb.store.TransitionObjective(context.Background(), store.TransitionObjectiveParams{
				ObjectiveID: "obj-1", From: []domain.Status{domain.StatusTodo}, To: domain.StatusBlocked})
			require.NoError(t, err)
			return ev.EventID
		},
		reason: domain.ReasonNonExecutableStatus,
		check:  nonExecutable(domain.StatusBlocked),
	}, {
		name: "objective with blockers",
		prepare: func(t *testing.T, tb *testBundle) string {
			tb.newObjective(t, "obj-1", func(o *domain.Objective) { o.Blockers = []string{"needs an API key"} })
			return tb.ready(t, "obj-1", activities.ReadyApprove).EventID
		},
		reason: domain.ReasonBlocked,
		check: func(t *testing.T, tb *testBundle, _ string, res activities.ScheduleResult) {
			require.Equal(t, domain.StatusBlocked, res.Status)
			require.Nil(t, res.WorkOrder)
			o := tb.objective(t, "obj-1")
			require.Equal(t, domain.StatusBlocked, o.Status)
			require.NotEmpty(t, o.BlockerRef)
			pauses := tb.pauses(t, "obj-1")
			require.Len(t, pauses, 1)
			require.NotNil(t, res.Pause)
			require.Equal(t, pauses[0], res.Pause)
			require.Equal(t, domain.PauseBlocked, res.Pause.Reason)
			require.Len(t, res.Pause.PrioritizedActions, 2)
			require.Contains(t, res.Pause.PrioritizedActions[0], "Resolve blockers for obj-1")
			require.Contains(t, res.Pause.PrioritizedActions[0], "needs an API key")
			require.Contains(t, res.Pause.PrioritizedActions[1], "Re-emit TICKET_READY")
			require.Equal(t, []string{pause.ResolveBlockers, pause.Unblock}, res.Pause.ActionKinds,
				"the unblock command is rendered from the kind, at the edge")
		},
	}, {
		name: "objective TODO",
		prepare: func(t *testing.T, tb *testBundle) string {
			tb.newObjective(t, "obj-1", nil)
			return tb.ready(t, "obj-1", activities.ReadyApprove).EventID
		},
		reason: domain.ReasonScheduled,
		check:  checkScheduled,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				ctx := context.Background()
				id := tc.prepare(t, tb)
				res, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: id})
				require.NoError(t, err)
				require.Equal(t, tc.reason, res.Reason)
				tc.check(t, tb, id, res)

				ev := tb.event(t, id)
				require.True(t, ev.Processed)
				require.Equal(t, tc.reason, ev.ProcessedReason)
				require.NotNil(t, ev.ProcessedAt)
				tb.requireReleased(t, domain.ResourceEvent, id)
				wos := tb.workOrders(t, res.ObjectiveID)
				var before *domain.Objective
				if res.Status != "" {
					before = tb.objective(t, res.ObjectiveID)
				}

				again, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: id})
				require.NoError(t, err)
				require.Equal(t, res, again, "a processed event is a no-op returning its outcome")
				require.Equal(t, ev, tb.event(t, id), "processed exactly once")
				require.Equal(t, wos, tb.workOrders(t, res.ObjectiveID), "no second workorder")
				if before != nil {
					require.Equal(t, before, tb.objective(t, res.ObjectiveID))
				}
			})
		})
	}
}

func nonExecutable(status domain.Status) func(t *testing.T, tb *testBundle, _ string, res activities.ScheduleResult) {
	return func(t *testing.T, tb *testBundle, _ string, res activities.ScheduleResult) {
		require.Equal(t, activities.ScheduleResult{Reason: domain.ReasonNonExecutableStatus, ObjectiveID: "obj-1",
			Status: status}, res)
		require.Equal(t, status, tb.objective(t, "obj-1").Status, "the objective is left alone")
		require.Empty(t, tb.workOrders(t, "obj-1"))
		require.Empty(t, tb.pauses(t, "obj-1"))
	}
}

func checkScheduled(t *testing.T, tb *testBundle, eventID string, res activities.ScheduleResult) {
	ctx := context.Background()
	require.Equal(t, "obj-1", res.ObjectiveID)
	require.Equal(t, domain.StatusInProgress, res.Status)
	require.Nil(t, res.Pause)
	wos := tb.workOrders(t, "obj-1")
	require.Len(t, wos, 1)
	w := wos[0]
	require.Equal(t, &activities.WorkOrderRef{WorkOrderID: w.WorkOrderID, DiazotrophType: fakeType,
		BudgetMS: testBudget.Milliseconds(), Status: domain.WorkOrderCreated, BranchName: "azolla/obj-1",
		Urgency: "NORMAL"}, res.WorkOrder, "with what orders it for a run slot")
	require.Equal(t, eventID, w.EventID)
	require.Equal(t, "obj-1", w.ObjectiveID)
	require.Equal(t, "azolla/obj-1", w.BranchName)
	require.Equal(t, activities.BranchName("obj-1"), w.BranchName)
	require.Equal(t, int64(90000), w.BudgetMS)
	require.Equal(t, fakeType, w.DiazotrophType)
	require.Equal(t, domain.WorkOrderCreated, w.Status)

	snap, err := tb.store.GetContextSnapshot(ctx, w.ContextSnapshotID)
	require.NoError(t, err)
	o := tb.objective(t, "obj-1")
	require.Equal(t, "obj-1", snap.ObjectiveID)
	require.Contains(t, snap.FullPromptText, o.Title)
	for _, c := range o.AcceptanceCriteria {
		require.Contains(t, snap.FullPromptText, c)
	}
	require.Equal(t, "main", snap.Metadata.BaseBranch)
	require.Equal(t, domain.StatusInProgress, o.Status)
	require.Empty(t, tb.pauses(t, "obj-1"))
}

func TestSchedule_UnknownEventIsNotFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		_, err := tb.steps.Schedule(context.Background(), activities.ScheduleInput{EventID: "ev-ghost"})
		requirePermanent(t, err, activities.ErrTypeNotFound)
	})
}

// An event another owner holds is left alone, by the activity and by the
// local Schedule (which holds its claim for one transaction): nothing is
// written, the error says who holds it, for the step's retry, and once the
// holder lets go the event is scheduled.
func TestSchedule_EventClaimedByAnotherOwnerIsLeftAlone(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(map[bool]string{false: "activity", true: "local"}[local], func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				ctx := context.Background()
				tb.newObjective(t, "obj-1", nil)
				ev := tb.ready(t, "obj-1", activities.ReadyApprove)
				before := tb.objective(t, "obj-1")
				other, ok, err := tb.steps.Claims.Acquire(ctx, domain.ResourceEvent, ev.EventID, "other-worker", time.Minute)
				require.NoError(t, err)
				require.True(t, ok)

				in := activities.ScheduleInput{EventID: ev.EventID, Local: local}
				_, err = tb.steps.Schedule(ctx, in)
				var claimed *activities.Claimed
				require.ErrorAs(t, err, &claimed)
				require.Equal(t, "other-worker", claimed.Holder.OwnerID)
				require.Equal(t, ev.EventID, claimed.ResourceID)
				requireRetryable(t, err)

				require.False(t, tb.event(t, ev.EventID).Processed)
				require.Equal(t, before, tb.objective(t, "obj-1"))
				require.Empty(t, tb.workOrders(t, "obj-1"))
				c, err := tb.store.GetClaim(ctx, domain.ResourceEvent, ev.EventID)
				require.NoError(t, err)
				require.Equal(t, other.Record(), *c, "the holder's claim is untouched")

				require.NoError(t, other.Release(ctx))
				res, err := tb.steps.Schedule(ctx, in)
				require.NoError(t, err)
				require.Equal(t, domain.ReasonScheduled, res.Reason, "scheduled once the holder lets go")
			})
		})
	}
}

// Workers racing to schedule one event, by the activity or by the local
// Schedule, make one workorder between them.
func TestSchedule_ConcurrentWorkersCreateOneWorkOrder(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(map[bool]string{false: "activity", true: "local"}[local], func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				ctx := context.Background()
				tb.newObjective(t, "obj-1", nil)
				ev := tb.ready(t, "obj-1", activities.ReadyApprove)

				const n = 8
				results, errs := make([]activities.ScheduleResult, n), make([]error, n)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range n {
					worker := *tb.steps
					worker.Identity = fmt.Sprintf("worker-%d", i)
					wg.Go(func() {
						<-start
						results[i], errs[i] = worker.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID, Local: local})
					})
				}
				close(start)
				wg.Wait()

				wos := tb.workOrders(t, "obj-1")
				require.Len(t, wos, 1, "one event, one workorder")
				scheduled := 0
				for i := range n {
					if errs[i] != nil {
						var claimed *activities.Claimed
						require.ErrorAs(t, errs[i], &claimed, "worker %d", i)
						continue
					}
					require.Equal(t, domain.ReasonScheduled, results[i].Reason)
					require.Equal(t, wos[0].WorkOrderID, results[i].WorkOrder.WorkOrderID)
					scheduled++
				}
				require.GreaterOrEqual(t, scheduled, 1)
				got := tb.event(t, ev.EventID)
				require.True(t, got.Processed)
				require.Equal(t, domain.ReasonScheduled, got.ProcessedReason)
				require.Equal(t, domain.StatusInProgress, tb.objective(t, "obj-1").Status)
				tb.requireReleased(t, domain.ResourceEvent, ev.EventID)
			})
		})
	}
}

// TestSchedule_FailedWriteWritesNothingAndReleasesClaim makes the workorder
// insert fail (a diazotroph_type the schema refuses): the snapshot, the
// transition and the processed mark roll back with it, and the claim is
// released so the retry, once the deployment is fixed, runs at once.
func TestSchedule_FailedWriteWritesNothingAndReleasesClaim(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.newObjective(t, "obj-1", nil)
		ev := tb.ready(t, "obj-1", activities.ReadyApprove)
		before := tb.objective(t, "obj-1")
		tb.steps.Diazotroph = "not a diazotroph type"

		_, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
		require.Error(t, err)
		require.False(t, tb.event(t, ev.EventID).Processed)
		require.Equal(t, before, tb.objective(t, "obj-1"))
		require.Empty(t, tb.workOrders(t, "obj-1"))
		tb.requireReleased(t, domain.ResourceEvent, ev.EventID)

		tb.steps.Diazotroph = fakeType
		res, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
		require.NoError(t, err, "no snapshot was left behind to collide with")
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		require.Len(t, tb.workOrders(t, "obj-1"), 1)
	})
}
