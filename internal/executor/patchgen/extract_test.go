package patchgen_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
)

const helloDiff = "diff --git a/hello.txt b/hello.txt\n" +
	"--- a/hello.txt\n" +
	"+++ b/hello.txt\n" +
	"@@ -1,2 +1,2 @@\n" +
	" hello\n" +
	"-world\n" +
	"+there\n"

const otherDiff = "diff --git a/other.txt b/other.txt\n" +
	"new file mode 100644\n" +
	"--- /dev/null\n" +
	"+++ b/other.txt\n" +
	"@@ -0,0 +1 @@\n" +
	"+new\n"

func TestExtractDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", ""},
		{"prose only", "I could not find anything to change.\n", ""},
		{"diff fence with prose around", "Here is the patch:\n\n```diff\n" + helloDiff + "```\n\nIt renames world.\n", helloDiff},
		{"patch fence", "```patch\n" + helloDiff + "```", helloDiff},
		{"fence language in capitals with an info string", "```Diff title=fix\n" + helloDiff + "```\n", helloDiff},
		{"longer fence", "````diff\n" + helloDiff + "````\n", helloDiff},
		{"one fence per file joined in order", "First:\n```diff\n" + helloDiff + "```\nThen:\n```diff\n" + otherDiff + "```\n", helloDiff + otherDiff},
		{"other fences ignored", "```go\nfunc main() {}\n```\n```diff\n" + helloDiff + "```\n", helloDiff},
		{"diff fence without a diff ignored", "```diff\nno changes needed\n```\n", ""},
		{"fence left open by a cut-off reply", "```diff\n" + helloDiff, helloDiff},
		{
			"fences inside a patched Markdown file do not end the block",
			"```diff\n--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n ```\n-old\n+new\n ```\n```\n",
			"--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n ```\n-old\n+new\n ```\n",
		},
		{"CRLF normalized", "```diff\r\n" + "--- a/x\r\n+++ b/x\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n```\r\n", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"},
		{"bare diff after prose runs to the end", "Sure.\n" + helloDiff, helloDiff},
		{"bare diff gets a final newline", "Sure.\n" + helloDiff[:len(helloDiff)-1], helloDiff},
		{"bare diff without a git header", "Patch:\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"},
		{"a rule is not a diff", "Notes\n--- \nend\n", ""},
		{"bare diff in an unlabelled fence ends with it", "```\n" + helloDiff + "```\nHope this helps.\n", helloDiff},
		{"diff after an unrelated fence", "```sh\ngit status\n```\n" + helloDiff, helloDiff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, patchgen.ExtractDiff(tt.text))
		})
	}
}
