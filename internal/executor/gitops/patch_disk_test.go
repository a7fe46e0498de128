package gitops_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

// TestCheckPatch_RefusedPatchesChangeNothing runs hostile patches against a
// real workspace that has a committed symlink pointing out of it. CheckPatch
// must refuse each without writing anything, and where git apply has a
// check of its own, git must refuse the patch too (defence in depth).
func TestCheckPatch_RefusedPatchesChangeNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	outside := filepath.Join(filepath.Dir(b.ws), "outside")
	require.NoError(t, os.Mkdir(outside, 0o755))
	require.NoError(t, os.Symlink("../outside", filepath.Join(b.ws, "link")))
	require.NoError(t, os.Symlink("README.md", filepath.Join(b.ws, "readme-link")))
	commitAll(t, b.ws, "add symlinks")
	head := tree(t, b.ws)

	create := func(path string) string {
		return "diff --git a/" + path + " b/" + path + "\nnew file mode 100644\nindex 0000000..1111111\n" +
			"--- /dev/null\n+++ b/" + path + "\n@@ -0,0 +1 @@\n+owned\n"
	}
	cases := []struct {
		name       string
		patch      string
		reason     string
		gitRefuses bool
	}{
		{name: "write through a symlinked directory", patch: create("link/pwned"),
			reason: `"link" is a symbolic link`, gitRefuses: true},
		{name: "write a symlink's target as a file", patch: "diff --git a/readme-link b/readme-link\n" +
			"index 1111111..2222222 100644\n--- a/readme-link\n+++ b/readme-link\n@@ -1 +1 @@\n" +
			"-README.md\n\\ No newline at end of file\n+owned\n", reason: `"readme-link" is a symbolic link`},
		{name: "climb out", patch: create("../outside/pwned"), reason: "'..'", gitRefuses: true},
		{name: "climb out inside", patch: create("src/../../outside/pwned"), reason: "'..'", gitRefuses: true},
		{name: "install a hook", patch: create(".git/hooks/pre-commit"), reason: ".git", gitRefuses: true},
		{name: "nested .git", patch: create("sub/.git/config"), reason: ".git", gitRefuses: true},
		{name: "create a symlink", patch: "diff --git a/esc b/esc\nnew file mode 120000\nindex 0000000..1111111\n" +
			"--- /dev/null\n+++ b/esc\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n", reason: "symbolic links"},
		{name: "binary", patch: binaryLogo, reason: "binary"},
	}
	for _, tc := range cases {
		_, err := gitops.CheckPatch(b.ws, tc.patch, gitops.PatchPolicy{})
		require.ErrorIs(t, err, gitops.ErrPatchRefused, tc.name)
		require.ErrorContains(t, err, tc.reason, tc.name)
		if tc.gitRefuses {
			var ae *gitops.ApplyError
			require.ErrorAs(t, b.g.Apply(ctx, b.ws, tc.patch), &ae, tc.name)
		}
		require.Equal(t, "", status(t, b.ws), tc.name)
		require.Equal(t, head, tree(t, b.ws), tc.name)
		entries, err := os.ReadDir(outside)
		require.NoError(t, err)
		require.Empty(t, entries, tc.name)
		requireNotExist(t, filepath.Join(b.ws, ".git", "hooks", "pre-commit"))
	}

	// Plain paths in the same worktree pass, existing or not.
	paths, err := gitops.CheckPatch(b.ws, modifyReadme+create("src/new/deep.go"), gitops.PatchPolicy{})
	require.NoError(t, err)
	require.Equal(t, []string{"README.md", "src/new/deep.go"}, paths)
}

func TestApply_AppliesToWorktreeAndIndex(t *testing.T) {
	t.Parallel()
	b := setup(t)
	patch := modifyReadme + `diff --git a/src/util.go b/src/util.go
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/src/util.go
@@ -0,0 +1 @@
+package main
`
	_, err := gitops.CheckPatch(b.ws, patch, gitops.PatchPolicy{})
	require.NoError(t, err)
	require.NoError(t, b.g.Apply(context.Background(), b.ws, patch))

	require.Equal(t, "# demo\n\nA smaller project.\n", readFile(t, b.ws, "README.md"))
	require.Equal(t, "package main\n", readFile(t, b.ws, "src/util.go"))
	require.Equal(t, "M  README.md\nA  src/util.go\n", status(t, b.ws), "changes are staged")
}

func TestApply_MismatchedContextIsAnApplyErrorAndChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The first file applies, the second does not: nothing may be applied.
	patch := modifyReadme + `diff --git a/docs/guide.txt b/docs/guide.txt
index 1111111..2222222 100644
--- a/docs/guide.txt
+++ b/docs/guide.txt
@@ -1,3 +1,3 @@
 one
-TWO
+2
 three
`
	_, err := gitops.CheckPatch(b.ws, patch, gitops.PatchPolicy{})
	require.NoError(t, err, "well-formed; only git can tell it does not fit")
	index := readFile(t, b.ws, ".git/index")

	err = b.g.Apply(context.Background(), b.ws, patch)
	require.ErrorIs(t, err, gitops.ErrApplyFailed)
	var ae *gitops.ApplyError
	require.True(t, errors.As(err, &ae))
	require.Contains(t, ae.Output, "docs/guide.txt")
	require.Contains(t, ae.Output, "patch does not apply")
	// Apply is one "git apply --index": the index must come out of it
	// byte for byte (read before status refreshes it) and unlocked.
	require.Equal(t, index, readFile(t, b.ws, ".git/index"), "the index is not rewritten")
	requireNotExist(t, filepath.Join(b.ws, ".git", "index.lock"))
	require.Equal(t, "", status(t, b.ws))
	require.Equal(t, "# demo\n\nA small project.\n", readFile(t, b.ws, "README.md"))
}

// TestApply_UnreadablePatchIsAnApplyError: git apply exits 128 for a patch
// it cannot read, as it does outside a repository; only the latter is not
// an ApplyError.
func TestApply_UnreadablePatchIsAnApplyError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, patch := range map[string]string{
		"no patch":     "just some words\n",
		"corrupt hunk": "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n garbage\n",
		"missing file": "diff --git a/nope.txt b/nope.txt\n--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n",
	} {
		err := b.g.Apply(context.Background(), b.ws, patch)
		var ae *gitops.ApplyError
		require.ErrorAs(t, err, &ae, name)
		require.NotEmpty(t, ae.Output, name)
		require.Equal(t, "", status(t, b.ws), name)
	}
}

func TestApply_NotAWorktree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "README.md", "# demo\n\nA small project.\n")
	err := gitops.Git{}.Apply(context.Background(), dir, modifyReadme)
	require.Error(t, err)
	require.NotErrorIs(t, err, gitops.ErrApplyFailed)
	require.Equal(t, "# demo\n\nA small project.\n", readFile(t, dir, "README.md"))
}
