package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/sandbox"
)

// budget is far beyond any of these runs: none of them may end by it.
const budget = 10 * time.Minute

func TestExec_ASilentRunThatChangesNothingIsStalled(t *testing.T) {
	t.Parallel()
	for _, mode := range []sandbox.Mode{sandbox.ModeNone, sandbox.ModeBwrap} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			b := setup(t, mode, sandbox.Limits{})
			r := b.begin(t, sandbox.Policy{})
			defer func() { require.NoError(t, r.End()) }()
			// A unique fraction of an hour, to find its processes by.
			marker := fmt.Sprintf("%d%d", time.Now().UnixNano()%1000, os.Getpid())
			ctx, cancel := context.WithTimeout(t.Context(), budget)
			defer cancel()
			var out bytes.Buffer
			_, err := r.Exec(ctx, sandbox.Command{Line: `echo waiting for a human; sleep 3600.` + marker + ` & wait`,
				Dir: b.work, Stdout: &out, Stderr: &out, StallTimeout: 300 * time.Millisecond})

			require.ErrorIs(t, err, sandbox.ErrStalled)
			var se *sandbox.StallError
			require.ErrorAs(t, err, &se)
			require.Equal(t, 300*time.Millisecond, se.Timeout)
			require.ErrorContains(t, err, "no output and no file changed for 300ms")
			require.NoError(t, ctx.Err(), "the budget has not ended")
			require.Equal(t, "waiting for a human\n", out.String(), "what it said is kept")
			require.Eventually(t, func() bool { return len(processesWith(t, marker)) == 0 }, 10*time.Second,
				20*time.Millisecond, "the stalled run's processes outlived it")
		})
	}
}

func TestExec_ARunThatProgressesIsNotStalled(t *testing.T) {
	t.Parallel()
	// Each run progresses every 0.1s for at least 3s, well past its stall
	// timeout of 1s, and ends by itself.
	const loop = `i=0; while [ $i -lt 30 ]; do %s; sleep 0.1; i=$((i+1)); done; echo done`
	cases := []struct {
		name, step string
		silent     bool // stdout and stderr nil: the output goes nowhere
	}{
		{name: "prints", step: `echo working`},
		{name: "prints on stderr", step: `echo working >&2`},
		{name: "prints where no one reads", step: `echo working`, silent: true},
		{name: "touches a file", step: `touch notes.txt`, silent: true},
		{name: "creates files", step: `: > "f$i"`, silent: true},
		{name: "writes its TMPDIR", step: `echo x >> "$TMPDIR/build.log"`, silent: true},
	}
	for _, mode := range []sandbox.Mode{sandbox.ModeNone, sandbox.ModeBwrap} {
		for _, tc := range cases {
			t.Run(string(mode)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				b := setup(t, mode, sandbox.Limits{})
				r := b.begin(t, sandbox.Policy{})
				defer func() { require.NoError(t, r.End()) }()
				var out bytes.Buffer
				c := sandbox.Command{Line: fmt.Sprintf(loop, tc.step), Dir: b.work, Stdout: &out, Stderr: &out,
					StallTimeout: time.Second}
				if tc.silent {
					c.Stdout, c.Stderr = nil, nil
				}
				ctx, cancel := context.WithTimeout(t.Context(), budget)
				defer cancel()
				o, err := r.Exec(ctx, c)
				require.NoError(t, err)
				require.Zero(t, o.ExitCode)
				if !tc.silent {
					require.Contains(t, out.String(), "done")
				}
			})
		}
	}
}

func TestExec_ChangesUnderGitAreNoProgress(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone, sandbox.Limits{})
	require.NoError(t, os.Mkdir(b.work+"/.git", 0o755))
	r := b.begin(t, sandbox.Policy{})
	defer func() { require.NoError(t, r.End()) }()
	ctx, cancel := context.WithTimeout(t.Context(), budget)
	defer cancel()
	_, err := r.Exec(ctx, sandbox.Command{Line: `while :; do touch .git/index; sleep 0.05; done`, Dir: b.work,
		StallTimeout: 300 * time.Millisecond})
	require.ErrorIs(t, err, sandbox.ErrStalled)
}

func TestExec_TheBudgetStaysTheBudget(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone, sandbox.Limits{})
	r := b.begin(t, sandbox.Policy{})
	defer func() { require.NoError(t, r.End()) }()
	errBudget := errors.New("budget exhausted")
	ctx, cancel := context.WithTimeoutCause(t.Context(), 200*time.Millisecond, errBudget)
	defer cancel()
	_, err := r.Exec(ctx, sandbox.Command{Line: `sleep 3600`, Dir: b.work, StallTimeout: time.Hour})
	require.ErrorIs(t, err, errBudget)
	require.NotErrorIs(t, err, sandbox.ErrStalled)
}

func TestExecutor_WithStallTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone, sandbox.Limits{})
	e, err := b.host.Executor(sandbox.Policy{Name: "test"}, nil)
	require.NoError(t, err)
	require.Zero(t, e.StallTimeout())
	s := e.WithStallTimeout(time.Minute)
	require.Equal(t, time.Minute, s.StallTimeout())
	require.Zero(t, e.StallTimeout(), "the executor it was made from keeps its own")
}
