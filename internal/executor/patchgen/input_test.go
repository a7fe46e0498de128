package patchgen_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
)

// newInput returns an input for objective obj-1 on a worktree at dir.
func newInput(dir string) patchgen.Input {
	return patchgen.Input{
		ObjectiveID: "obj-1", WorkOrderID: "wo-1",
		BranchName: "azolla/obj-1", BaseBranch: "main", CommitSHA: strings.Repeat("ab", 20),
		Title:              "Say hello to there",
		AcceptanceCriteria: []string{"hello.txt says there"},
		Prompt:             "# Objective: Say hello to there\n\nFiles:\n- hello.txt\n",
		Worktree:           dir,
	}
}

func TestGenerationInput_StatesTheTaskAndTheDiffFormat(t *testing.T) {
	t.Parallel()
	text := patchgen.GenerationInput(newInput("/work/tree"))
	require.True(t, strings.HasPrefix(text, "# Objective: Say hello to there\n\nFiles:\n- hello.txt\n"), text)
	for _, want := range []string{
		"commit " + strings.Repeat("ab", 20) + " of branch main", "branch azolla/obj-1",
		"a/ and b/ prefixes", "relative to the repository root", "```diff", "no explanation",
	} {
		require.Contains(t, text, want)
	}
	require.NotContains(t, text, "/work/tree", "a chat model has no worktree to edit")
}

func TestGenerationInput_WithoutPromptUsesTitleAndCriteria(t *testing.T) {
	t.Parallel()
	in := newInput("")
	in.Prompt = "  "
	in.AcceptanceCriteria = []string{"first", "second"}
	text := patchgen.GenerationInput(in)
	require.True(t, strings.HasPrefix(text, "# Objective: Say hello to there\n\nAcceptance criteria:\n- first\n- second\n"), text)
}
