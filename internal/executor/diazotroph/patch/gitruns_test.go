package patch_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
)

// loggingGit is a git that appends the subcommand of each run (the first
// argument after the "-c" pairs) to a log before running the real one, and a
// function that returns the subcommands logged since the last call.
func loggingGit(t *testing.T) (gitops.Git, func() []string) {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	require.NoError(t, err)
	dir := t.TempDir()
	wrapper, log := filepath.Join(dir, "git"), filepath.Join(dir, "runs.log")
	// Logs the first argument that is neither "-c" nor the value after it.
	script := fmt.Sprintf(`#!/bin/sh
skip=
for a; do
	if [ -n "$skip" ]; then skip=; continue; fi
	if [ "$a" = -c ]; then skip=1; continue; fi
	echo "$a" >> '%s'
	break
done
exec '%s' "$@"
`, log, gitPath)
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	seen := 0
	return gitops.Git{Path: wrapper}, func() []string {
		raw, err := os.ReadFile(log)
		if os.IsNotExist(err) {
			return nil
		}
		require.NoError(t, err)
		runs := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
		out := runs[seen:]
		seen = len(runs)
		return out
	}
}

// TestExecute_GitRunsOfAWorkorder pins the git processes one workorder
// starts, so that a new one is a decision, not an accident: each costs a
// process start on every workorder.
func TestExecute_GitRunsOfAWorkorder(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	g, runs := loggingGit(t)
	p := patch.New(patch.Options{Git: g, Dir: tb.gitDir, Generators: map[string]patchgen.Generator{"static": patchgen.NewStatic()},
		Default: "static", Author: author, Policy: gitops.PatchPolicy{MaxBytes: 1 << 20}})
	req := tb.request(t, "greet", goodPatch) // clones the mirror with tb.p

	res, err := p.Execute(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)
	require.Equal(t, []string{
		"fetch",     // the mirror
		"clone",     // the new workspace, from the mirror
		"rev-parse", // the snapshot's commit is in it, as a commit
		"checkout",  // the branch at that commit, into the empty clone
		"apply",     // --index, which checks the whole patch before it writes
		"commit",    // what apply staged; it starts no "maintenance run --auto"
		"rev-parse", // the commit's id
		"diff",      // the bundle's content
	}, runs())

	// A patch git refuses.
	req = tb.request(t, "stale", strings.Replace(goodPatch, "-echo hello", "-echo goodbye", 1))
	runs()
	res, err = p.Execute(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, domain.RunnerApplyFailed, res.RunnerStatus, res.Notes)
	require.Equal(t, []string{"fetch", "clone", "rev-parse", "checkout", "apply",
		"rev-parse"}, runs(), "only a refusal asks whether the workspace is a repository")
}
