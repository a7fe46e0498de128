package gitops_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/gitops"
)

func TestPush_ForcePushesAfterTheBranchWasReset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, "", "init", "-q", "--bare", remote)

	require.NoError(t, b.g.Apply(ctx, b.ws, modifyReadme))
	first, err := b.g.Commit(ctx, b.ws, bot, "first attempt")
	require.NoError(t, err)
	require.NoError(t, b.g.Push(ctx, b.ws, remote, testBranch))
	require.Equal(t, first+"\n", git(t, remote, "rev-parse", "refs/heads/"+testBranch))

	// A retry starts from the base again; its commit does not descend from
	// the first one, so only a forced push can replace it.
	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, b.ws, testBranch, b.base))
	writeFile(t, b.ws, "second.txt", "second attempt\n")
	second, err := b.g.Commit(ctx, b.ws, bot, "second attempt")
	require.NoError(t, err)
	require.NotEqual(t, first, second)
	require.NoError(t, b.g.Push(ctx, b.ws, remote, testBranch))
	require.Equal(t, second+"\n", git(t, remote, "rev-parse", "refs/heads/"+testBranch))
	require.Equal(t, "refs/heads/"+testBranch+"\n", git(t, remote, "for-each-ref", "--format=%(refname)"),
		"only the branch is pushed")
}

func TestPush_RefusesHostileInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	pwned := filepath.Join(t.TempDir(), "pwned")

	for _, remote := range []string{"--receive-pack=touch " + pwned, "--exec=touch " + pwned, "origin", "ext::sh -c touch% " + pwned} {
		require.ErrorIs(t, b.g.Push(ctx, b.ws, remote, testBranch), gitops.ErrInvalidRepository, remote)
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, "", "init", "-q", "--bare", remote)
	for _, branch := range []string{"--all", "main:refs/heads/other", "+main", "a..b"} {
		require.ErrorIs(t, b.g.Push(ctx, b.ws, remote, branch), gitops.ErrInvalidBranch, branch)
	}
	requireNotExist(t, pwned)
	require.Equal(t, "", git(t, remote, "for-each-ref"))
}
