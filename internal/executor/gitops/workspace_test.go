package gitops_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

func TestPrepareWorkspace_FreshClone(t *testing.T) {
	t.Parallel()
	b := setup(t)

	require.Equal(t, "refs/heads/"+testBranch+"\n", git(t, b.ws, "symbolic-ref", "HEAD"))
	require.Equal(t, b.base+"\n", git(t, b.ws, "rev-parse", "HEAD"))
	require.Equal(t, "", status(t, b.ws))
	require.Equal(t, b.mirror+"\n", git(t, b.ws, "config", "--get", "remote.origin.url"))
	require.Equal(t, "# demo\n\nA small project.\n", readFile(t, b.ws, "README.md"))
	// The only thing next to the workspace is the workspace: the temporary
	// clone was renamed.
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(b.ws), ".ws.tmp-*"))
	require.NoError(t, err)
	require.Empty(t, matches)
}

func TestPrepareWorkspace_RerunResetsBranchAndRemovesStrayFiles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	// A first run that got as far as committing, then left debris.
	writeFile(t, b.ws, "README.md", "changed\n")
	commitAll(t, b.ws, "first attempt")
	writeFile(t, b.ws, "src/main.go", "broken\n")
	writeFile(t, b.ws, "stray.txt", "untracked\n")
	writeFile(t, b.ws, "build/out.log", "ignored\n")
	writeFile(t, b.ws, "staged.txt", "staged, never committed\n")
	git(t, b.ws, "add", "src/main.go", "staged.txt")

	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, b.ws, testBranch, b.base))

	require.Equal(t, b.base+"\n", git(t, b.ws, "rev-parse", "refs/heads/"+testBranch))
	require.Equal(t, "refs/heads/"+testBranch+"\n", git(t, b.ws, "symbolic-ref", "HEAD"))
	require.Equal(t, "", status(t, b.ws))
	require.Equal(t, "# demo\n\nA small project.\n", readFile(t, b.ws, "README.md"))
	requireNotExist(t, filepath.Join(b.ws, "stray.txt"))
	requireNotExist(t, filepath.Join(b.ws, "staged.txt"))
	requireNotExist(t, filepath.Join(b.ws, "build"))
}

// TestPrepareWorkspace_RerunEndsAConflictedMerge: a run that died in a
// conflicted merge leaves unmerged index entries and MERGE_HEAD; the
// checkout alone (no "reset --hard") must get past both.
func TestPrepareWorkspace_RerunEndsAConflictedMerge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	writeFile(t, b.ws, "README.md", "ours\n")
	commitAll(t, b.ws, "ours")
	git(t, b.ws, "checkout", "-q", "-b", "theirs", b.base)
	writeFile(t, b.ws, "README.md", "theirs\n")
	commitAll(t, b.ws, "theirs")
	git(t, b.ws, "checkout", "-q", testBranch)
	_, err := gitErr(b.ws, "merge", "--no-edit", "theirs")
	require.Error(t, err, "the merge conflicts")
	require.Contains(t, status(t, b.ws), "UU README.md")
	require.FileExists(t, filepath.Join(b.ws, ".git", "MERGE_HEAD"))

	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, b.ws, testBranch, b.base))

	require.Equal(t, b.base+"\n", git(t, b.ws, "rev-parse", "HEAD"))
	require.Equal(t, "refs/heads/"+testBranch+"\n", git(t, b.ws, "symbolic-ref", "HEAD"))
	require.Equal(t, "", status(t, b.ws))
	require.Equal(t, "# demo\n\nA small project.\n", readFile(t, b.ws, "README.md"))
	requireNotExist(t, filepath.Join(b.ws, ".git", "MERGE_HEAD"))
}

// TestPrepareWorkspace_RefusesAnObjectThatIsNotACommit: checkout would peel
// an annotated tag to its commit, putting the branch somewhere other than
// the id asked for; such ids are refused before anything is checked out.
func TestPrepareWorkspace_RefusesAnObjectThatIsNotACommit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	git(t, b.upstream, "tag", "-a", "-m", "release", "v1")
	writeFile(t, b.upstream, "README.md", "next\n")
	next := commitAll(t, b.upstream, "next")
	_, err := b.mirrors.Sync(ctx, b.upstream)
	require.NoError(t, err)
	tag := strings.TrimSpace(git(t, b.mirror, "rev-parse", "refs/tags/v1"))
	require.NotEqual(t, b.base, tag)
	treeID := strings.TrimSpace(git(t, b.mirror, "rev-parse", next+"^{tree}"))

	// The workspace is on next; a refused id leaves it there.
	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, b.ws, testBranch, next))
	for name, id := range map[string]string{"annotated tag": tag, "tree": treeID} {
		err := b.g.PrepareWorkspace(ctx, b.mirror, b.ws, testBranch, id)
		require.ErrorIs(t, err, gitops.ErrCommitNotFound, name)
		require.Equal(t, next+"\n", git(t, b.ws, "rev-parse", "HEAD"), name)

		fresh := filepath.Join(t.TempDir(), "ws")
		err = b.g.PrepareWorkspace(ctx, b.mirror, fresh, testBranch, id)
		require.ErrorIs(t, err, gitops.ErrCommitNotFound, name)
		requireNotExist(t, fresh)
	}
}

func TestPrepareWorkspace_FetchesACommitNewerThanTheClone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	writeFile(t, b.upstream, "docs/guide.txt", "rewritten\n")
	next := commitAll(t, b.upstream, "upstream moves on")
	_, err := b.mirrors.Sync(ctx, b.upstream)
	require.NoError(t, err)

	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, b.ws, testBranch, next))
	require.Equal(t, next+"\n", git(t, b.ws, "rev-parse", "HEAD"))
	require.Equal(t, "rewritten\n", readFile(t, b.ws, "docs/guide.txt"))
}

func TestPrepareWorkspace_ReusesAnEmptyDirectory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dir := t.TempDir()

	require.NoError(t, b.g.PrepareWorkspace(context.Background(), b.mirror, dir, "other", b.base))
	require.Equal(t, b.base+"\n", git(t, dir, "rev-parse", "HEAD"))
}

func TestPrepareWorkspace_RefusesWhatIsNotItsWorkspace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	userDir := t.TempDir()
	writeFile(t, userDir, "notes.txt", "precious\n")

	foreign, _ := newUpstream(t) // a git worktree, but not a clone of the mirror
	writeFile(t, foreign, "wip.txt", "uncommitted\n")

	for name, dir := range map[string]string{
		"plain directory":   userDir,
		"other repository":  foreign,
		"inside a worktree": filepath.Join(b.ws, "src"),
	} {
		err := b.g.PrepareWorkspace(ctx, b.mirror, dir, testBranch, b.base)
		require.ErrorIs(t, err, gitops.ErrNotWorkspace, name)
	}
	require.Equal(t, "precious\n", readFile(t, userDir, "notes.txt"))
	require.Equal(t, "uncommitted\n", readFile(t, foreign, "wip.txt"))
	require.Equal(t, "refs/heads/main\n", git(t, foreign, "symbolic-ref", "HEAD"))
	require.Equal(t, "", status(t, b.ws))

	file := filepath.Join(t.TempDir(), "file")
	writeFile(t, filepath.Dir(file), "file", "x")
	require.ErrorIs(t, b.g.PrepareWorkspace(ctx, b.mirror, file, testBranch, b.base), gitops.ErrNotWorkspace)
}

func TestPrepareWorkspace_ValidatesInputs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ws")

	for _, sha := range []string{"", "abc123", strings.ToUpper(b.base), b.base + "0", "--output=x" + strings.Repeat("0", 30), "main"} {
		require.ErrorIs(t, b.g.PrepareWorkspace(ctx, b.mirror, dir, testBranch, sha), gitops.ErrInvalidCommit, sha)
	}
	require.ErrorIs(t, b.g.PrepareWorkspace(ctx, b.mirror, dir, "-B", b.base), gitops.ErrInvalidBranch)
	require.ErrorIs(t, b.g.PrepareWorkspace(ctx, "--upload-pack=x", dir, testBranch, b.base), gitops.ErrInvalidRepository)

	unknown := strings.Repeat("ab", 20)
	require.ErrorIs(t, b.g.PrepareWorkspace(ctx, b.mirror, dir, testBranch, unknown), gitops.ErrCommitNotFound)
	requireNotExist(t, dir)
}
