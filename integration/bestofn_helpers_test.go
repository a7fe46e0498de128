package integration

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// valueRepo makes a repository whose main has value.txt holding 0: the
// best-of-N tests' gate wants 42 there.
func valueRepo(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "app")
	require.NoError(tb, os.MkdirAll(dir, 0o755))
	require.NoError(tb, os.WriteFile(filepath.Join(dir, "value.txt"), []byte("0\n"), 0o644))
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=Upstream", "-c", "user.email=up@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(tb, err, "git %v: %s", args, out)
	}
	return dir
}

// bestOfN targets repo with the command generator and n attempts.
func bestOfN(repo string, n int) func(*domain.Objective) {
	return func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = repo, "main", config.GeneratorCommand
		o.Attempts = &n
	}
}

// onlyWorkOrder returns the objective's one workorder.
func (b *bundle) onlyWorkOrder(t testing.TB, id string) *domain.WorkOrder {
	t.Helper()
	wos, err := b.store.ListWorkOrders(context.Background(), store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	require.Len(t, wos, 1)
	return wos[0]
}

// gatePassed lists whether each gate command passed on c, in order.
func gatePassed(c *domain.Candidate) []bool {
	out := []bool{}
	for _, g := range c.GateResults {
		out = append(out, g.Passed)
	}
	return out
}

// gateCommands lists the gate commands run on c, in order.
func gateCommands(c *domain.Candidate) []string {
	out := []string{}
	for _, g := range c.GateResults {
		out = append(out, g.Command)
	}
	return out
}

// processesRunning returns the host PIDs of the live processes whose
// argument list is exactly argv, as /proc shows them: a sandboxed run
// is in a PID namespace of its own, so its own $$ would say nothing here.
func processesRunning(argv ...string) []int {
	want := []byte{}
	for _, a := range argv {
		want = append(append(want, a...), 0)
	}
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Equal(cmdline, want) && processAlive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processAlive reports whether pid is a process that has not exited: kill
// -0 reaches it and it is not a zombie waiting for its parent.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// failWithinBudget creates objective id on repo with three attempts and a
// budget of budget dollars, approves it, and returns its state once its
// round has failed the gate and paused.
func (b *bundle) failWithinBudget(t testing.TB, id, repo string, budget float64) workflows.State {
	t.Helper()
	b.create(t, id, bestOfN(repo, 3), func(o *domain.Objective) { o.BudgetUSD = &budget })
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := b.starter.Decide(context.Background(), id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	paused := b.waitStep(t, id, workflows.StepAwaitingRetry)
	require.Equal(t, domain.GateFail, paused.GateResult)
	return paused
}

// requireEarlyStopped checks the records of an early stop among three
// candidates: the first is DONE and chosen, the other two CANCELLED for it
// with no patch.
func requireEarlyStopped(t testing.TB, cands []*domain.Candidate) {
	t.Helper()
	require.Len(t, cands, 3)
	require.Equal(t, domain.CandidateDone, cands[0].Status, cands[0].Why)
	require.True(t, cands[0].Chosen)
	for _, c := range cands[1:] {
		require.Equal(t, domain.CandidateCancelled, c.Status, "candidate %d", c.Attempt)
		require.False(t, c.Chosen)
		require.Contains(t, c.Why, "another candidate passed every gate command first")
		require.Empty(t, c.Patch)
	}
}
