package patch_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

func TestExecute_AnAgentThatStopsProgressingIsStalled(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ex := sandboxtest.Unconfined(t, sandbox.Policy{}).WithStallTimeout(300 * time.Millisecond)
	tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(patchgen.CommandOptions{
		Executor: ex, Run: "echo 'half done' > README.md; echo 'Allow edit? [y/n]'; sleep 3600",
		WorktreeDiff: gitops.Git{}.WorktreeDiff})})
	req := tb.request(t, "stuck", "")
	req.Objective.Generator = "command"
	// Only the stall can end this run.
	req.Budget = time.Hour
	res := execute(t, tb, req)

	require.Equal(t, domain.RunnerStalled, res.RunnerStatus)
	require.Empty(t, res.Content, "what a stalled agent left is not proposed")
	require.Empty(t, res.Metadata.CommitSHA)
	require.Regexp(t, `^The command generator's agent wrote no output and changed no file for 300ms \(executor.stall_timeout\) `+
		`and was stopped after [0-9.]+m?s;`, res.Notes)
	require.Contains(t, res.Title, "No patch (stalled)")
	require.NotNil(t, res.Metadata.Partial, "what it wrote before it stalled is kept for the next round")
	require.Equal(t, []string{"README.md"}, res.Metadata.Partial.Files)
	tb.requireUntouched(t)
}

func TestExecute_AnAgentThatKeepsEditingIsNotStalled(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ex := sandboxtest.Unconfined(t, sandbox.Policy{}).WithStallTimeout(time.Second)
	// Silent, but editing the worktree every 0.1s for at least 3s.
	tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(patchgen.CommandOptions{
		Executor: ex, Run: `i=0; while [ $i -lt 30 ]; do echo "line $i" >> README.md; sleep 0.1; i=$((i+1)); done`,
		WorktreeDiff: gitops.Git{}.WorktreeDiff})})
	req := tb.request(t, "busy", "")
	req.Objective.Generator = "command"
	req.Budget = time.Hour
	res := execute(t, tb, req)

	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)
	require.Contains(t, res.Content, "+line 29")
}
