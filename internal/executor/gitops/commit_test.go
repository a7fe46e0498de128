package gitops_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

var bot = gitops.Author{Name: "Azolla Bot", Email: "bot@azolla.example"}

func TestCommit_SetsAuthorAndCommitterAndRunsNoHooks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	// Hooks that would fail the commit and leave a mark, both in .git/hooks
	// and in a core.hooksPath the repository's own config names.
	mark := filepath.Join(t.TempDir(), "hook-ran")
	hook := "#!/bin/sh\ntouch " + mark + "\nexit 1\n"
	hooksDir := filepath.Join(t.TempDir(), "hooks")
	for _, dir := range []string{filepath.Join(b.ws, ".git", "hooks"), hooksDir} {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, name := range []string{"pre-commit", "commit-msg", "prepare-commit-msg", "post-commit"} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(hook), 0o755))
		}
	}
	git(t, b.ws, "config", "core.hooksPath", hooksDir)
	git(t, b.ws, "config", "commit.gpgSign", "true")
	git(t, b.ws, "config", "commit.cleanup", "strip")

	require.NoError(t, b.g.Apply(ctx, b.ws, modifyReadme))
	writeFile(t, b.ws, "untracked.txt", "new\n")
	writeFile(t, b.ws, "debug.log", "ignored\n")
	message := "Shrink the project\n\n# not a comment: kept verbatim\n"

	sha, err := b.g.Commit(ctx, b.ws, bot, message)
	require.NoError(t, err)

	require.Equal(t, sha+"\n", git(t, b.ws, "rev-parse", "HEAD"))
	require.Equal(t, "refs/heads/"+testBranch+"\n", git(t, b.ws, "symbolic-ref", "HEAD"))
	require.Equal(t, "Azolla Bot|bot@azolla.example|Azolla Bot|bot@azolla.example\n",
		git(t, b.ws, "log", "-1", "--format=%an|%ae|%cn|%ce"))
	require.Equal(t, message, git(t, b.ws, "log", "-1", "--format=%B")[:len(message)])
	require.Equal(t, "M\tREADME.md\nA\tuntracked.txt\n", git(t, b.ws, "diff", "--name-status", b.base, sha))
	require.Equal(t, "!! debug.log\n", status(t, b.ws), "ignored files are not committed")
	requireNotExist(t, mark)

	n, err := b.g.CountCommits(ctx, b.ws, b.base, sha)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

func TestCommit_NothingToCommit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	_, err := b.g.Commit(ctx, b.ws, bot, "nothing")
	require.ErrorIs(t, err, gitops.ErrNothingToCommit)

	// An ignored file is not a change either.
	writeFile(t, b.ws, "debug.log", "ignored\n")
	_, err = b.g.Commit(ctx, b.ws, bot, "nothing")
	require.ErrorIs(t, err, gitops.ErrNothingToCommit)
	require.Equal(t, b.base+"\n", git(t, b.ws, "rev-parse", "HEAD"))
}

func TestCommit_RefusesBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	writeFile(t, b.ws, "x.txt", "x\n")
	for _, a := range []gitops.Author{{}, {Name: "n"}, {Email: "e@x"}, {Name: "a<b", Email: "e@x"}, {Name: "n", Email: "e\n@x"}} {
		_, err := b.g.Commit(context.Background(), b.ws, a, "msg")
		require.ErrorContains(t, err, "invalid author", "%+v", a)
	}
	_, err := b.g.Commit(context.Background(), b.ws, bot, " \n")
	require.ErrorContains(t, err, "empty message")
	require.Equal(t, b.base+"\n", git(t, b.ws, "rev-parse", "HEAD"))
}

func TestCommit_MakesTheFirstCommitOfANewRepository(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "trunk")
	ctx := context.Background()

	_, err := gitops.Git{}.Commit(ctx, dir, bot, "empty")
	require.ErrorIs(t, err, gitops.ErrNothingToCommit)

	writeFile(t, dir, "hello.txt", "hello\n")
	sha, err := gitops.Git{}.Commit(ctx, dir, bot, "first")
	require.NoError(t, err)
	require.Equal(t, sha+"\n", git(t, dir, "rev-parse", "refs/heads/trunk"))
	require.Equal(t, "hello.txt\n", git(t, dir, "ls-tree", "--name-only", "HEAD"))
}

func TestCommitStaged_CommitsTheIndexOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	// Nothing staged: a dirty worktree is still nothing to commit.
	writeFile(t, b.ws, "docs/guide.txt", "unstaged\n")
	writeFile(t, b.ws, "untracked.txt", "new\n")
	_, err := b.g.CommitStaged(ctx, b.ws, bot, "nothing staged")
	require.ErrorIs(t, err, gitops.ErrNothingToCommit)
	require.Equal(t, b.base+"\n", git(t, b.ws, "rev-parse", "HEAD"))

	require.NoError(t, b.g.Apply(ctx, b.ws, modifyReadme))
	sha, err := b.g.CommitStaged(ctx, b.ws, bot, "Shrink the project\n")
	require.NoError(t, err)

	require.Equal(t, sha+"\n", git(t, b.ws, "rev-parse", "refs/heads/"+testBranch))
	require.Equal(t, "M\tREADME.md\n", git(t, b.ws, "diff", "--name-status", b.base, sha), "only what Apply staged")
	require.Equal(t, "Azolla Bot|bot@azolla.example|Azolla Bot|bot@azolla.example\n",
		git(t, b.ws, "log", "-1", "--format=%an|%ae|%cn|%ce"))
	require.Equal(t, " M docs/guide.txt\n?? untracked.txt\n", git(t, b.ws, "status", "--porcelain"),
		"the rest stays in the worktree")

	_, err = b.g.CommitStaged(ctx, b.ws, gitops.Author{}, "msg")
	require.ErrorContains(t, err, "invalid author")
	_, err = b.g.CommitStaged(ctx, b.ws, bot, "\n")
	require.ErrorContains(t, err, "empty message")
}

// TestCommit_StartsNoAutomaticMaintenance: a repository whose own config
// asks for the loose-objects task at every automatic maintenance gets no
// "loose-*" pack from a commit, so git commit did not start "git
// maintenance run --auto".
func TestCommit_StartsNoAutomaticMaintenance(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	git(t, b.ws, "config", "maintenance.loose-objects.enabled", "true")
	git(t, b.ws, "config", "maintenance.loose-objects.auto", "1")

	require.NoError(t, b.g.Apply(ctx, b.ws, modifyReadme))
	_, err := b.g.CommitStaged(ctx, b.ws, bot, "staged")
	require.NoError(t, err)
	writeFile(t, b.ws, "more.txt", "more\n")
	_, err = b.g.Commit(ctx, b.ws, bot, "all")
	require.NoError(t, err)

	packs, err := filepath.Glob(filepath.Join(b.ws, ".git", "objects", "pack", "loose-*"))
	require.NoError(t, err)
	require.Empty(t, packs)
}
