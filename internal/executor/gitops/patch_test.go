package gitops_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

const modifyReadme = `diff --git a/README.md b/README.md
index 1111111..2222222 100644
--- a/README.md
+++ b/README.md
@@ -1,3 +1,3 @@
 # demo
 
-A small project.
+A smaller project.
`

const binaryLogo = `diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000000000000000000000000000000000000..d0463d47f174d7552cc8f1f10d3f1fdc31908ed7
GIT binary patch
literal 7
OcmeAS@N;KiWC8#POaXEL

literal 0
HcmV?d00001

`

// acceptedPatches are well-formed patches of every shape, with the paths
// CheckPatch must report for them.
var acceptedPatches = []struct {
	name   string
	patch  string
	policy gitops.PatchPolicy
	paths  []string
}{
	{name: "modify", patch: modifyReadme, paths: []string{"README.md"}},
	{name: "new file", patch: `diff --git a/new/file.txt b/new/file.txt
new file mode 100644
index 0000000..3b18e51
--- /dev/null
+++ b/new/file.txt
@@ -0,0 +1,2 @@
+hello
+world
`, paths: []string{"new/file.txt"}},
	{name: "delete", patch: `diff --git a/docs/guide.txt b/docs/guide.txt
deleted file mode 100644
index 1111111..0000000
--- a/docs/guide.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-one
-two
`, paths: []string{"docs/guide.txt"}},
	{name: "pure rename with spaces", patch: `diff --git a/old name.txt b/new name.txt
similarity index 100%
rename from old name.txt
rename to new name.txt
`, paths: []string{"old name.txt", "new name.txt"}},
	{name: "rename with changes", patch: `diff --git a/src/main.go b/cmd/main.go
similarity index 80%
rename from src/main.go
rename to cmd/main.go
index 1111111..2222222 100644
--- a/src/main.go
+++ b/cmd/main.go
@@ -1,3 +1,3 @@
 package main
 
-func main() {
+func main() { // moved
`, paths: []string{"src/main.go", "cmd/main.go"}},
	{name: "copy", patch: `diff --git a/a.txt b/b.txt
similarity index 100%
copy from a.txt
copy to b.txt
`, paths: []string{"a.txt", "b.txt"}},
	{name: "mode change", patch: `diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
`, paths: []string{"run.sh"}},
	{name: "quoted non-ASCII path", patch: `diff --git "a/sp\303\251cial" "b/sp\303\251cial"
index 1111111..2222222 100644
--- "a/sp\303\251cial"
+++ "b/sp\303\251cial"
@@ -1 +1 @@
-x
+y
`, paths: []string{"sp\u00e9cial"}},
	{name: "quoted path with a quote", patch: `diff --git "a/say \"hi\".txt" "b/say \"hi\".txt"
new file mode 100644
index 0000000..1111111
`, paths: []string{`say "hi".txt`}},
	{name: "git path with a space", patch: "diff --git a/my file.txt b/my file.txt\n" +
		"index 1111111..2222222 100644\n--- a/my file.txt\t\n+++ b/my file.txt\t\n" +
		"@@ -1 +1 @@\n-x\n+y\n", paths: []string{"my file.txt"}},
	{name: "plain unified diff with timestamps", patch: "--- a/file.txt\t2024-01-02 03:04:05.000000000 +0100\n" +
		"+++ b/file.txt\t2024-01-02 03:04:06.000000000 +0100\n@@ -1,2 +1,2 @@\n-x\n+y\n z\n",
		paths: []string{"file.txt"}},
	{name: "plain unified diff creating a file", patch: "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\n",
		paths: []string{"new.txt"}},
	{name: "prefix other than a/ b/", patch: "--- orig/x.txt\n+++ new/x.txt\n@@ -1 +1 @@\n-x\n+y\n",
		paths: []string{"x.txt"}},
	{name: "no newline at end of file", patch: `diff --git a/x b/x
index 1111111..2222222 100644
--- a/x
+++ b/x
@@ -1 +1 @@
-old
\ No newline at end of file
+new
\ No newline at end of file
`, paths: []string{"x"}},
	{name: "several files in order", patch: modifyReadme + `diff --git a/b.txt b/b.txt
deleted file mode 100644
index 1111111..0000000
--- a/b.txt
+++ /dev/null
@@ -1 +0,0 @@
-b
`, paths: []string{"README.md", "b.txt"}},
	{name: "header-like hunk content", patch: `diff --git a/notes.md b/notes.md
index 1111111..2222222 100644
--- a/notes.md
+++ b/notes.md
@@ -1 +1,4 @@
 notes
+diff --git a/.git/config b/.git/config
+--- a/.git/config
++++ b/.git/config
`, paths: []string{"notes.md"}},
	{name: "format-patch mail", patch: `From 1234567890abcdef1234567890abcdef12345678 Mon Sep 17 00:00:00 2001
From: Someone <someone@example.com>
Subject: [PATCH] Shrink the project

Words about it.
---
 README.md | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

` + modifyReadme + `-- 
2.39.5

`, paths: []string{"README.md"}},
	{name: "binary allowed", patch: binaryLogo, policy: gitops.PatchPolicy{AllowBinary: true},
		paths: []string{"logo.png"}},
	{name: "binary note allowed", patch: "diff --git a/x.bin b/x.bin\nindex 1111111..2222222 100644\n" +
		"Binary files a/x.bin and b/x.bin differ\n", policy: gitops.PatchPolicy{AllowBinary: true},
		paths: []string{"x.bin"}},
	{name: "within MaxBytes", patch: modifyReadme, policy: gitops.PatchPolicy{MaxBytes: len(modifyReadme)},
		paths: []string{"README.md"}},
}

func TestCheckPatch_Accepts(t *testing.T) {
	t.Parallel()
	for _, tc := range acceptedPatches {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			paths, err := gitops.CheckPatch("", tc.patch, tc.policy)
			require.NoError(t, err)
			require.Equal(t, tc.paths, paths)
		})
	}
}

// TestCheckPatch_NamesEveryPathGitApplyReads asks git which paths each
// accepted patch touches ("git apply --numstat", which only parses) and
// requires CheckPatch to have reported every one of them: a path git reads
// differently would escape the checks.
func TestCheckPatch_NamesEveryPathGitApplyReads(t *testing.T) {
	t.Parallel()
	for _, tc := range acceptedPatches {
		cmd := exec.Command("git", "apply", "--numstat", "-z", "-p1", "-")
		cmd.Dir = t.TempDir()
		cmd.Stdin = strings.NewReader(tc.patch)
		out, err := cmd.Output()
		require.NoError(t, err, tc.name)
		gitPaths := numstatPaths(string(out))
		require.NotEmpty(t, gitPaths, tc.name)

		paths, err := gitops.CheckPatch("", tc.patch, tc.policy)
		require.NoError(t, err, tc.name)
		require.Subset(t, paths, gitPaths, tc.name)
	}
}

// numstatPaths reads "git apply --numstat -z": "added TAB deleted TAB path
// NUL" per file, naming the new path of a rename or copy.
func numstatPaths(out string) []string {
	var paths []string
	for rec := range strings.SplitSeq(strings.TrimSuffix(out, "\x00"), "\x00") {
		if parts := strings.SplitN(rec, "\t", 3); len(parts) == 3 {
			paths = append(paths, parts[2])
		}
	}
	return paths
}

func TestCheckPatch_Refuses(t *testing.T) {
	t.Parallel()
	newFile := func(path string) string {
		return "diff --git a/" + path + " b/" + path + "\nnew file mode 100644\nindex 0000000..1111111\n" +
			"--- /dev/null\n+++ b/" + path + "\n@@ -0,0 +1 @@\n+owned\n"
	}
	cases := []struct {
		name   string
		patch  string
		policy gitops.PatchPolicy
		path   string // the refusal's Path
		reason string // part of its Reason
	}{
		{name: "empty", patch: "", reason: "empty patch"},
		{name: "blank", patch: "  \n\n", reason: "empty patch"},
		{name: "prose", patch: "just some prose\nno diff here\n", reason: "no file changes"},
		{name: "over MaxBytes", patch: modifyReadme, policy: gitops.PatchPolicy{MaxBytes: 10}, reason: "over the limit of 10"},
		{name: "dot-dot", patch: "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", path: "../x", reason: "'..'"},
		{name: "dot-dot inside", patch: newFile("a/../../x"), path: "a/../../x", reason: "'..'"},
		{name: "absolute traditional", patch: "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
			path: "/etc/passwd", reason: "absolute path"},
		{name: "absolute after prefix", patch: newFile("/etc/passwd"), path: "/etc/passwd", reason: "absolute path"},
		{name: "absolute rename", patch: "diff --git a/x b/y\nsimilarity index 100%\nrename from /etc/passwd\nrename to y\n",
			path: "/etc/passwd", reason: "absolute path"},
		{name: "dot component", patch: newFile("./x"), path: "./x", reason: "'.'"},
		{name: ".git hook", patch: newFile(".git/hooks/pre-commit"), path: ".git/hooks/pre-commit", reason: ".git"},
		{name: "nested .git", patch: newFile("sub/.git/config"), path: "sub/.git/config", reason: ".git"},
		{name: ".GIT any case", patch: newFile(".GIT/config"), path: ".GIT/config", reason: ".git"},
		{name: "rename into .git", patch: "diff --git a/x b/.git/config\nsimilarity index 100%\nrename from x\nrename to .git/config\n",
			path: ".git/config", reason: ".git"},
		{name: "copy out of .git", patch: "diff --git a/.git/config b/leak.txt\nsimilarity index 100%\ncopy from .git/config\ncopy to leak.txt\n",
			path: ".git/config", reason: ".git"},
		{name: "symlink created", patch: "diff --git a/link b/link\nnew file mode 120000\nindex 0000000..1111111\n" +
			"--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n",
			path: "link", reason: "symbolic links"},
		{name: "turned into a symlink", patch: "diff --git a/x b/x\nold mode 100644\nnew mode 120000\n", path: "x", reason: "symbolic links"},
		{name: "symlink on index line", patch: "diff --git a/x b/x\nindex 1111111..2222222 120000\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
			path: "x", reason: "symbolic links"},
		{name: "submodule", patch: "diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..1111111\n--- /dev/null\n" +
			"+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit 1111111111111111111111111111111111111111\n", path: "sub", reason: "submodules"},
		{name: "directory mode", patch: "diff --git a/d b/d\nnew file mode 040000\n", reason: "unsupported file mode"},
		{name: "binary data", patch: binaryLogo, path: "logo.png", reason: "binary"},
		{name: "binary note", patch: "diff --git a/x.bin b/x.bin\nindex 1111111..2222222 100644\nBinary files a/x.bin and b/x.bin differ\n",
			path: "x.bin", reason: "binary"},
		{name: "corrupt binary data", patch: strings.Replace(binaryLogo, "OcmeAS@N;KiWC8#POaXEL", "Ocme AS@N;KiWC8#POaXE", 1),
			policy: gitops.PatchPolicy{AllowBinary: true}, reason: "corrupt binary data"},
		{name: "quoted tab", patch: newFileQuoted(`x\ty`), path: "x\ty", reason: "control character"},
		{name: "quoted NUL", patch: newFileQuoted(`x\000y`), path: "x\x00y", reason: "control character"},
		{name: "quoted newline", patch: newFileQuoted(`x\ny`), path: "x\ny", reason: "control character"},
		{name: "carriage return in header", patch: "--- a/x\r\n+++ b/x\r\n@@ -1 +1 @@\n-a\n+b\n", reason: "control character in a patch header"},
		{name: "hunk longer than its header", patch: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n", reason: "outside any hunk"},
		{name: "hunk cut short", patch: "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n", reason: "cut short"},
		{name: "junk in hunk", patch: "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\nfoo\n", reason: "malformed hunk line"},
		{name: "hunk with only context", patch: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n a\n", reason: "changes nothing"},
		{name: "malformed hunk header", patch: "--- a/x\n+++ b/x\n@@ -a +1 @@\n-a\n+b\n", reason: "malformed hunk header"},
		{name: "no final newline", patch: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b", reason: "does not end with a newline"},
		{name: "--- without +++", patch: "--- a/x\n@@ -1 +1 @@\n-a\n+b\n", reason: "without a '+++'"},
		{name: "+++ alone", patch: "+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", reason: "'+++' without"},
		{name: "hunk without file", patch: "@@ -1 +1 @@\n-a\n+b\n", reason: "hunk without a file header"},
		{name: "pair without hunk", patch: "--- a/x\n+++ b/x\n", reason: "without a hunk"},
		{name: "bare diff --git", patch: "diff --git a/x b/x\n", reason: "without an extended header"},
		{name: "git header --- without +++", patch: "diff --git a/x b/x\n--- a/x\n@@ -1 +1 @@\n-a\n+b\n", reason: "needs a '+++'"},
		{name: "git header changes nothing", patch: "diff --git a/x b/x\nindex 1111111..2222222 100644\n", path: "x", reason: "no hunks"},
		{name: "git header names nothing", patch: "diff --git a/x b/y\nindex 1111111..2222222 100644\n", reason: "cannot tell which file"},
		{name: "/dev/null without new file mode", patch: "diff --git a/x b/x\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\n",
			reason: "/dev/null without"},
		{name: "text after a tab", patch: "--- a/x\tjunk/../../y\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
			path: "a/x", reason: "unrecognized text after"},
		{name: "space in plain diff name", patch: "--- a/my file\n+++ b/my file\n@@ -1 +1 @@\n-a\n+b\n",
			path: "a/my file", reason: "whitespace in a path"},
		{name: "no prefix", patch: "--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n", path: "x", reason: "no a/ or b/ prefix"},
		{name: "bad quoting", patch: "--- \"a/x\\q\"\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", path: `"a/x\q"`, reason: "malformed quoted path"},
		{name: "second file is the bad one", patch: modifyReadme + "--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-x\n+y\n",
			path: ".git/config", reason: ".git"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			paths, err := gitops.CheckPatch("", tc.patch, tc.policy)
			require.Nil(t, paths)
			require.ErrorIs(t, err, gitops.ErrPatchRefused)
			var re *gitops.RefusedError
			require.True(t, errors.As(err, &re))
			require.Equal(t, tc.path, re.Path)
			require.Contains(t, re.Reason, tc.reason)
		})
	}
}

func newFileQuoted(escaped string) string {
	return `diff --git "a/` + escaped + `" "b/` + escaped + `"` + "\nnew file mode 100644\nindex 0000000..1111111\n" +
		`--- /dev/null` + "\n" + `+++ "b/` + escaped + `"` + "\n@@ -0,0 +1 @@\n+owned\n"
}
