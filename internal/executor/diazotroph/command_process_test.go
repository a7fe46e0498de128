package diazotroph_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// The commands below sleep for a minute; Execute returning within promptly
// proves it did not wait for them.
const promptly = 15 * time.Second

// readPID returns the pid the command wrote to dir/name, waiting for it.
func readPID(t *testing.T, dir, name string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "no pid in %s", name)
	return pid
}

// requireGone waits briefly for pid to be gone. A killed process whose parent
// died too is reparented to init, which need not reap it promptly (or at all
// in a container), so a zombie counts as gone.
func requireGone(t *testing.T, pid int) {
	t.Helper()
	require.Eventually(t, func() bool { return processGone(pid) }, 5*time.Second, 10*time.Millisecond,
		"process %d still running", pid)
}

func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name in parentheses, which may hold ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// killOnCleanup kills pid when the test ends, for processes that escaped the
// group on purpose.
func killOnCleanup(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
}

func TestCommand_BudgetExhaustionKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}),
		Dir: dir,
		Run: `echo $$ > shell.pid; sleep 60 & echo $! > grandchild.pid; echo partial; wait`,
	})
	start := time.Now()
	res, err := c.Execute(t.Context(), newRequest("", 2*time.Second))
	elapsed := time.Since(start)
	require.NoError(t, err)
	require.Less(t, elapsed, promptly)
	require.GreaterOrEqual(t, elapsed, 2*time.Second)

	require.Equal(t, domain.RunnerBudgetExhausted, res.RunnerStatus)
	require.Empty(t, res.Content)
	require.Regexp(t, `^budget 2s exhausted after [0-9.]+s: process group killed, partial output discarded \(8 bytes\)$`, res.Notes)
	require.Equal(t, "azolla/obj-1", res.Metadata.BranchName)
	requireValidBundle(t, res)
	requireGone(t, readPID(t, dir, "shell.pid"))
	requireGone(t, readPID(t, dir, "grandchild.pid"))
}

func TestCommand_BackgroundProcessesDoNotOutliveARun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The shell exits at once, leaving a child that holds stdout open.
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}),
		Dir: dir, Run: `sleep 60 & echo $! > child.pid; echo done`,
	})
	start := time.Now()
	res, err := c.Execute(t.Context(), newRequest("", time.Minute))
	require.NoError(t, err)
	require.Less(t, time.Since(start), promptly)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Equal(t, "done\n", res.Content)
	requireGone(t, readPID(t, dir, "child.pid"))
}

func TestCommand_ProcessThatLeftTheGroupDoesNotHoldExecute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		run        string
		budget     time.Duration
		wantStatus string
		wantNotes  string
	}{
		{
			// A budget the command cannot run out of, however loaded the
			// machine: the exit must be what ends the run.
			name:       "command exits",
			run:        `setsid sleep 60 & echo $! > escaped.pid; echo done`,
			budget:     time.Minute,
			wantStatus: domain.RunnerOK, wantNotes: "command exited 0",
		},
		{
			name:       "budget expires",
			run:        `setsid sleep 60 & echo $! > escaped.pid; wait`,
			budget:     time.Second,
			wantStatus: domain.RunnerBudgetExhausted, wantNotes: "budget 1s exhausted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Dir: dir, Run: tt.run})
			start := time.Now()
			res, err := c.Execute(t.Context(), newRequest("", tt.budget))
			killOnCleanup(t, readPID(t, dir, "escaped.pid"))
			require.NoError(t, err)
			// setsid put the sleep out of reach of the kill: Execute gave up
			// on the pipes it still holds.
			require.Less(t, time.Since(start), promptly)
			require.Equal(t, tt.wantStatus, res.RunnerStatus)
			require.Contains(t, res.Notes, tt.wantNotes)
		})
	}
}

func TestCommand_CancelledContextKillsTheGroupAndReturnsTheCause(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The pid file appears by a rename once it holds the pid: the redirection
	// alone creates it empty, and a kill before echo has written it would
	// leave it so.
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}),
		Dir: dir, Run: `sleep 60 & echo $! > grandchild.tmp; mv grandchild.tmp grandchild.pid; echo partial; wait`,
	})
	errLeaseLost := errors.New("lease lost")
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	go func() {
		for !fileExists(filepath.Join(dir, "grandchild.pid")) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		cancel(errLeaseLost)
	}()

	start := time.Now()
	res, err := c.Execute(ctx, newRequest("", time.Minute))
	require.Less(t, time.Since(start), promptly)
	require.ErrorIs(t, err, errLeaseLost)
	require.ErrorContains(t, err, "process group killed")
	require.Zero(t, res, "no result may be persisted after the lease is lost")
	requireGone(t, readPID(t, dir, "grandchild.pid"))
}

func TestCommand_CancelledContextStartsNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "work")
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Dir: dir, Run: "touch started"})
	ctx, cancel := context.WithCancelCause(t.Context())
	errStopping := errors.New("worker stopping")
	cancel(errStopping)

	res, err := c.Execute(ctx, newRequest("", time.Minute))
	require.ErrorIs(t, err, errStopping)
	require.Zero(t, res)
	require.NoDirExists(t, dir)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
