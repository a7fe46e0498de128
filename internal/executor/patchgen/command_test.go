package patchgen_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// git runs git in dir and returns its stdout.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("git %v: %v\n%s", args, err, ee.Stderr)
	}
	require.NoError(t, err)
	return string(out)
}

// newRepo returns a git repository with hello.txt committed on main.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\nworld\n"), 0o644))
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=azolla", "-c", "user.email=azolla@example.com", "commit", "-q", "-m", "init")
	return dir
}

// worktreeDiff stands in for the real one, which lives in another package:
// everything changed since HEAD, new files included.
func worktreeDiff(ctx context.Context, dir string) (string, error) {
	gitOut := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %v: %w", args, err)
		}
		return string(out), nil
	}
	if _, err := gitOut("add", "-A"); err != nil {
		return "", err
	}
	return gitOut("diff", "--cached", "HEAD")
}

// generate runs command line run on a fresh repository.
func generate(t *testing.T, run string) (patchgen.Output, string) {
	t.Helper()
	dir := newRepo(t)
	g := patchgen.NewCommand(patchgen.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: run, WorktreeDiff: worktreeDiff})
	out, err := g.Generate(t.Context(), newInput(dir))
	require.NoError(t, err)
	return out, dir
}

func TestCommand_Name(t *testing.T) {
	t.Parallel()
	require.Equal(t, "command", patchgen.NewCommand(patchgen.CommandOptions{}).Name())
}

func TestCommand_PatchFromWorktreeChanges(t *testing.T) {
	t.Parallel()
	// What the agent printed does not count once it changed the worktree.
	out, _ := generate(t, "sed -i 's/world/there/' hello.txt && printf '```diff\\n"+strings.ReplaceAll(otherDiff, "\n", "\\n")+"```\\n'")
	require.Contains(t, out.Patch, "diff --git a/hello.txt b/hello.txt\n")
	require.Contains(t, out.Patch, "\n-world\n+there\n")
	require.NotContains(t, out.Patch, "other.txt")
	require.Regexp(t, `^command exited 0 after [0-9.]+m?s; patch taken from the worktree changes \([0-9]+ bytes\)$`, out.Notes)
}

func TestCommand_PatchFromStdout(t *testing.T) {
	t.Parallel()
	reply := "I would change hello.txt like this:\n\n```diff\n" + helloDiff + "```\n"
	out, dir := generate(t, "cat <<'EOF'\n"+reply+"EOF")
	require.Equal(t, helloDiff, out.Patch)
	require.Contains(t, out.Notes, "worktree unchanged; patch taken from stdout")

	// The patch is one git accepts against the worktree it was made for.
	patchFile := filepath.Join(t.TempDir(), "p.diff")
	require.NoError(t, os.WriteFile(patchFile, []byte(out.Patch), 0o644))
	git(t, dir, "apply", "--check", patchFile)
}

func TestCommand_InputOnStdinAndInAFileOutsideTheWorktree(t *testing.T) {
	t.Parallel()
	dir, rec := newRepo(t), t.TempDir()
	// Configuration cannot name an AZOLLA_* variable (sandbox.CheckName):
	// the objective's are azolla's alone.
	g := patchgen.NewCommand(patchgen.CommandOptions{
		Executor: sandboxtest.Unconfined(t, sandbox.Policy{Env: map[string]string{"REC": rec}}),
		Run: `cat > "$REC/stdin"; cp "$AZOLLA_INPUT_FILE" "$REC/file"; echo "$AZOLLA_INPUT_FILE" > "$REC/path"; ` +
			`echo "$AZOLLA_REPORT_FILE" > "$REC/report"; echo "$AZOLLA_ARTIFACT_DIR" > "$REC/artifacts"; ` +
			`echo "$AZOLLA_QUESTION_FILE" > "$REC/question"; ` +
			`test -d "$AZOLLA_ARTIFACT_DIR" && test -w "$AZOLLA_ARTIFACT_DIR" && ` +
			`env | grep '^AZOLLA_' | grep -v '^AZOLLA_INPUT_FILE=' | grep -v '^AZOLLA_REPORT_FILE=' | ` +
			`grep -v '^AZOLLA_ARTIFACT_DIR=' | grep -v '^AZOLLA_QUESTION_FILE=' | sort > "$REC/env"`,
		WorktreeDiff: worktreeDiff,
	})
	in := newInput(dir)
	out, err := g.Generate(t.Context(), in)
	require.NoError(t, err)
	require.Empty(t, out.Patch, "the command changed nothing and printed nothing")
	require.Contains(t, out.Notes, "no patch: worktree unchanged and stdout (0 bytes) holds no unified diff")

	stdin, err := os.ReadFile(filepath.Join(rec, "stdin"))
	require.NoError(t, err)
	file, err := os.ReadFile(filepath.Join(rec, "file"))
	require.NoError(t, err)
	require.Equal(t, string(stdin), string(file))
	require.True(t, strings.HasPrefix(string(stdin), patchgen.GenerationInput(in)))
	require.Contains(t, string(stdin), "You run inside a checkout of the repository at "+dir)

	path, err := os.ReadFile(filepath.Join(rec, "path"))
	require.NoError(t, err)
	inputFile := strings.TrimSpace(string(path))
	rel, err := filepath.Rel(dir, inputFile)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(rel, ".."), "input file %s is inside the worktree %s", inputFile, dir)
	require.NoFileExists(t, inputFile)
	require.NoDirExists(t, filepath.Dir(inputFile))
	report, err := os.ReadFile(filepath.Join(rec, "report"))
	require.NoError(t, err)
	require.Equal(t, filepath.Dir(inputFile), filepath.Dir(strings.TrimSpace(string(report))),
		"the report file is beside the input, outside the worktree")
	artifacts, err := os.ReadFile(filepath.Join(rec, "artifacts"))
	require.NoError(t, err)
	require.Equal(t, filepath.Dir(inputFile), filepath.Dir(strings.TrimSpace(string(artifacts))),
		"the artifact directory is beside the input, outside the worktree")
	question, err := os.ReadFile(filepath.Join(rec, "question"))
	require.NoError(t, err)
	require.Equal(t, filepath.Dir(inputFile), filepath.Dir(strings.TrimSpace(string(question))),
		"the question file is beside the input, outside the worktree")

	env, err := os.ReadFile(filepath.Join(rec, "env"))
	require.NoError(t, err)
	require.Equal(t, strings.Join([]string{
		"AZOLLA_BASE_BRANCH=main",
		"AZOLLA_BRANCH_NAME=azolla/obj-1",
		"AZOLLA_COMMIT_SHA=" + strings.Repeat("ab", 20),
		"AZOLLA_OBJECTIVE_ID=obj-1",
		"AZOLLA_WORKTREE=" + dir,
		"AZOLLA_WORK_ORDER_ID=wo-1",
	}, "\n")+"\n", string(env))
}

func TestCommand_ExitStatusGoesInTheNotes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, run string
		wantPatch bool
		wantNotes string
	}{
		{
			name: "failure without a patch", run: "echo working; echo 'agent crashed' >&2; exit 2",
			wantNotes: `^command exited with status 2 after [0-9.]+m?s; no patch: worktree unchanged and stdout \(8 bytes\) holds no unified diff\nstderr:\nagent crashed$`,
		},
		{
			name: "failure that left a patch still proposes it", run: "sed -i 's/world/there/' hello.txt; exit 1",
			wantPatch: true,
			wantNotes: `^command exited with status 1 after [0-9.]+m?s; patch taken from the worktree changes`,
		},
		{
			name: "killed by a signal", run: "kill -TERM $$",
			wantNotes: `^command killed by signal 15 \(terminated\) after [0-9.]+m?s; no patch`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _ := generate(t, tt.run)
			require.Equal(t, tt.wantPatch, out.Patch != "", out.Patch)
			require.Regexp(t, tt.wantNotes, out.Notes)
		})
	}
}

func TestCommand_NotesQuoteOnlyTheTailOfStderr(t *testing.T) {
	t.Parallel()
	out, _ := generate(t, "head -c 10000 /dev/zero | tr '\\0' x >&2; echo END >&2")
	require.Contains(t, out.Notes, "\nstderr (last 2048 of 10004 bytes):\n")
	require.True(t, strings.HasSuffix(out.Notes, strings.Repeat("x", 2044)+"END"))
	require.Less(t, len(out.Notes), 2300)
}

func TestCommand_DeadlineKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	dir, rec := newRepo(t), t.TempDir()
	// The pid file appears by a rename once it holds the pid.
	g := patchgen.NewCommand(patchgen.CommandOptions{
		Executor:     sandboxtest.Unconfined(t, sandbox.Policy{Env: map[string]string{"REC": rec}}),
		Run:          `sleep 60 & echo $! > "$REC/child.tmp"; mv "$REC/child.tmp" "$REC/child.pid"; wait`,
		WorktreeDiff: worktreeDiff,
	})
	// The deadline passes once the child runs, whatever the machine's load:
	// the generator sees what a budget's deadline gives it, a context ended
	// with DeadlineExceeded as its cause.
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	go func() {
		for !fileExists(filepath.Join(rec, "child.pid")) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond) // polling for the condition, not waiting for time
		}
		cancel(context.DeadlineExceeded)
	}()
	start := time.Now()
	out, err := g.Generate(ctx, newInput(dir))
	require.Less(t, time.Since(start), 15*time.Second, "the generator's 60s sleep was not waited for")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "process group killed")
	require.Zero(t, out)

	// Killed with the group, the child cannot have held the pipes either.
	pidText, err := os.ReadFile(filepath.Join(rec, "child.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "child %d still running", pid)
}

// gone reports whether pid has exited. A killed child whose parent died too
// is reparented to init, which need not reap it promptly (or at all in a
// container), so a zombie counts as gone.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	s := string(stat) // the state follows the command name, which may hold ')'
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestCommand_MisconfigurationIsAnError(t *testing.T) {
	t.Parallel()
	dir := newRepo(t)
	tests := []struct {
		name     string
		opts     patchgen.CommandOptions
		worktree string
		wantErr  string
	}{
		{"no command", patchgen.CommandOptions{Run: " ", WorktreeDiff: worktreeDiff}, dir, "no command configured"},
		{"no worktree diff", patchgen.CommandOptions{Run: "true"}, dir, "no WorktreeDiff configured"},
		{"no worktree", patchgen.CommandOptions{Run: "true", WorktreeDiff: worktreeDiff}, "", "no worktree"},
		{"missing worktree", patchgen.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: "true", WorktreeDiff: worktreeDiff}, filepath.Join(dir, "missing"), "working directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := patchgen.NewCommand(tt.opts).Generate(t.Context(), newInput(tt.worktree))
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, err, "obj-1")
			require.Zero(t, out)
		})
	}
}

func TestCommand_WorktreeDiffFailureIsAnError(t *testing.T) {
	t.Parallel()
	errBroken := errors.New("index locked")
	g := patchgen.NewCommand(patchgen.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}),
		Run:          "true",
		WorktreeDiff: func(context.Context, string) (string, error) { return "", errBroken },
	})
	out, err := g.Generate(t.Context(), newInput(newRepo(t)))
	require.ErrorIs(t, err, errBroken)
	require.ErrorContains(t, err, "read worktree changes")
	require.Zero(t, out)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
