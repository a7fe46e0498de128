package patchgen

import (
	"fmt"
	"strings"
)

// GenerationInput is the text handed to the command and openai generators:
// the objective's prompt, then the exact form the patch must take. The diff
// rules are spelled out because the patch is applied with git by a caller
// that cannot ask back: a wrong prefix or base is a failed run.
//
// The command generator appends a paragraph allowing an agent to edit the
// worktree instead (see Command); the text itself asks for a diff and
// nothing else, which is all a chat model can give.
func GenerationInput(in Input) string {
	var b strings.Builder
	prompt := strings.TrimSpace(in.Prompt)
	if prompt == "" {
		// The snapshot's prompt normally carries title and criteria; without
		// it they are all there is to go on.
		prompt = objectiveText(in)
	}
	b.WriteString(prompt)
	b.WriteString("\n\n## How to answer\n\n")
	b.WriteString("Make the change described above as one patch in unified diff format, ")
	b.WriteString("as produced by `git diff` and accepted by `git apply` run at the repository root.\n\n")
	b.WriteString(target(in))
	b.WriteString("- Paths are relative to the repository root, with a/ and b/ prefixes: " +
		"`diff --git a/path b/path`, `--- a/path`, `+++ b/path`. " +
		"A new file has `--- /dev/null`, a deleted file `+++ /dev/null`.\n")
	b.WriteString("- Every hunk header gives correct line counts, and context lines match the file exactly, whitespace included.\n")
	b.WriteString("- Change only what the objective needs.\n")
	b.WriteString("- Reply with the diff alone, in a single ```diff fenced block: " +
		"no explanation, summary or other prose outside the block.\n")
	return b.String()
}

// withHouseRules adds the repository's AGENTS.md to a prompt, as the
// repository's own instructions for whoever changes it.
func withHouseRules(prompt, rules string) string {
	rules = strings.TrimSpace(rules)
	if rules == "" {
		return prompt
	}
	return prompt + "\n## The repository's instructions (its AGENTS.md)\n\n" +
		"Follow them where they apply to this change.\n\n" + rules + "\n"
}

// objectiveText renders the title and acceptance criteria.
func objectiveText(in Input) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Objective: %s\n", strings.TrimSpace(in.Title))
	if len(in.AcceptanceCriteria) > 0 {
		b.WriteString("\nAcceptance criteria:\n")
		for _, c := range in.AcceptanceCriteria {
			fmt.Fprintf(&b, "- %s\n", strings.TrimSpace(c))
		}
	}
	return strings.TrimSpace(b.String())
}

// target says what the patch applies to, with whatever of it is known.
func target(in Input) string {
	var b strings.Builder
	switch {
	case in.CommitSHA != "" && in.BaseBranch != "":
		fmt.Fprintf(&b, "- Write it against commit %s of branch %s.\n", in.CommitSHA, in.BaseBranch)
	case in.CommitSHA != "":
		fmt.Fprintf(&b, "- Write it against commit %s.\n", in.CommitSHA)
	case in.BaseBranch != "":
		fmt.Fprintf(&b, "- Write it against the tip of branch %s.\n", in.BaseBranch)
	}
	if in.BranchName != "" {
		fmt.Fprintf(&b, "- It will be applied there, on the new branch %s.\n", in.BranchName)
	}
	return b.String()
}

// commandInput is GenerationInput with the one freedom an agent running in
// the worktree has that a chat model lacks.
func commandInput(in Input) string {
	return GenerationInput(in) + "\n## Running in the worktree\n\n" +
		"You run inside a checkout of the repository at " + in.Worktree + ". " +
		"Instead of replying with a diff you may edit, create and delete files there directly: " +
		"if the checkout has changes when you exit, those changes are the patch and your output is not searched for a diff. " +
		"Do not commit, switch branches or touch anything outside the checkout.\n"
}
