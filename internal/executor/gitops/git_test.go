package gitops_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

// fakeGit writes an executable standing in for git that runs script.
func fakeGit(t *testing.T, script string) gitops.Git {
	t.Helper()
	path := filepath.Join(t.TempDir(), "git")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o755))
	return gitops.Git{Path: path}
}

func TestGit_HardensEveryInvocation(t *testing.T) {
	t.Setenv("GIT_DIR", "/somewhere/else")
	t.Setenv("GIT_INDEX_FILE", "/somewhere/else/index")
	out := t.TempDir()
	g := fakeGit(t, `printf '%s\n' "$@" > `+out+`/args; env > `+out+`/env; exit 1`)

	_, err := g.ResolveBranch(context.Background(), t.TempDir(), "main")
	require.ErrorIs(t, err, gitops.ErrBranchNotFound, "the fake exits 1, as git does for a missing ref")

	args := strings.Split(strings.TrimSuffix(readFile(t, out, "args"), "\n"), "\n")
	sub := slices.Index(args, "rev-parse")
	require.Positive(t, sub)
	for _, want := range []string{"core.hooksPath=/dev/null", "commit.gpgSign=false", "tag.gpgSign=false",
		"protocol.ext.allow=never", "core.fsmonitor=false", "submodule.recurse=false"} {
		i := slices.Index(args, want)
		require.True(t, i > 0 && i < sub && args[i-1] == "-c", "-c %s before the subcommand in %q", want, args)
	}
	require.Equal(t, []string{"--verify", "--quiet", "--end-of-options", "refs/heads/main^{commit}"}, args[sub+1:])

	env := strings.Split(readFile(t, out, "env"), "\n")
	for _, want := range []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/true", "GIT_NO_REPLACE_OBJECTS=1"} {
		require.Contains(t, env, want)
	}
	for _, kv := range env {
		require.False(t, strings.HasPrefix(kv, "GIT_DIR=") || strings.HasPrefix(kv, "GIT_INDEX_FILE="), kv)
	}
}

func TestGit_IgnoresAnInheritedGitDir(t *testing.T) {
	b := setup(t)
	other, _ := newUpstream(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))

	_, err := b.g.ResolveBranch(context.Background(), b.ws, testBranch)
	require.NoError(t, err, "the workspace's branch, not one of GIT_DIR's")
}

func TestGit_CancelKillsGitAndWhatItStarted(t *testing.T) {
	t.Parallel()
	rec := t.TempDir()
	// The background job would outlive git (and write later) if only git
	// were killed. Both pids are written before ctx ends: the end comes
	// once the second is there.
	g := fakeGit(t, "echo $$ > "+rec+"/git.pid\n(sleep 30; touch "+rec+"/survived) &\necho $! > "+rec+"/job.tmp\n"+
		"mv "+rec+"/job.tmp "+rec+"/job.pid\nsleep 30\n")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		for !fileExists(filepath.Join(rec, "job.pid")) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond) // polling for the condition, not waiting for time
		}
		cancel()
	}()

	start := time.Now()
	_, err := g.HeadOf(ctx, t.TempDir())
	require.ErrorIs(t, err, context.Canceled)
	var ge *gitops.Error
	require.True(t, errors.As(err, &ge))
	require.Equal(t, -1, ge.ExitCode)
	require.Less(t, time.Since(start), 25*time.Second, "git's own sleep was not waited for")

	for _, name := range []string{"git.pid", "job.pid"} {
		pid := readPID(t, rec, name)
		require.Eventually(t, func() bool { return processGone(pid) }, 5*time.Second, 10*time.Millisecond,
			"%s %d still running", name, pid)
	}
	requireNotExist(t, filepath.Join(rec, "survived"))
}

func TestGit_ErrorCarriesSubcommandExitCodeAndStderrTail(t *testing.T) {
	t.Parallel()
	g := fakeGit(t, `i=0; while [ $i -lt 2000 ]; do echo "noise line $i" >&2; i=$((i+1)); done; echo "fatal: the real reason" >&2; exit 3`)
	_, err := g.HeadOf(context.Background(), t.TempDir())
	var ge *gitops.Error
	require.True(t, errors.As(err, &ge))
	require.Equal(t, 3, ge.ExitCode)
	require.LessOrEqual(t, len(ge.Stderr), 4096)
	require.True(t, strings.HasSuffix(ge.Stderr, "fatal: the real reason"))
	require.Equal(t, "rev-parse", ge.Args[0])
	require.True(t, strings.HasPrefix(ge.Error(), "git rev-parse: exit status 3: "), ge.Error())
}

func TestGit_MissingBinary(t *testing.T) {
	t.Parallel()
	g := gitops.Git{Path: filepath.Join(t.TempDir(), "no-git")}
	_, err := g.HeadOf(context.Background(), t.TempDir())
	var ge *gitops.Error
	require.True(t, errors.As(err, &ge))
	require.Equal(t, -1, ge.ExitCode)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestError_MasksPasswordsInURLs(t *testing.T) {
	t.Parallel()
	g := fakeGit(t, "exit 128")
	m := &gitops.Mirrors{Git: g, Root: t.TempDir()}
	_, err := m.Sync(context.Background(), "https://bot:s3cret@example.com/org/repo.git")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cret")
	var ge *gitops.Error
	require.True(t, errors.As(err, &ge))
	require.NotContains(t, strings.Join(ge.Args, " "), "s3cret")
	require.Contains(t, strings.Join(ge.Args, " "), "https://bot:xxxxx@example.com/org/repo.git")
}
