package proc_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/proc"
)

// The commands below that sleep do so for a minute; Run returning within
// promptly proves it did not wait for them.
const promptly = 15 * time.Second

func TestRun_ExitOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		command    string
		wantCode   int
		wantSignal syscall.Signal
		wantStatus string
	}{
		{"exit 0", "true", 0, 0, "exited 0"},
		{"non-zero exit", "exit 3", 3, 0, "exited with status 3"},
		{"exit of the last command", "false", 1, 0, "exited with status 1"},
		{"killed by a signal", "kill -TERM $$; sleep 60", -1, syscall.SIGTERM, "killed by signal 15 (terminated)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := proc.Run(t.Context(), proc.Spec{Command: tt.command})
			require.NoError(t, err, "how the command ended is the Result's to say")
			require.Equal(t, tt.wantCode, res.ExitCode)
			require.Equal(t, tt.wantSignal, res.Signal)
			require.Equal(t, tt.wantStatus, res.Status())
			require.Positive(t, res.Duration)
		})
	}
}

func TestRun_DurationCoversTheCommand(t *testing.T) {
	t.Parallel()
	res, err := proc.Run(t.Context(), proc.Spec{Command: "sleep 0.3"})
	require.NoError(t, err)
	require.GreaterOrEqual(t, res.Duration, 300*time.Millisecond)
	require.Less(t, res.Duration, promptly)
}

func TestRun_Streams(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("larger than any pipe buffer ✓\n", 40_000) // ~1.2 MB
	tests := []struct {
		name       string
		command    string
		stdin      *strings.Reader
		wantStdout string
		wantStderr string
	}{
		{"stdin to stdout", "cat", strings.NewReader("fix it\n"), "fix it\n", ""},
		{"stdin larger than the pipe buffer", "cat", strings.NewReader(big), big, ""},
		{"command that never reads its stdin", "echo ignored", strings.NewReader(big), "ignored\n", ""},
		{"nil stdin reads as empty", "wc -c | tr -d ' '", nil, "0\n", ""},
		{"separate stderr", "echo out; echo err >&2", nil, "out\n", "err\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			s := proc.Spec{Command: tt.command, Stdout: &stdout, Stderr: &stderr}
			if tt.stdin != nil {
				s.Stdin = tt.stdin
			}
			res, err := proc.Run(t.Context(), s)
			require.NoError(t, err)
			require.Zero(t, res.ExitCode)
			require.Equal(t, tt.wantStdout, stdout.String())
			require.Equal(t, tt.wantStderr, stderr.String())
		})
	}
}

func TestRun_NilWritersDiscardOutput(t *testing.T) {
	t.Parallel()
	// Far more than a pipe holds: a command writing to nobody must not block.
	res, err := proc.Run(t.Context(), proc.Spec{Command: "head -c 1000000 /dev/zero; head -c 1000000 /dev/zero >&2; exit 4"})
	require.NoError(t, err)
	require.Equal(t, 4, res.ExitCode)
}

func TestRun_SameWriterKeepsTheOrderOfOutput(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_, err := proc.Run(t.Context(), proc.Spec{
		Command: "for i in 1 2 3 4 5 6 7 8; do echo out $i; echo err $i >&2; done",
		Stdout:  &out, Stderr: &out,
	})
	require.NoError(t, err)
	var want strings.Builder
	for _, i := range []string{"1", "2", "3", "4", "5", "6", "7", "8"} {
		want.WriteString("out " + i + "\nerr " + i + "\n")
	}
	require.Equal(t, want.String(), out.String())
}

// funcWriter is a writer of an uncomparable type: comparing two of them as
// interfaces would panic.
type funcWriter func([]byte) (int, error)

func (f funcWriter) Write(p []byte) (int, error) { return f(p) }

func TestRun_UncomparableWritersAreNotConfused(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	res, err := proc.Run(t.Context(), proc.Spec{
		Command: "echo out; echo err >&2",
		Stdout:  funcWriter(stdout.Write),
		Stderr:  funcWriter(stderr.Write),
	})
	require.NoError(t, err)
	require.Zero(t, res.ExitCode)
	require.Equal(t, "out\n", stdout.String())
	require.Equal(t, "err\n", stderr.String())
}

func TestRun_EnvironmentAndDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out bytes.Buffer
	_, err := proc.Run(t.Context(), proc.Spec{
		Command: `echo "A=$A"; echo "B=$B"; echo "HOME=$HOME"; pwd -P`,
		Dir:     dir,
		Env:     []string{"A=first", "B=kept", "A=second"},
		Stdout:  &out,
	})
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	require.NotEmpty(t, os.Getenv("HOME"), "the test needs a variable of its own to not pass on")
	require.Equal(t, "A=second\nB=kept\nHOME=\n"+real+"\n", out.String(),
		"later entries win, and nothing of this process's environment is inherited")
}

func TestRun_EmptyEnvironmentInheritsNothing(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_, err := proc.Run(t.Context(), proc.Spec{Command: "env", Stdout: &out})
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		// dash exports PWD itself.
		require.True(t, line == "" || strings.HasPrefix(line, "PWD="), "inherited %q", line)
	}
}

func TestRun_StartedGetsThePidAndExtraFiles(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	var out bytes.Buffer
	var started int
	res, err := proc.Run(t.Context(), proc.Spec{
		Command:    "echo $$; echo from-fd-3 >&3",
		ExtraFiles: []*os.File{w},
		Stdout:     &out,
		Started:    func(pid int) error { started = pid; return nil },
	})
	require.NoError(t, err)
	require.Zero(t, res.ExitCode)
	require.Equal(t, strconv.Itoa(started)+"\n", out.String(), "Started got the shell's pid")
	got, err := io.ReadAll(r)
	require.NoError(t, err, "Run closed its copy of the write end, so the read ends")
	require.Equal(t, "from-fd-3\n", string(got))
}

func TestRun_FailedStartedKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	var pid int
	start := time.Now()
	_, err := proc.Run(t.Context(), proc.Spec{
		Command: "sleep 60",
		Started: func(p int) error {
			pid = p
			return errors.New("no cgroup")
		},
	})
	require.ErrorContains(t, err, "no cgroup")
	require.Less(t, time.Since(start), promptly)
	requireGone(t, pid)
}

func TestRun_WrapRunsTheShell(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_, err := proc.Run(t.Context(), proc.Spec{Command: "echo $0 $FROM_WRAP", Wrap: []string{"env", "FROM_WRAP=yes"},
		Stdout: &out})
	require.NoError(t, err)
	require.Equal(t, "/bin/sh yes\n", out.String())
}

func TestRun_FailureToStartIsAnError(t *testing.T) {
	t.Parallel()
	res, err := proc.Run(t.Context(), proc.Spec{Command: "true", Dir: filepath.Join(t.TempDir(), "missing")})
	require.ErrorContains(t, err, "start /bin/sh")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Zero(t, res)
}

func TestRun_EndedContextStartsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errStopping := errors.New("worker stopping")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errStopping)
	res, err := proc.Run(ctx, proc.Spec{Command: "touch started", Dir: dir})
	require.ErrorIs(t, err, errStopping)
	require.Zero(t, res)
	require.NoFileExists(t, filepath.Join(dir, "started"))
}

func TestRun_ContextEndKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errLeaseLost := errors.New("lease lost")
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	// The kill comes once Run has passed on the output the test expects to
	// be kept, which the shell writes after starting the grandchild: any
	// earlier, and the shell may not have written it yet.
	out := &awaitedWriter{want: "partial\n", seen: make(chan struct{})}
	go func() {
		select {
		case <-out.seen:
			cancel(errLeaseLost)
		case <-ctx.Done():
		}
	}()

	start := time.Now()
	res, err := proc.Run(ctx, proc.Spec{
		Dir:     dir,
		Command: `echo $$ > shell.pid; sleep 60 & echo $! > grandchild.pid; echo partial; wait`,
		Stdout:  out,
	})
	require.Less(t, time.Since(start), promptly)
	require.ErrorIs(t, err, errLeaseLost)
	require.ErrorContains(t, err, "process group killed")
	require.Positive(t, res.Duration)
	require.Equal(t, syscall.SIGKILL, res.Signal, "the shell died of the group kill")
	require.Equal(t, "partial\n", out.String(), "output up to the kill is kept")
	requireGone(t, readPID(t, dir, "shell.pid"))
	requireGone(t, readPID(t, dir, "grandchild.pid"))
}

func TestRun_DeadlineIsTheCause(t *testing.T) {
	t.Parallel()
	errBudget := errors.New("budget exhausted")
	ctx, cancel := context.WithTimeoutCause(t.Context(), 300*time.Millisecond, errBudget)
	defer cancel()
	start := time.Now()
	res, err := proc.Run(ctx, proc.Spec{Command: "sleep 60"})
	require.Less(t, time.Since(start), promptly)
	require.ErrorIs(t, err, errBudget)
	// The deadline was set a moment before Run started its clock.
	require.InDelta(t, 300*time.Millisecond, res.Duration, float64(50*time.Millisecond))
}

func TestRun_BackgroundProcessesDoNotOutliveTheShell(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out bytes.Buffer
	start := time.Now()
	// The shell exits at once, leaving a child that holds stdout open.
	res, err := proc.Run(t.Context(), proc.Spec{
		Dir: dir, Command: `sleep 60 & echo $! > child.pid; echo done`, Stdout: &out,
	})
	require.NoError(t, err)
	require.Less(t, time.Since(start), proc.DrainTimeout, "the child was killed, not waited for")
	require.Zero(t, res.ExitCode)
	require.Equal(t, "done\n", out.String())
	requireGone(t, readPID(t, dir, "child.pid"))
}

// escape starts a sleep in a session of its own, holding stdout and stderr,
// and waits until it is there: a shell that exited first would have its
// group killed before setsid ran. escapeWithStdin lets it hold stdin too.
const (
	escaped         = `setsid sh -c 'echo $$ > escaped.pid; exec sleep 60'`
	untilEscaped    = ` while [ ! -s escaped.pid ]; do sleep 0.01; done`
	escape          = escaped + ` &` + untilEscaped
	escapeWithStdin = escaped + ` <&0 &` + untilEscaped
)

func TestRun_ProcessThatLeftTheGroupDoesNotHoldRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		// cancel ends ctx once the escaped process is running.
		cancel bool
	}{
		{"shell exits", escape + `; echo done`, false},
		{"ctx ends", escape + `; wait`, true},
		{"escaped process holds stdin", escapeWithStdin + `; echo done`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				go func() {
					waitForFile(filepath.Join(dir, "escaped.pid"))
					cancel()
				}()
			}
			var out bytes.Buffer
			start := time.Now()
			res, err := proc.Run(ctx, proc.Spec{
				Dir: dir, Command: tt.command, Stdout: &out, Stderr: &out,
				// More than a pipe holds, so that the feeding goroutine is
				// still writing when the shell is gone.
				Stdin: strings.NewReader(strings.Repeat("x", 1<<20)),
			})
			elapsed := time.Since(start)
			killOnCleanup(t, readPID(t, dir, "escaped.pid"))
			if tt.cancel {
				require.ErrorIs(t, err, context.Canceled)
			} else {
				require.NoError(t, err)
				require.Zero(t, res.ExitCode)
				require.Equal(t, "done\n", out.String())
			}
			// setsid put the sleep out of reach of the kill: Run gave up on
			// the pipes it still holds after the drain bound.
			require.GreaterOrEqual(t, elapsed, proc.DrainTimeout)
			require.Less(t, elapsed, proc.DrainTimeout+5*time.Second)
		})
	}
}
