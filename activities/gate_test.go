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
	"github.com/azolla/azolla/internal/store"
)

// runWith schedules obj-1, runs it with exec and returns its workorder.
func (tb *testBundle) runWith(t *testing.T, exec func(context.Context, diazotroph.Request) (diazotroph.Result, error)) *activities.WorkOrderRef {
	t.Helper()
	tb.fake.exec = exec
	wo := tb.scheduled(t, "obj-1")
	_, err := tb.steps.Run(context.Background(), activities.RunInput{WorkOrderID: wo.WorkOrderID})
	require.NoError(t, err)
	return wo
}

// requireGateIdempotent gates the workorder again and checks nothing changes.
func (tb *testBundle) requireGateIdempotent(t *testing.T, in activities.GateInput, first activities.GateResult) {
	t.Helper()
	ctx := context.Background()
	rr, err := tb.store.GetRunRecord(ctx, in.WorkOrderID)
	require.NoError(t, err)
	o := tb.objective(t, "obj-1")
	in.RunFailure = "a different story"
	again, err := tb.steps.Gate(ctx, in)
	require.NoError(t, err)
	require.Equal(t, first, again, "a gated workorder returns its stored verdict")
	stored, err := tb.store.GetRunRecord(ctx, in.WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, rr, stored, "the run record is not rewritten")
	require.Len(t, tb.pausesOf(t, "obj-1", in.WorkOrderID), 1, "one pause state per workorder")
	require.Equal(t, o, tb.objective(t, "obj-1"), "no second transition")
}

func TestGate_PassCompletesObjective(t *testing.T) {
	cases := []struct {
		name      string
		commitSHA string
		review    string
	}{
		{name: "without commit", review: "Review the output of "},
		{name: "with commit", commitSHA: testSHA, review: "Review PR on azolla/obj-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				ctx := context.Background()
				wo := tb.runWith(t, func(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
					res, err := okResult(ctx, req)
					res.Metadata.CommitSHA = tc.commitSHA
					return res, err
				})
				in := activities.GateInput{WorkOrderID: wo.WorkOrderID}
				res, err := tb.steps.Gate(ctx, in)
				require.NoError(t, err)

				require.Equal(t, domain.GatePass, res.GateResult)
				require.Equal(t, tc.commitSHA, res.CommitSHA)
				require.Equal(t, domain.StatusDone, res.Status)
				rr, err := tb.store.GetRunRecord(ctx, wo.WorkOrderID)
				require.NoError(t, err)
				require.Equal(t, "obj-1", rr.ObjectiveID)
				require.Equal(t, domain.GatePass, rr.GateResult)
				require.Equal(t, res.GateReason, rr.GateReason)
				require.Equal(t, tc.commitSHA, rr.CommitSHA, "commit_sha comes from the bundle")
				o := tb.objective(t, "obj-1")
				require.Equal(t, domain.StatusDone, o.Status)
				require.Empty(t, o.BlockerRef)

				pauses := tb.pausesOf(t, "obj-1", wo.WorkOrderID)
				require.Len(t, pauses, 1)
				require.Equal(t, *pauses[0], res.Pause)
				require.Equal(t, domain.PauseRunComplete, res.Pause.Reason)
				require.Len(t, res.Pause.PrioritizedActions, 2)
				require.True(t, strings.HasPrefix(res.Pause.PrioritizedActions[0], tc.review), res.Pause.PrioritizedActions[0])
				require.Equal(t, "Confirm completion", res.Pause.PrioritizedActions[1])
				tb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)

				tb.requireGateIdempotent(t, in, res)
			})
		})
	}
}

func TestGate_FailHandsObjectiveBackWithBlockerRef(t *testing.T) {
	cases := []struct {
		name       string
		result     *diazotroph.Result // nil: Run never produced a bundle
		runFailure string
		reason     []string // the gate reason contains each
		commitSHA  string
	}{{
		name:   "empty content",
		result: &diazotroph.Result{Title: "nothing", Content: " \n", Notes: "nothing to change", RunnerStatus: domain.RunnerOK},
		reason: []string{"content is empty", "nothing to change"},
	}, {
		name: "budget exhausted",
		result: &diazotroph.Result{Title: "out of time", Notes: "budget of 90s exhausted\nstopped at step 3",
			RunnerStatus: domain.RunnerBudgetExhausted},
		reason: []string{"budget exhausted", "budget of 90s exhausted"},
	}, {
		name: "stalled",
		result: &diazotroph.Result{Title: "waiting", Notes: "no output and no file changed for 10m0s (executor.stall_timeout)\nstderr: Allow edit? [y/n]",
			RunnerStatus: domain.RunnerStalled},
		reason: []string{"run stalled", "no output and no file changed for 10m0s"},
	}, {
		name: "apply failed",
		result: &diazotroph.Result{Title: "conflict", Content: "diff --git a/x.go b/x.go\n", Notes: "conflict in x.go",
			Metadata: domain.BundleMetadata{CommitSHA: testSHA}, RunnerStatus: domain.RunnerApplyFailed},
		reason:    []string{"did not apply", "conflict in x.go"},
		commitSHA: testSHA,
	}, {
		name:       "no bundle",
		runFailure: "diazotroph crashed: exit status 2",
		reason:     []string{"no output bundle", "diazotroph crashed: exit status 2"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				ctx := context.Background()
				var wo *activities.WorkOrderRef
				if tc.result != nil {
					wo = tb.runWith(t, returning(*tc.result))
				} else {
					wo = tb.scheduled(t, "obj-1")
				}
				in := activities.GateInput{WorkOrderID: wo.WorkOrderID, RunFailure: tc.runFailure}
				res, err := tb.steps.Gate(ctx, in)
				require.NoError(t, err)

				require.Equal(t, domain.GateFail, res.GateResult)
				for _, part := range tc.reason {
					require.Contains(t, res.GateReason, part)
				}
				require.Equal(t, tc.commitSHA, res.CommitSHA)
				require.Equal(t, domain.StatusTodo, res.Status)
				rr, err := tb.store.GetRunRecord(ctx, wo.WorkOrderID)
				require.NoError(t, err)
				require.Equal(t, domain.GateFail, rr.GateResult)
				require.Equal(t, res.GateReason, rr.GateReason)
				require.Equal(t, tc.commitSHA, rr.CommitSHA, "commit_sha comes from the bundle")
				o := tb.objective(t, "obj-1")
				require.Equal(t, domain.StatusTodo, o.Status)
				require.Equal(t, domain.GateBlocker(wo.WorkOrderID), o.BlockerRef)

				pauses := tb.pausesOf(t, "obj-1", wo.WorkOrderID)
				require.Len(t, pauses, 1)
				require.Equal(t, *pauses[0], res.Pause)
				require.Equal(t, domain.PauseGateFailed, res.Pause.Reason)
				require.Len(t, res.Pause.PrioritizedActions, 2)
				require.Equal(t, "Review gate failure reason: "+res.GateReason, res.Pause.PrioritizedActions[0])
				require.True(t, strings.HasPrefix(res.Pause.PrioritizedActions[1], "Refine objective and retry"))
				tb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)

				tb.requireGateIdempotent(t, in, res)
			})
		})
	}
}

// TestGate_RefusedTransitionWritesNothing gates a workorder whose objective
// a human moved out of IN_PROGRESS: the verdict, the transition and the
// pause state are one transaction, so none of them is written.
func TestGate_RefusedTransitionWritesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		wo := tb.runWith(t, okResult)
		_, err := tb.store.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "obj-1",
			From: []domain.Status{domain.StatusInProgress}, To: domain.StatusBlocked})
		require.NoError(t, err)
		before := tb.objective(t, "obj-1")

		_, err = tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		requirePermanent(t, err, activities.ErrTypeInvalidStatus)
		_, err = tb.store.GetRunRecord(ctx, wo.WorkOrderID)
		require.ErrorIs(t, err, domain.ErrNotFound, "no run record")
		require.Empty(t, tb.pauses(t, "obj-1"), "no pause state")
		require.Equal(t, before, tb.objective(t, "obj-1"))
		tb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)

		// Once the human puts it back, the gate runs at once.
		_, err = tb.store.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "obj-1",
			From: []domain.Status{domain.StatusBlocked}, To: domain.StatusInProgress})
		require.NoError(t, err)
		res, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GatePass, res.GateResult)
	})
}

// A workorder another owner holds is left alone, by the activity and by
// the local gate (which holds its claim for one transaction): nothing is
// written, and the error says who holds it, for the step's retry.
func TestGate_WorkOrderClaimedByAnotherOwnerIsLeftAlone(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(map[bool]string{false: "activity", true: "local"}[local], func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				ctx := context.Background()
				wo := tb.runWith(t, okResult)
				before := tb.objective(t, "obj-1")
				_, ok, err := tb.steps.Claims.Acquire(ctx, domain.ResourceWorkOrder, wo.WorkOrderID, "other-gate", time.Minute)
				require.NoError(t, err)
				require.True(t, ok)

				_, err = tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID, Local: local})
				var claimed *activities.Claimed
				require.ErrorAs(t, err, &claimed)
				require.Equal(t, "other-gate", claimed.Holder.OwnerID)
				_, err = tb.store.GetRunRecord(ctx, wo.WorkOrderID)
				require.ErrorIs(t, err, domain.ErrNotFound)
				require.Empty(t, tb.pauses(t, "obj-1"))
				require.Equal(t, before, tb.objective(t, "obj-1"))
			})
		})
	}
}

func TestGate_UnknownWorkOrderIsNotFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		_, err := tb.steps.Gate(context.Background(), activities.GateInput{WorkOrderID: "wo-ghost"})
		requirePermanent(t, err, activities.ErrTypeNotFound)
	})
}
