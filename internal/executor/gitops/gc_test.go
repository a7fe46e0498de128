package gitops_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

// looseObjects is the "count" line of git count-objects: objects not in a
// pack.
func looseObjects(t *testing.T, dir string) string {
	t.Helper()
	for line := range strings.Lines(git(t, dir, "count-objects", "-v")) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "count: "); ok {
			return v
		}
	}
	t.Fatalf("count-objects in %s printed no count", dir)
	return ""
}

func TestMirrorsGc_PacksTheLooseObjectsOfEveryMirror(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	// A small fetch leaves its objects loose (below fetch.unpackLimit).
	writeFile(t, b.upstream, "NEWS", "something happened\n")
	next := commitAll(t, b.upstream, "news")
	_, err := b.mirrors.Sync(ctx, b.upstream)
	require.NoError(t, err)
	require.NotEqual(t, "0", looseObjects(t, b.mirror), "the test needs loose objects to pack")

	dirs, err := b.mirrors.List()
	require.NoError(t, err)
	require.Equal(t, []string{b.mirror}, dirs, "the lock file is not a mirror")
	require.NoError(t, b.mirrors.Gc(ctx, b.mirror))

	require.Equal(t, "0", looseObjects(t, b.mirror))
	sha, err := b.g.ResolveBranch(ctx, b.mirror, "main")
	require.NoError(t, err)
	require.Equal(t, next, sha, "gc keeps every branch")
}

func TestMirrorsList_SkipsWhatIsNotAMirror(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	m := &gitops.Mirrors{Root: root}
	mirror := filepath.Join(root, gitops.MirrorName("/srv/app"))
	require.NoError(t, os.Mkdir(mirror, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(root, "."+gitops.MirrorName("/srv/b")+".tmp-123"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(root, "not-a-mirror.git"), 0o755))
	require.NoError(t, os.WriteFile(mirror+".lock", nil, 0o644))
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, gitops.MirrorName("/srv/c"))))

	dirs, err := m.List()
	require.NoError(t, err)
	require.Equal(t, []string{mirror}, dirs)

	none, err := (&gitops.Mirrors{Root: filepath.Join(root, "missing")}).List()
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestMirrorsGc_RefusesADirectoryThatIsNotOneOfItsMirrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	other := &gitops.Mirrors{Root: t.TempDir()}
	require.ErrorContains(t, other.Gc(ctx, b.mirror), "is not a mirror directory")
	require.ErrorContains(t, b.mirrors.Gc(ctx, b.ws), "is not a mirror directory")

	link := filepath.Join(b.mirrors.Root, gitops.MirrorName("/srv/linked"))
	require.NoError(t, os.Symlink(b.mirror, link))
	require.ErrorContains(t, b.mirrors.Gc(ctx, link), "is not a directory")
}
