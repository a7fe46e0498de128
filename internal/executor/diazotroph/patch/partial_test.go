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
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// halfAgent is a stand-in agent: a first round writes half its change and
// then, saying so in <root>/<workorder>.asleep, sleeps until it is
// stopped; a round that finds that half in its worktree writes the rest
// and finishes. It copies its input to <root>/<workorder>.input.
const halfAgent = `cp "$AZOLLA_INPUT_FILE" "%[1]s/$AZOLLA_WORK_ORDER_ID.input"
if grep -q 'first half' README.md; then echo 'second half' >> README.md; exit 0; fi
echo 'first half' >> README.md; touch "%[1]s/$AZOLLA_WORK_ORDER_ID.asleep"; sleep 120`

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

// untilAsleep executes req, stopping the run (diazotroph.Stop, ended by
// cancel when it is nil) once its agent says it sleeps: the run ends on
// a condition, not on a budget a loaded machine may spend elsewhere.
func (tb *testBundle) untilAsleep(t *testing.T, req diazotroph.Request, stop *diazotroph.Stop) (diazotroph.Result, error) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	asleep := filepath.Join(tb.root, req.WorkOrder.WorkOrderID+".asleep")
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if _, err := os.Stat(asleep); err == nil {
				if stop == nil {
					cancel(nil)
				} else {
					cancel(stop)
				}
				return
			}
		}
	}()
	return tb.p.Execute(ctx, req)
}

// testStop is the stop of the rounds whose agent fell asleep.
var testStop = &diazotroph.Stop{Why: "the test stopped it"}

// round is the objective's round n of the half agent: it ends STOPPED
// once its agent sleeps, or OK.
func (tb *testBundle) round(t *testing.T, n int, resume *diazotroph.Resume) (diazotroph.Request, diazotroph.Result) {
	t.Helper()
	req := tb.request(t, "halves", "")
	req.Objective.Generator = "command"
	req.WorkOrder.WorkOrderID = "wo-halves-" + string(rune('0'+n))
	req.Budget = time.Minute
	req.Resume = resume
	res, err := tb.untilAsleep(t, req, testStop)
	require.NoError(t, err)
	requireValidBundle(t, req, res)
	return req, res
}

// The round that was stopped left half its change; the next round starts
// from it, is told so, finishes, and its patch is the whole change
// against the base.
func TestExecute_TheNextRoundResumesThePartialWork(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.halfAgent(t, false)
	first, res := tb.round(t, 1, nil)
	require.Equal(t, domain.RunnerStopped, res.RunnerStatus)
	require.NotNil(t, res.Metadata.Partial, res.Notes)

	resume := &diazotroph.Resume{WorkOrderID: first.WorkOrder.WorkOrderID, Partial: *res.Metadata.Partial,
		Why: "run stopped: the test stopped it"}
	second, res := tb.round(t, 2, resume)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)
	require.Contains(t, res.Content, "+first half")
	require.Contains(t, res.Content, "+second half")
	require.Contains(t, res.Notes, "Resumed the partial work refs/azolla/halves/partial/wo-halves-1 (1 file(s)")
	ws := tb.p.Workspace(second.WorkOrder.WorkOrderID)
	seen := tb.input(t, second.WorkOrder.WorkOrderID)
	require.Contains(t, seen, "Resuming: the round before this one (wo-halves-1) stopped before delivering a patch "+
		"(run stopped: the test stopped it)")
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
		require.Equal(t, domain.RunnerStopped, res.RunnerStatus, "it wrote its first half again")
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
		require.Equal(t, domain.RunnerStopped, res.RunnerStatus)
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
	tb, req, _ := halvesOnce(t)
	_, err := tb.untilAsleep(t, req, nil)
	require.Error(t, err, "the first run ends without a result")

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
	tb, req, _ := halvesOnce(t)
	res, err := tb.untilAsleep(t, req, &diazotroph.Stop{Why: "issue #12 was closed on the forge"})
	require.NoError(t, err)
	requireValidBundle(t, req, res)
	require.Equal(t, domain.RunnerStopped, res.RunnerStatus)
	require.True(t, strings.HasPrefix(res.Notes, "The run was stopped after "), res.Notes)
	require.Contains(t, strings.SplitN(res.Notes, "\n", 2)[0], "issue #12 was closed on the forge")
	require.NotNil(t, res.Metadata.Partial, res.Notes)
	require.Equal(t, []string{"README.md"}, res.Metadata.Partial.Files)
	require.Contains(t, res.Title, "No patch (stopped)")
}

// Partial work is checked as a patch is: work that adds a symbolic link,
// or carries a value of the worker's secrets, is not kept (no ref is
// written) and the notes say why.
func TestExecute_PartialWorkAPatchCouldNotCarryIsNotKept(t *testing.T) {
	t.Parallel()
	for name, write := range map[string]string{
		"symlink": `ln -s /etc/passwd innocent.txt`,
		"secret":  `echo 'key=sk-ant-canary-0451' >> README.md`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t)
			tb.secrets = redact.New(redact.Secret{Name: "ANTHROPIC_API_KEY", Value: "sk-ant-canary-0451"})
			agent := fmt.Sprintf(`%s; touch "%s/$AZOLLA_WORK_ORDER_ID.asleep"; sleep 120`, write, tb.root)
			tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(patchgen.CommandOptions{
				Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: agent, WorktreeDiff: gitops.Git{}.WorktreeDiff})})
			req := tb.request(t, "attack", "")
			req.Objective.Generator = "command"
			res, err := tb.untilAsleep(t, req, testStop)
			require.NoError(t, err)
			requireValidBundle(t, req, res)
			require.Equal(t, domain.RunnerStopped, res.RunnerStatus)
			require.Nil(t, res.Metadata.Partial, res.Notes)
			require.Contains(t, res.Notes, "The work left in the workspace was not kept: ")
			require.NotContains(t, res.Notes, "sk-ant-canary-0451")
			ws := tb.p.Workspace(req.WorkOrder.WorkOrderID)
			refs := git(t, ws, "for-each-ref", "refs/azolla/")
			require.Empty(t, strings.TrimSpace(refs), "no partial ref is written")
		})
	}
}
