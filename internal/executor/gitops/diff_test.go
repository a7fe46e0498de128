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

// changeEverything makes, in dir, one change of each kind a diff must carry.
func changeEverything(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, dir, "README.md", "# demo\n\nA changed project.\n")
	require.NoError(t, os.Rename(filepath.Join(dir, "docs", "guide.txt"), filepath.Join(dir, "docs", "manual.txt")))
	require.NoError(t, os.Remove(filepath.Join(dir, "src", "main.go")))
	writeFile(t, dir, "sp\u00e9cial name.txt", "non-ASCII and a space\n")
	writeFile(t, dir, "logo.png", "\x89PNG\x00\x01\x02\x03binary")
	writeFile(t, dir, "run.sh", "#!/bin/sh\necho hi\n")
	require.NoError(t, os.Chmod(filepath.Join(dir, "run.sh"), 0o755))
	writeFile(t, dir, "debug.log", "ignored\n")
}

func TestDiff_EqualsGitRunDirectlyWithDiffArgs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	changeEverything(t, b.ws)
	to, err := b.g.Commit(ctx, b.ws, bot, "everything")
	require.NoError(t, err)

	// Configuration that would change a plain "git diff" in every way.
	for _, kv := range [][2]string{
		{"diff.noprefix", "true"}, {"diff.mnemonicPrefix", "true"}, {"diff.external", "false"},
		{"color.ui", "always"}, {"color.diff", "always"}, {"diff.renames", "copies"},
		{"diff.context", "10"}, {"diff.algorithm", "patience"}, {"core.quotePath", "false"},
		{"diff.suppressBlankEmpty", "true"}, {"diff.relative", "true"}, {"core.abbrev", "7"},
	} {
		git(t, b.ws, "config", kv[0], kv[1])
	}

	diff, err := b.g.Diff(ctx, b.ws, b.base, to)
	require.NoError(t, err)
	direct := git(t, b.ws, gitops.DiffArgs(b.base, to)...)
	require.Equal(t, direct, diff)

	require.NotContains(t, diff, "\x1b[", "no color")
	require.Contains(t, diff, "diff --git a/README.md b/README.md\n")
	require.Contains(t, diff, "rename from docs/guide.txt\nrename to docs/manual.txt\n")
	require.Contains(t, diff, `diff --git "a/sp\303\251cial name.txt" "b/sp\303\251cial name.txt"`)
	require.Contains(t, diff, "GIT binary patch\n")
	require.Contains(t, diff, "new file mode 100755\n")
	require.Contains(t, diff, "@@ -1,3 +1,3 @@\n", "three lines of context")

	empty, err := b.g.Diff(ctx, b.ws, to, to)
	require.NoError(t, err)
	require.Equal(t, "", empty)

	_, err = b.g.Diff(ctx, b.ws, "--output="+filepath.Join(t.TempDir(), "x"), to)
	require.Error(t, err)
}

func TestDiff_AppliesToAFreshWorkspaceOfItsBase(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	changeEverything(t, b.ws)
	to, err := b.g.Commit(ctx, b.ws, bot, "everything")
	require.NoError(t, err)
	diff, err := b.g.Diff(ctx, b.ws, b.base, to)
	require.NoError(t, err)

	fresh := filepath.Join(t.TempDir(), "fresh")
	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, fresh, testBranch, b.base))
	_, err = gitops.CheckPatch(fresh, diff, gitops.PatchPolicy{AllowBinary: true})
	require.NoError(t, err)
	require.NoError(t, b.g.Apply(ctx, fresh, diff))
	_, err = b.g.Commit(ctx, fresh, bot, "replayed")
	require.NoError(t, err)
	require.Equal(t, tree(t, b.ws), tree(t, fresh))
}

func TestWorktreeDiff_RoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	git(t, b.ws, "config", "core.quotePath", "false")
	changeEverything(t, b.ws)
	staged := "README.md"
	git(t, b.ws, "add", staged)
	statusBefore := status(t, b.ws)

	diff, err := b.g.WorktreeDiff(ctx, b.ws)
	require.NoError(t, err)
	require.Contains(t, diff, "b/run.sh\nnew file mode 100755\n", "untracked files are included")
	require.NotContains(t, diff, "debug.log", "ignored files are not")
	require.Equal(t, statusBefore, status(t, b.ws), "the index is left as it was")

	fresh := filepath.Join(t.TempDir(), "fresh")
	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, fresh, testBranch, b.base))
	_, err = gitops.CheckPatch(fresh, diff, gitops.PatchPolicy{AllowBinary: true})
	require.NoError(t, err)
	require.NoError(t, b.g.Apply(ctx, fresh, diff))

	_, err = b.g.Commit(ctx, b.ws, bot, "original")
	require.NoError(t, err)
	_, err = b.g.Commit(ctx, fresh, bot, "replayed")
	require.NoError(t, err)
	require.Equal(t, tree(t, b.ws), tree(t, fresh))
	require.Equal(t, "\x89PNG\x00\x01\x02\x03binary", readFile(t, fresh, "logo.png"))
}

func TestWorktreeDiff_EmptyWhenClean(t *testing.T) {
	t.Parallel()
	b := setup(t)
	writeFile(t, b.ws, "debug.log", "ignored\n")
	diff, err := b.g.WorktreeDiff(context.Background(), b.ws)
	require.NoError(t, err)
	require.Equal(t, "", diff)
}

func TestDiffArgs_IsTheDocumentedCommand(t *testing.T) {
	t.Parallel()
	want := "-c core.quotePath=true -c core.attributesFile=/dev/null " +
		"-c core.bigFileThreshold=512m -c diff.noprefix=false " +
		"-c diff.mnemonicPrefix=false -c diff.relative=false " +
		"-c diff.suppressBlankEmpty=false " +
		"diff --no-color --no-ext-diff --no-textconv --binary --full-index " +
		"--src-prefix=a/ --dst-prefix=b/ --no-relative --unified=3 " +
		"--inter-hunk-context=0 --diff-algorithm=myers --indent-heuristic " +
		"--find-renames=50% -l1000 -O/dev/null --submodule=short " +
		"--ignore-submodules=none --end-of-options A B --"
	require.Equal(t, strings.Fields(want), gitops.DiffArgs("A", "B"))
}
