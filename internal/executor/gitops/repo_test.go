package gitops_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
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

func TestReadFile_ReadsTheCommitNotTheWorktree(t *testing.T) {
	t.Parallel()
	g, dir := gitops.Git{}, t.TempDir()
	ctx := context.Background()
	require.NoError(t, g.Init(ctx, dir, "main"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".azolla"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".azolla", "setup.sh"), []byte("echo base\n"), 0o644))
	sha, err := g.Commit(ctx, dir, gitops.Author{Name: "t", Email: "t@example.com"}, "base")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".azolla", "setup.sh"), []byte("echo changed\n"), 0o644))

	root, err := g.ListRoot(ctx, dir, sha)
	require.NoError(t, err)
	require.Equal(t, []string{".azolla"}, root)
	got, err := g.ReadFile(ctx, dir, sha, ".azolla/setup.sh", 1<<20)
	require.NoError(t, err)
	require.Equal(t, "echo base\n", string(got))
	_, err = g.ReadFile(ctx, dir, sha, "missing.txt", 1<<20)
	require.ErrorIs(t, err, gitops.ErrFileNotFound)
	_, err = g.ReadFile(ctx, dir, sha, ".azolla/setup.sh", 3)
	require.ErrorContains(t, err, "more than")
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../b", "", "a:b"} {
		_, err := g.ReadFile(ctx, dir, sha, bad, 1<<20)
		require.Error(t, err, bad)
	}
}

func TestExport_WritesTheCommitNotTheWorktree(t *testing.T) {
	t.Parallel()
	g, dir := gitops.Git{}, t.TempDir()
	ctx := context.Background()
	require.NoError(t, g.Init(ctx, dir, "main"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "run.sh"), []byte("echo hi\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644))
	require.NoError(t, os.Symlink("go.mod", filepath.Join(dir, "link")))
	sha, err := g.Commit(ctx, dir, gitops.Author{Name: "t", Email: "t@example.com"}, "base")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module changed\n"), 0o644))

	dest := t.TempDir()
	require.NoError(t, g.Export(ctx, dir, sha, dest))
	got, err := os.ReadFile(filepath.Join(dest, "go.mod"))
	require.NoError(t, err)
	require.Equal(t, "module x\n", string(got))
	fi, err := os.Stat(filepath.Join(dest, "sub", "run.sh"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&0o100, "modes are kept")
	target, err := os.Readlink(filepath.Join(dest, "link"))
	require.NoError(t, err)
	require.Equal(t, "go.mod", target)
	_, err = os.Stat(filepath.Join(dest, ".git"))
	require.True(t, os.IsNotExist(err))
}
