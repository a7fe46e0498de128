package gitops_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/gitops"
)

func TestResolveBranch_FindsBranchesOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	sha, err := b.g.ResolveBranch(ctx, b.mirror, "main")
	require.NoError(t, err)
	require.Equal(t, b.base, sha)
	require.Len(t, sha, 40)

	_, err = b.g.ResolveBranch(ctx, b.mirror, "no/such-branch")
	require.ErrorIs(t, err, gitops.ErrBranchNotFound)
	require.ErrorContains(t, err, `"no/such-branch"`)

	// A tag is not a branch.
	git(t, b.upstream, "tag", "v1")
	_, err = b.mirrors.Sync(ctx, b.upstream)
	require.NoError(t, err)
	_, err = b.g.ResolveBranch(ctx, b.mirror, "v1")
	require.ErrorIs(t, err, gitops.ErrBranchNotFound)
}

func TestResolveBranch_RefusesHostileNames(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pwned := filepath.Join(t.TempDir(), "pwned")
	for _, name := range []string{
		"-x", "a..b", "x.lock", "a b", "../x", "--output=" + pwned, "main^{tree}", "main~1", "HEAD", "@{-1}",
	} {
		_, err := b.g.ResolveBranch(context.Background(), b.mirror, name)
		require.ErrorIs(t, err, gitops.ErrInvalidBranch, "%q", name)
	}
	requireNotExist(t, pwned)
}

func TestResolveBranch_NotARepository(t *testing.T) {
	t.Parallel()
	// A plain directory inside a repository: git must not find the parent.
	b := setup(t)
	sub := filepath.Join(b.ws, "src")
	_, err := b.g.ResolveBranch(context.Background(), sub, testBranch)
	var ge *gitops.Error
	require.ErrorAs(t, err, &ge)
	require.Equal(t, 128, ge.ExitCode)
	require.Contains(t, ge.Stderr, "not a git repository")
	require.ErrorContains(t, err, "git rev-parse: exit status 128: fatal: not a git repository")
}

func TestListFiles_FirstMaxInGitOrderAndTotal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	all := []string{".gitignore", "README.md", "docs/guide.txt", "src/main.go"}

	files, total, err := b.g.ListFiles(ctx, b.mirror, b.base, 2)
	require.NoError(t, err)
	require.Equal(t, all[:2], files)
	require.Equal(t, 4, total)

	files, total, err = b.g.ListFiles(ctx, b.mirror, "main", -1)
	require.NoError(t, err)
	require.Equal(t, all, files)
	require.Equal(t, 4, total)

	files, total, err = b.g.ListFiles(ctx, b.ws, "HEAD", 0)
	require.NoError(t, err)
	require.Empty(t, files)
	require.Equal(t, 4, total)

	// Names are returned as stored, not quoted.
	writeFile(t, b.ws, "sp\u00e9cial name.txt", "x\n")
	head := commitAll(t, b.ws, "odd name")
	files, _, err = b.g.ListFiles(ctx, b.ws, head, -1)
	require.NoError(t, err)
	require.Contains(t, files, "sp\u00e9cial name.txt")

	pwned := filepath.Join(t.TempDir(), "pwned")
	_, _, err = b.g.ListFiles(ctx, b.mirror, "--output="+pwned, -1)
	require.Error(t, err)
	requireNotExist(t, pwned)
}

func TestHeadOfAndCountCommits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	head, err := b.g.HeadOf(ctx, b.ws)
	require.NoError(t, err)
	require.Equal(t, b.base, head)

	writeFile(t, b.ws, "a.txt", "a\n")
	commitAll(t, b.ws, "a")
	writeFile(t, b.ws, "b.txt", "b\n")
	second := commitAll(t, b.ws, "b")

	n, err := b.g.CountCommits(ctx, b.ws, b.base, second)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = b.g.CountCommits(ctx, b.ws, second, b.base)
	require.NoError(t, err)
	require.Equal(t, 0, n)

	_, err = b.g.HeadOf(ctx, t.TempDir())
	require.Error(t, err)
}
