package gitops_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

func TestSync_ClonesThenFetchesNewCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	upstream, base := newUpstream(t)
	m := &gitops.Mirrors{Root: filepath.Join(t.TempDir(), "mirrors")}
	var g gitops.Git

	dir, err := m.Sync(ctx, upstream)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(m.Root, gitops.MirrorName(upstream)), dir)
	require.Equal(t, "true\n", git(t, dir, "rev-parse", "--is-bare-repository"))
	sha, err := g.ResolveBranch(ctx, dir, "main")
	require.NoError(t, err)
	require.Equal(t, base, sha)
	def, err := g.DefaultBranch(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, "main", def)

	writeFile(t, upstream, "README.md", "# demo\n\nChanged upstream.\n")
	next := commitAll(t, upstream, "second")
	git(t, upstream, "branch", "topic")

	again, err := m.Sync(ctx, upstream)
	require.NoError(t, err)
	require.Equal(t, dir, again)
	sha, err = g.ResolveBranch(ctx, dir, "main")
	require.NoError(t, err)
	require.Equal(t, next, sha)
	_, err = g.ResolveBranch(ctx, dir, "topic")
	require.NoError(t, err)

	// --prune: a branch deleted upstream goes away.
	git(t, upstream, "branch", "-D", "topic")
	_, err = m.Sync(ctx, upstream)
	require.NoError(t, err)
	_, err = g.ResolveBranch(ctx, dir, "topic")
	require.ErrorIs(t, err, gitops.ErrBranchNotFound)

	entries, err := os.ReadDir(m.Root)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{gitops.MirrorName(upstream), gitops.MirrorName(upstream) + ".lock"}, names,
		"no temporary clone is left behind")
}

func TestSync_ConcurrentSyncsOfOneMirror(t *testing.T) {
	t.Parallel()
	upstream, base := newUpstream(t)
	root := filepath.Join(t.TempDir(), "mirrors")
	// Two Mirrors values on one root stand in for two processes: they share
	// only the flock.
	shared := []*gitops.Mirrors{{Root: root}, {Root: root}}

	var wg sync.WaitGroup
	errs := make([]error, 8)
	dirs := make([]string, 8)
	for i := range 8 {
		wg.Go(func() {
			dirs[i], errs[i] = shared[i%2].Sync(context.Background(), upstream)
		})
	}
	wg.Wait()
	for i := range 8 {
		require.NoError(t, errs[i])
		require.Equal(t, dirs[0], dirs[i])
	}
	sha, err := gitops.Git{}.ResolveBranch(context.Background(), dirs[0], "main")
	require.NoError(t, err)
	require.Equal(t, base, sha)
}

func TestSync_RefusesHostileRepositoryBeforeRunningGit(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	pwned := filepath.Join(tmp, "pwned")
	m := &gitops.Mirrors{Root: filepath.Join(tmp, "mirrors")}
	for _, repo := range []string{
		"--upload-pack=touch " + pwned,
		"ext::sh -c touch% " + pwned,
		"relative/dir",
	} {
		_, err := m.Sync(context.Background(), repo)
		require.ErrorIs(t, err, gitops.ErrInvalidRepository)
	}
	requireNotExist(t, pwned)
	requireNotExist(t, m.Root)
}

func TestSync_FailedCloneLeavesNoMirror(t *testing.T) {
	t.Parallel()
	m := &gitops.Mirrors{Root: filepath.Join(t.TempDir(), "mirrors")}
	missing := filepath.Join(t.TempDir(), "no-such-repo")

	_, err := m.Sync(context.Background(), missing)
	var ge *gitops.Error
	require.ErrorAs(t, err, &ge)
	require.Equal(t, "clone", ge.Args[0])
	require.Equal(t, 128, ge.ExitCode)
	require.ErrorContains(t, err, "git clone")

	entries, err := os.ReadDir(m.Root)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the lock file")
	require.Equal(t, gitops.MirrorName(missing)+".lock", entries[0].Name())
}

func TestSync_CancelledContext(t *testing.T) {
	t.Parallel()
	upstream, _ := newUpstream(t)
	m := &gitops.Mirrors{Root: filepath.Join(t.TempDir(), "mirrors")}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := m.Sync(ctx, upstream)
	require.True(t, errors.Is(err, context.Canceled), "got %v", err)
	requireNotExist(t, filepath.Join(m.Root, gitops.MirrorName(upstream)))
}
