package diazotroph_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

func TestCommand_ARunThatStopsProgressingIsStalled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ex := sandboxtest.Unconfined(t, sandbox.Policy{}).WithStallTimeout(300 * time.Millisecond)
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: ex, Dir: dir,
		Run: `echo partial; echo 'Continue? [y/n]' >&2; sleep 3600`})
	// The budget is far away: only the stall can end this run.
	res, err := c.Execute(t.Context(), newRequest("", time.Hour))
	require.NoError(t, err)

	require.Equal(t, domain.RunnerStalled, res.RunnerStatus)
	require.Empty(t, res.Content)
	require.Regexp(t, `^stalled: no output and no file changed for 300ms \(executor.stall_timeout\); stopped after [0-9.]+m?s: `+
		`process group killed, partial output discarded \(8 bytes\)\nstderr:\nContinue\? \[y/n\]$`, res.Notes)
	require.Equal(t, "azolla/obj-1", res.Metadata.BranchName)
	requireValidBundle(t, res)
}

func TestCommand_ARunThatKeepsPrintingIsNotStalled(t *testing.T) {
	t.Parallel()
	ex := sandboxtest.Unconfined(t, sandbox.Policy{}).WithStallTimeout(time.Second)
	// Progress every 0.1s for at least 3s, past the stall timeout.
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: ex, Dir: t.TempDir(),
		Run: `i=0; while [ $i -lt 30 ]; do echo step $i; sleep 0.1; i=$((i+1)); done`})
	res, err := c.Execute(t.Context(), newRequest("", time.Hour))
	require.NoError(t, err)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Contains(t, res.Content, "step 29")
}

func TestCommand_TheBudgetStaysTheBudgetWithAStallTimeout(t *testing.T) {
	t.Parallel()
	ex := sandboxtest.Unconfined(t, sandbox.Policy{}).WithStallTimeout(time.Hour)
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: ex, Dir: t.TempDir(), Run: `sleep 3600`})
	res, err := c.Execute(t.Context(), newRequest("", time.Second))
	require.NoError(t, err)
	require.Equal(t, domain.RunnerBudgetExhausted, res.RunnerStatus)
}
