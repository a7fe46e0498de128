package patch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// halfAgent is a stand-in agent: a first round writes half its change and
// then outlives its budget; a round that finds that half in its worktree
// writes the rest and finishes. It copies its input to the bundle's root,
// named after its workorder.
const halfAgent = `cp "$AZOLLA_INPUT_FILE" "%s/$AZOLLA_WORK_ORDER_ID.input"
if grep -q 'first half' README.md; then echo 'second half' >> README.md; exit 0; fi
echo 'first half' >> README.md; sleep 30`

func (tb *testBundle) halfAgent(t *testing.T, fresh bool) {
	t.Helper()
	tb.fresh = fresh
	tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(
		patchgen.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: fmt.Sprintf(halfAgent, tb.root),
			WorktreeDiff: gitops.Git{}.WorktreeDiff})})
}

// halvesOnce is a bundle with the half agent and the request of its
// objective's round, with a budget it does not run out of, and the
// round's workspace.
func halvesOnce(t *testing.T) (*testBundle, diazotroph.Request, string) {
	t.Helper()
	tb := setup(t)
	tb.halfAgent(t, false)
	req := tb.request(t, "halves", "")
	req.Objective.Generator = "command"
	req.Budget = time.Minute
	return tb, req, tb.p.Workspace(req.WorkOrder.WorkOrderID)
}

// round is the objective's round n of the half agent.
func (tb *testBundle) round(t *testing.T, n int, resume *diazotroph.Resume) (diazotroph.Request, diazotroph.Result) {
	t.Helper()
	req := tb.request(t, "halves", "")
	req.Objective.Generator = "command"
	req.WorkOrder.WorkOrderID = "wo-halves-" + string(rune('0'+n))
	req.Budget = 5 * time.Second
	req.Resume = resume
	return req, execute(t, tb, req)
}

// The round whose budget ran out left half its change; the next round
// starts from it, is told so, finishes, and its patch is the whole change
// against the base.
func TestExecute_TheNextRoundResumesThePartialWork(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.halfAgent(t, false)
	first, res := tb.round(t, 1, nil)
	require.Equal(t, domain.RunnerBudgetExhausted, res.RunnerStatus)
	require.NotNil(t, res.Metadata.Partial, res.Notes)

	resume := &diazotroph.Resume{WorkOrderID: first.WorkOrder.WorkOrderID, Partial: *res.Metadata.Partial,
		Why: "budget exhausted: The budget of 5s ran out"}
	second, res := tb.round(t, 2, resume)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)
	require.Contains(t, res.Content, "+first half")
	require.Contains(t, res.Content, "+second half")
	require.Contains(t, res.Notes, "Resumed the partial work refs/azolla/halves/partial/wo-halves-1 (1 file(s)")
	ws := tb.p.Workspace(second.WorkOrder.WorkOrderID)
	seen := tb.input(t, second.WorkOrder.WorkOrderID)
	require.Contains(t, seen, "Resuming: the round before this one (wo-halves-1) stopped before delivering a patch "+
		"(budget exhausted: The budget of 5s ran out)")
	require.Contains(t, seen, "1 file(s), README.md")
	require.Equal(t, second.Snapshot.Metadata.CommitSHA, strings.TrimSpace(git(t, ws, "rev-parse", res.Metadata.CommitSHA+"^")),
		"one commit on the base: the gate judges the whole change")
}

// patch.resume: fresh, or partial work that cannot be had, starts the
// round from the snapshot's commit.
func TestExecute_AFreshRoundOrALostPartialStartsFromTheBase(t *testing.T) {
	t.Parallel()
	t.Run("fresh", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		tb.halfAgent(t, true)
		first, res := tb.round(t, 1, nil)
		require.NotNil(t, res.Metadata.Partial, res.Notes)
		_, res = tb.round(t, 2, &diazotroph.Resume{WorkOrderID: first.WorkOrder.WorkOrderID, Partial: *res.Metadata.Partial})
		require.Equal(t, domain.RunnerBudgetExhausted, res.RunnerStatus, "it wrote its first half again")
		require.NotContains(t, res.Notes, "Resumed")
		require.NotContains(t, tb.input(t, "wo-halves-2"), "Resuming")
	})
	t.Run("pruned", func(t *testing.T) {
		t.Parallel()
		tb := setup(t)
		tb.halfAgent(t, false)
		first, res := tb.round(t, 1, nil)
		require.NotNil(t, res.Metadata.Partial, res.Notes)
		require.NoError(t, os.RemoveAll(tb.p.Workspace(first.WorkOrder.WorkOrderID)))
		_, res = tb.round(t, 2, &diazotroph.Resume{WorkOrderID: first.WorkOrder.WorkOrderID, Partial: *res.Metadata.Partial})
		require.Equal(t, domain.RunnerBudgetExhausted, res.RunnerStatus)
		require.Contains(t, res.Notes, "The partial work refs/azolla/halves/partial/wo-halves-1 could not be resumed")
	})
}

// input is what the agent of workOrderID was given.
func (tb *testBundle) input(t *testing.T, workOrderID string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(tb.root, workOrderID+".input"))
	require.NoError(t, err)
	return string(raw)
}

// A run whose worker stopped mid-run (here: its context ended) leaves its
// work in the workspace; the run that takes the workorder over on the same
// host salvages it and continues from it.
func TestExecute_ATakeoverSalvagesTheWorkOfTheRunItReplaces(t *testing.T) {
	t.Parallel()
	tb, req, ws := halvesOnce(t)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tb.p.Execute(ctx, req)
		done <- err
	}()
	require.Eventually(t, func() bool {
		raw, err := os.ReadFile(filepath.Join(ws, "README.md"))
		return err == nil && strings.Contains(string(raw), "first half")
	}, time.Minute, 20*time.Millisecond, "the first run writes its half")
	stop()
	require.Error(t, <-done, "the first run ends without a result")

	res := execute(t, tb, req)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)
	require.Contains(t, res.Content, "+first half")
	require.Contains(t, res.Content, "+second half")
	require.Contains(t, res.Notes, "Resumed the partial work refs/azolla/halves/partial/"+req.WorkOrder.WorkOrderID)
	require.Contains(t, tb.input(t, req.WorkOrder.WorkOrderID), "an earlier run of this same workorder")
}

// A run stopped because its work is no longer wanted (diazotroph.Stop)
// ends STOPPED, the first line of its notes saying why, its work kept.
func TestExecute_AStoppedRunKeepsItsWork(t *testing.T) {
	t.Parallel()
	tb, req, ws := halvesOnce(t)
	ctx, stop := context.WithCancelCause(context.Background())
	go func() {
		for {
			raw, err := os.ReadFile(filepath.Join(ws, "README.md"))
			if err == nil && strings.Contains(string(raw), "first half") {
				stop(&diazotroph.Stop{Why: "issue #12 was closed on the forge"})
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	res, err := tb.p.Execute(ctx, req)
	require.NoError(t, err)
	require.Equal(t, domain.RunnerStopped, res.RunnerStatus)
	require.True(t, strings.HasPrefix(res.Notes, "The run was stopped after "), res.Notes)
	require.Contains(t, strings.SplitN(res.Notes, "\n", 2)[0], "issue #12 was closed on the forge")
	require.NotNil(t, res.Metadata.Partial, res.Notes)
	require.Contains(t, res.Title, "No patch (stopped)")
}
