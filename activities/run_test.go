package activities_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/pause"
)

func TestRun_DispatchesByTypeAndPersistsOneBundle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		other := newFake("OTHER_DIAZOTROPH", returning(diazotroph.Result{Title: "other",
			Content: "other diff", RunnerStatus: domain.RunnerOK}))
		tb.steps.Diazotrophs.Register(other)
		wo := tb.scheduled(t, "obj-1")
		w, o := tb.workOrder(t, wo.WorkOrderID), tb.objective(t, "obj-1")
		snap, err := tb.store.GetContextSnapshot(ctx, w.ContextSnapshotID)
		require.NoError(t, err)

		res, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, activities.RunResult{WorkOrderID: wo.WorkOrderID, RunnerStatus: domain.RunnerOK}, res)
		require.Empty(t, other.Calls(), "only the workorder's diazotroph_type runs")
		calls := tb.fake.Calls()
		require.Len(t, calls, 1)
		require.Equal(t, diazotroph.Request{WorkOrder: *w, Snapshot: *snap, Objective: *o, Budget: testBudget}, calls[0])
		require.Contains(t, calls[0].Snapshot.FullPromptText, o.Title)

		b, err := tb.store.GetOutputBundle(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		want, _ := okResult(ctx, calls[0])
		require.Equal(t, want, diazotroph.Result{Title: b.Title, Content: b.Content, Notes: b.Notes,
			Metadata: b.Metadata, RunnerStatus: b.RunnerStatus}, "the bundle is what the diazotroph returned")
		executed := tb.workOrder(t, wo.WorkOrderID)
		require.Equal(t, domain.WorkOrderExecuted, executed.Status)
		require.NotNil(t, executed.ExecutedAt)
		tb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)

		// A second objective scheduled for the other type goes to the other.
		tb.steps.Diazotroph = other.Type()
		wo2 := tb.scheduled(t, "obj-2")
		res, err = tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo2.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.RunnerOK, res.RunnerStatus)
		require.Len(t, other.Calls(), 1)
		require.Equal(t, wo2.WorkOrderID, other.Calls()[0].WorkOrder.WorkOrderID)
		require.Len(t, tb.fake.Calls(), 1)
		b2, err := tb.store.GetOutputBundle(ctx, wo2.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, "other diff", b2.Content)
	})
}

func TestRun_ExecutedWorkOrderIsNoOp(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.fake.exec = returning(diazotroph.Result{Title: "out of time", Notes: "budget of 90s exhausted",
			RunnerStatus: domain.RunnerBudgetExhausted})
		wo := tb.scheduled(t, "obj-1")
		first, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.False(t, first.AlreadyExecuted)
		bundle, err := tb.store.GetOutputBundle(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		w := tb.workOrder(t, wo.WorkOrderID)

		again, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, activities.RunResult{WorkOrderID: wo.WorkOrderID, RunnerStatus: domain.RunnerBudgetExhausted,
			AlreadyExecuted: true}, again)
		require.Len(t, tb.fake.Calls(), 1, "the diazotroph is not called again")
		stored, err := tb.store.GetOutputBundle(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, bundle, stored)
		require.Equal(t, w, tb.workOrder(t, wo.WorkOrderID))
	})
}

func TestRun_UnknownDiazotrophTypeIsPermanentAndWritesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.steps.Diazotroph = "GHOST_DIAZOTROPH"
		wo := tb.scheduled(t, "obj-1")

		_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		requirePermanent(t, err, activities.ErrTypeUnknownType)
		require.ErrorIs(t, err, diazotroph.ErrUnknownType)
		tb.requireNoBundle(t, wo.WorkOrderID)
		require.Empty(t, tb.fake.Calls())
		_, err = tb.store.GetClaim(ctx, domain.ResourceWorkOrder, wo.WorkOrderID)
		require.ErrorIs(t, err, domain.ErrNotFound, "not even a claim")
	})
}

func TestRun_UnknownWorkOrderIsNotFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		_, err := tb.steps.Run(context.Background(), activities.RunInput{WorkOrderID: "wo-ghost"})
		requirePermanent(t, err, activities.ErrTypeNotFound)
	})
}

func TestRun_DiazotrophErrorWritesNothingAndReleasesClaim(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		unavailable := errors.New("model unavailable")
		tb.fake.exec = func(context.Context, diazotroph.Request) (diazotroph.Result, error) {
			return diazotroph.Result{}, unavailable
		}
		wo := tb.scheduled(t, "obj-1")

		_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.ErrorIs(t, err, unavailable)
		requireRetryable(t, err)
		tb.requireNoBundle(t, wo.WorkOrderID)
		tb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)

		tb.fake.exec = okResult
		res, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err, "the released claim lets the retry run at once")
		require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	})
}

func TestRun_WorkOrderClaimedByAnotherOwnerIsLeftAlone(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		wo := tb.scheduled(t, "obj-1")
		_, ok, err := tb.steps.Claims.Acquire(ctx, domain.ResourceWorkOrder, wo.WorkOrderID, "other-runner", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)

		_, err = tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		var claimed *activities.Claimed
		require.ErrorAs(t, err, &claimed)
		require.Equal(t, "other-runner", claimed.Holder.OwnerID)
		require.Empty(t, tb.fake.Calls())
		tb.requireNoBundle(t, wo.WorkOrderID)
	})
}

// TestRun_LeaseLostDuringExecutionCancelsAndWritesNothing has another owner
// take the workorder over while the diazotroph runs: the keeper's next
// renewal fails, the diazotroph's context is cancelled and Run writes nothing.
func TestRun_LeaseLostDuringExecutionCancelsAndWritesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		wo := tb.scheduled(t, "obj-1")
		tb.steps.LeaseTTL = 300 * time.Millisecond // renewed every 100ms
		started, cause := make(chan struct{}), make(chan error, 1)
		tb.fake.exec = func(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
			close(started)
			select {
			case <-ctx.Done():
				cause <- context.Cause(ctx)
				return diazotroph.Result{}, ctx.Err()
			case <-time.After(10 * time.Second):
				cause <- nil
				return okResult(ctx, req)
			}
		}
		done := make(chan error, 1)
		go func() {
			_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
			done <- err
		}()
		<-started
		taker, ok, err := tb.thief().Acquire(ctx, domain.ResourceWorkOrder, wo.WorkOrderID, "taker", time.Hour)
		require.NoError(t, err)
		require.True(t, ok, "the lease looks expired to the taker")

		err = <-done
		require.ErrorIs(t, err, claim.ErrLeaseLost)
		require.ErrorIs(t, <-cause, claim.ErrLeaseLost, "the diazotroph saw its context cancelled for the lost lease")
		tb.requireNoBundle(t, wo.WorkOrderID)
		c, err := tb.store.GetClaim(ctx, domain.ResourceWorkOrder, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, taker.Record(), *c, "the new holder keeps its claim")
	})
}

// TestRun_ClaimTakenBeforeWriteIsFencedOut loses the claim after the
// diazotroph returns but before any renewal could notice: the fenced write
// refuses it.
func TestRun_ClaimTakenBeforeWriteIsFencedOut(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		wo := tb.scheduled(t, "obj-1") // LeaseTTL is a minute: no renewal runs
		var taker *claim.Lease
		tb.fake.exec = func(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
			l, ok, err := tb.thief().Acquire(ctx, domain.ResourceWorkOrder, req.WorkOrder.WorkOrderID, "taker", time.Hour)
			if err != nil || !ok {
				return diazotroph.Result{}, errors.Join(errors.New("take over failed"), err)
			}
			taker = l
			return okResult(ctx, req)
		}

		_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.ErrorIs(t, err, claim.ErrLeaseLost)
		require.NotNil(t, taker)
		tb.requireNoBundle(t, wo.WorkOrderID)
		c, err := tb.store.GetClaim(ctx, domain.ResourceWorkOrder, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, taker.Record(), *c)
	})
}

// TestRun_InvalidResultWritesNothingAndReleasesClaim has the diazotroph
// return a result the output_bundle schema refuses (no title).
func TestRun_InvalidResultWritesNothingAndReleasesClaim(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.fake.exec = returning(diazotroph.Result{Content: "diff", RunnerStatus: domain.RunnerOK})
		wo := tb.scheduled(t, "obj-1")

		_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.ErrorContains(t, err, "title")
		tb.requireNoBundle(t, wo.WorkOrderID)
		tb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)
	})
}

// A diazotroph's title is stored as one safe line, not refused: the run's
// output is kept whatever words the tool chose.
func TestRun_TitleIsStoredOnOneSafeLine(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		tb.fake.exec = returning(diazotroph.Result{Title: "Fixed it\n\x1b]0;pwned\x07done", Content: "diff",
			RunnerStatus: domain.RunnerOK})
		wo := tb.scheduled(t, "obj-1")
		_, err := tb.steps.Run(context.Background(), activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		b, err := tb.store.GetOutputBundle(context.Background(), wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, `Fixed it; \x1b]0;pwned\x07done`, b.Title)
	})
}

// The round after one that left partial work is handed that work (and why
// its round ended) to resume from; the round after a round that left none
// is not.
func TestRun_TheNextRoundIsHandedThePartialWorkOfTheRoundBefore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		partial := &domain.PartialWork{Ref: "refs/azolla/obj-1/partial/wo-obj-1-1", CommitSHA: testSHA,
			Files: []string{"x.go"}, FilesChanged: 1, Bytes: 120}
		wo := tb.runWith(t, returning(diazotroph.Result{Title: "out of time", Notes: "budget of 5s exhausted",
			Metadata: domain.BundleMetadata{Partial: partial}, RunnerStatus: domain.RunnerBudgetExhausted}))
		first, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, pause.PartialWork, first.Pause.ActionKinds[len(first.Pause.ActionKinds)-1])
		require.Contains(t, first.Pause.PrioritizedActions[len(first.Pause.PrioritizedActions)-1],
			"Partial work kept: 1 file(s) (x.go)")

		// The second round leaves no partial work: the third is handed none.
		for round, want := range []*domain.PartialWork{partial, nil} {
			ev := tb.ready(t, "obj-1", activities.ReadyRetry)
			res, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
			require.NoError(t, err)
			tb.fake.exec = returning(diazotroph.Result{Title: "nothing", Notes: "no change", RunnerStatus: domain.RunnerOK})
			_, err = tb.steps.Run(ctx, activities.RunInput{WorkOrderID: res.WorkOrder.WorkOrderID})
			require.NoError(t, err)
			calls := tb.fake.Calls()
			got := calls[len(calls)-1].Resume
			if want == nil {
				require.Nil(t, got, "round %d: the round before left no partial work", round+2)
			} else {
				require.NotNil(t, got)
				require.Equal(t, wo.WorkOrderID, got.WorkOrderID)
				require.Equal(t, *want, got.Partial)
				require.Contains(t, got.Why, "budget exhausted: budget of 5s exhausted")
			}
			g, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: res.WorkOrder.WorkOrderID})
			require.NoError(t, err)
			require.Equal(t, domain.GateFail, g.GateResult)
		}
	})
}

// A retry that asks for a fresh start (objective retry --fresh) is handed
// no partial work, and its event says why.
func TestRun_AFreshRetryIsHandedNoPartialWork(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		wo := tb.runWith(t, returning(diazotroph.Result{Title: "out of time", Notes: "budget of 5s exhausted",
			Metadata: domain.BundleMetadata{Partial: &domain.PartialWork{Ref: "refs/azolla/obj-1/partial/wo-obj-1-1",
				CommitSHA: testSHA, Files: []string{"x.go"}, FilesChanged: 1, Bytes: 120}},
			RunnerStatus: domain.RunnerBudgetExhausted}))
		_, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		ev, err := tb.steps.Ready(ctx, activities.ReadyInput{ObjectiveID: "obj-1", Mode: activities.ReadyRetry, By: "ana", Fresh: true})
		require.NoError(t, err)
		require.True(t, tb.event(t, ev.EventID).Fresh, "the event records the fresh start")
		res, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
		require.NoError(t, err)
		_, err = tb.steps.Run(ctx, activities.RunInput{WorkOrderID: res.WorkOrder.WorkOrderID})
		require.NoError(t, err)
		calls := tb.fake.Calls()
		require.Nil(t, calls[len(calls)-1].Resume)
	})
}

// The round after one whose agent reported a session is handed that
// session to continue; a fresh retry is not.
func TestRun_TheNextRoundIsHandedTheSessionOfTheRoundBefore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		reported := diazotroph.Result{Title: "not yet", Notes: "half done", RunnerStatus: domain.RunnerOK,
			Metadata: domain.BundleMetadata{RunReport: &domain.RunReport{SessionID: "6f0a4c1e-2b7d", Turns: 3}}}
		wo := tb.runWith(t, returning(reported))
		_, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		for _, fresh := range []bool{false, true} {
			ev, err := tb.steps.Ready(ctx, activities.ReadyInput{ObjectiveID: "obj-1", Mode: activities.ReadyRetry, By: "ana",
				Fresh: fresh})
			require.NoError(t, err)
			res, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
			require.NoError(t, err)
			_, err = tb.steps.Run(ctx, activities.RunInput{WorkOrderID: res.WorkOrder.WorkOrderID})
			require.NoError(t, err)
			calls := tb.fake.Calls()
			if fresh {
				require.Empty(t, calls[len(calls)-1].Session, "a fresh start starts a new session")
			} else {
				require.Equal(t, "6f0a4c1e-2b7d", calls[len(calls)-1].Session)
			}
			_, err = tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: res.WorkOrder.WorkOrderID})
			require.NoError(t, err)
		}
	})
}
