package activities_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/store/storetest"
)

// everyRepoHasAForge says every repository has a forge: a PASS with a
// commit asks for its pull request.
type everyRepoHasAForge struct{}

func (everyRepoHasAForge) Has(string) bool { return true }
func (everyRepoHasAForge) Open(string) (*activities.ForgeTarget, error) {
	return nil, nil
}

// fromIssue records that objective id came from issue 12, closed on its
// forge when closed is set.
func (tb *testBundle) fromIssue(t *testing.T, id string, closed bool) {
	t.Helper()
	ctx := context.Background()
	it, _ := storetest.IntakeObjective(12, id)
	_, err := tb.store.InsertIntakeItem(ctx, it)
	require.NoError(t, err)
	if closed {
		it.Closed = true
		require.NoError(t, tb.store.UpdateIntakeItem(ctx, it))
	}
}

// runRepo schedules a repository objective from issue 12 and runs it with
// a patch diazotroph answering exec; the issue is closed while it runs
// when closeWhileRunning is set.
func (tb *testBundle) runRepo(t *testing.T, closeWhileRunning bool,
	exec func(context.Context, diazotroph.Request) (diazotroph.Result, error)) *activities.WorkOrderRef {
	t.Helper()
	tb.steps.Targets = &fakeTargets{resolve: resolvedAt(testSHA, "go.mod")}
	tb.steps.Forges = everyRepoHasAForge{}
	patch := newFake(diazotroph.PatchType, func(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
		if closeWhileRunning {
			it, err := tb.store.IntakeItemOf(ctx, req.Objective.ObjectiveID)
			require.NoError(t, err)
			it.Closed = true
			require.NoError(t, tb.store.UpdateIntakeItem(ctx, it))
		}
		return exec(ctx, req)
	})
	tb.steps.Diazotrophs = diazotroph.NewRegistry(patch)
	res, err := tb.scheduleRepo(t, "obj-1", nil)
	require.NoError(t, err)
	tb.fromIssue(t, "obj-1", false)
	_, err = tb.steps.Run(context.Background(), activities.RunInput{WorkOrderID: res.WorkOrder.WorkOrderID})
	require.NoError(t, err)
	return res.WorkOrder
}

func withCommit(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
	res, err := okResult(ctx, req)
	res.Metadata.CommitSHA = testSHA
	return res, err
}

// TestGate_IssueClosedWhileRunning: the verdict of a round whose issue was
// closed on the forge while it ran stands, but it hands the objective back
// as CLOSED_ON_FORGE: a PASS asks for no pull request, a FAIL waits for a
// human's retry as any FAIL does. An issue still open changes nothing.
func TestGate_IssueClosedWhileRunning(t *testing.T) {
	failing := returning(diazotroph.Result{Title: "nothing", Content: "", Notes: "nothing to change", RunnerStatus: domain.RunnerOK})
	cases := []struct {
		name       string
		exec       func(context.Context, diazotroph.Request) (diazotroph.Result, error)
		closed     bool
		result     string
		status     domain.Status
		reason     string
		pr         bool
		firstWords []string
	}{
		{name: "pass, issue open", exec: withCommit, result: domain.GatePass, status: domain.StatusDone,
			reason: domain.PauseRunComplete, pr: true},
		{name: "pass, issue closed", exec: withCommit, closed: true, result: domain.GatePass, status: domain.StatusDone,
			reason: domain.PauseClosedOnForge, firstWords: []string{"Issue #12 (", "no pull request was opened", "azolla/obj-1"}},
		{name: "fail, issue closed", exec: failing, closed: true, result: domain.GateFail, status: domain.StatusTodo,
			reason: domain.PauseClosedOnForge, firstWords: []string{"Issue #12 (", "it failed: output bundle content is empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				wo := tb.runRepo(t, tc.closed, tc.exec)
				res, err := tb.steps.Gate(context.Background(), activities.GateInput{WorkOrderID: wo.WorkOrderID})
				require.NoError(t, err)
				require.Equal(t, tc.result, res.GateResult, res.GateReason)
				require.Equal(t, tc.status, res.Status)
				require.Equal(t, tc.reason, res.Pause.Reason)
				require.Equal(t, tc.pr, res.PullRequest)
				for _, w := range tc.firstWords {
					require.Contains(t, res.Pause.PrioritizedActions[0], w)
				}
				if tc.result == domain.GateFail {
					require.Equal(t, domain.GateBlocker(wo.WorkOrderID), tb.objective(t, "obj-1").BlockerRef,
						"a FAIL waits for a retry, closed issue or not")
					require.True(t, strings.HasPrefix(res.Pause.PrioritizedActions[1], "Reopen the issue and retry"))
				}
				pauses := tb.pausesOf(t, "obj-1", wo.WorkOrderID)
				require.Len(t, pauses, 1, "one pause per verdict")
				require.Equal(t, *pauses[0], res.Pause)
			})
		})
	}
}

// TestRun_IssueClosedBeforeTheRunStartsNoAgent: an issue closed between
// scheduling and the run starts no agent; the run fails for good and says
// why, and the gate hands the objective back.
func TestRun_IssueClosedBeforeTheRunStartsNoAgent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		wo := tb.scheduled(t, "obj-1")
		tb.fromIssue(t, "obj-1", true)
		_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		requirePermanent(t, err, activities.ErrTypeClosedOnForge)
		require.ErrorContains(t, err, "not started: issue #12")
		require.Empty(t, tb.fake.Calls(), "no agent ran")
		tb.requireNoBundle(t, wo.WorkOrderID)

		res, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID, RunFailure: "not started: issue #12 was closed"})
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, res.GateResult)
		require.Equal(t, domain.PauseClosedOnForge, res.Pause.Reason)
	})
}

// An issue closed while its round's agent works stops the agent at the
// next renewal of the run's claim: the diazotroph ends the run STOPPED,
// and the gate hands the objective back.
func TestRun_AnIssueClosedMidRunStopsTheAgent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		// Renewed every second: the stop comes at the first renewal after the close.
		tb.steps.LeaseTTL = 3 * time.Second
		wo := tb.scheduled(t, "obj-1")
		tb.fromIssue(t, "obj-1", false)
		tb.fake.exec = func(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
			it, err := tb.store.IntakeItemOf(ctx, "obj-1")
			require.NoError(t, err)
			it.Closed = true
			require.NoError(t, tb.store.UpdateIntakeItem(ctx, it))
			select {
			case <-ctx.Done():
			case <-time.After(time.Minute):
				return diazotroph.Result{}, errors.New("never stopped")
			}
			s := diazotroph.StopOf(ctx)
			if s == nil {
				return diazotroph.Result{}, context.Cause(ctx)
			}
			return diazotroph.Result{Title: "stopped", Notes: s.Why + "\n", RunnerStatus: domain.RunnerStopped}, nil
		}
		_, err := tb.steps.Run(ctx, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		b, err := tb.store.GetOutputBundle(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, domain.RunnerStopped, b.RunnerStatus)

		res, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, res.GateResult)
		require.Contains(t, res.GateReason, "run stopped: issue #12 (")
		require.Equal(t, domain.PauseClosedOnForge, res.Pause.Reason)
	})
}
