package gitops_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

func checkAll(patch string) ([]string, error) { return []string{"checked"}, nil }

// Work left in a worktree is kept on a ref of its own, the worktree,
// index, HEAD and branch untouched; another workspace of the same
// repository takes it back as uncommitted changes on the same commit.
func TestKeepPartial_KeepsTheWorktreeOnItsRefAndAnotherWorkspaceResumesIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	writeFile(t, b.ws, "src/main.go", "package main\n\nfunc main() {\n\tprintln(\"half done\")\n}\n")
	writeFile(t, b.ws, "src/new.go", "package main\n")
	require.NoError(t, os.Remove(filepath.Join(b.ws, "docs/guide.txt")))
	writeFile(t, b.ws, "debug.log", "ignored\n")
	before := status(t, b.ws)
	ref := gitops.PartialRef("obj-1", "wo-obj-1-1")

	p, err := b.g.KeepPartial(ctx, b.ws, ref, bot, "partial work of wo-obj-1-1", checkAll)
	require.NoError(t, err)
	require.NotNil(t, p)
	require.Equal(t, []string{"checked"}, p.Files, "what the check said")
	require.Contains(t, p.Patch, "src/new.go")
	require.NotContains(t, p.Patch, "debug.log", "ignored files are not work")
	require.Equal(t, before, status(t, b.ws), "the worktree and index are as they were")
	require.Equal(t, b.base+"\n", git(t, b.ws, "rev-parse", "HEAD"), "HEAD and the branch have not moved")
	require.Equal(t, p.CommitSHA+"\n", git(t, b.ws, "rev-parse", ref))
	require.Equal(t, b.base+"\n", git(t, b.ws, "rev-parse", ref+"^"))

	next := filepath.Join(t.TempDir(), "next")
	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, next, testBranch, b.base))
	patch, err := b.g.ResumePartial(ctx, next, b.ws, ref, p.CommitSHA)
	require.NoError(t, err)
	require.Equal(t, p.Patch, patch)
	require.Equal(t, "package main\n", readFile(t, next, "src/new.go"))
	require.Contains(t, readFile(t, next, "src/main.go"), "half done")
	requireNotExist(t, filepath.Join(next, "docs/guide.txt"))
	require.Equal(t, b.base+"\n", git(t, next, "rev-parse", "HEAD"), "resumed as changes, not as a commit")
	require.Empty(t, git(t, next, "diff", "--cached", "--name-only"), "nothing staged")
}

func TestKeepPartial_NothingToKeepAndARefusedCheckWriteNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	ref := gitops.PartialRef("obj-1", "wo-obj-1-1")
	p, err := b.g.KeepPartial(ctx, b.ws, ref, bot, "partial", checkAll)
	require.NoError(t, err)
	require.Nil(t, p, "a clean worktree keeps nothing")

	writeFile(t, b.ws, "src/new.go", "package main\n")
	refused := errors.New("refused: a path outside the repository")
	_, err = b.g.KeepPartial(ctx, b.ws, ref, bot, "partial", func(string) ([]string, error) { return nil, refused })
	require.ErrorIs(t, err, refused)
	_, err = gitErr(b.ws, "rev-parse", "--verify", "--quiet", ref)
	require.Error(t, err, "no ref was written")

	for _, bad := range []string{"refs/heads/main", "refs/azolla/obj-1/partial/../x", "refs/azolla/obj/partial/", "refs/azolla/-x/partial/wo"} {
		_, err := b.g.KeepPartial(ctx, b.ws, bad, bot, "partial", checkAll)
		require.ErrorContains(t, err, "not a partial work ref", bad)
		_, err = b.g.ResumePartial(ctx, b.ws, b.ws, bad, b.base)
		require.ErrorContains(t, err, "not a partial work ref", bad)
	}
}

func TestResumePartial_RefusesWorkMadeOnAnotherCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	writeFile(t, b.ws, "src/new.go", "package main\n")
	ref := gitops.PartialRef("obj-1", "wo-obj-1-1")
	p, err := b.g.KeepPartial(ctx, b.ws, ref, bot, "partial", checkAll)
	require.NoError(t, err)

	writeFile(t, b.upstream, "README.md", "# moved on\n")
	moved := commitAll(t, b.upstream, "moved")
	_, err = b.mirrors.Sync(ctx, b.upstream)
	require.NoError(t, err)
	next := filepath.Join(t.TempDir(), "next")
	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, next, testBranch, moved))
	_, err = b.g.ResumePartial(ctx, next, b.ws, ref, p.CommitSHA)
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "was made on"), err.Error())
	require.Empty(t, status(t, next), "nothing was put in the worktree")
}
