package patch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// reviser is a bundle whose agent appends its workorder's id to the
// README, pushing the work branch back to the upstream repository as a
// forge's would be.
func reviser(t *testing.T) *testBundle {
	t.Helper()
	tb := setup(t)
	tb.settings.PushRemote = tb.repo
	tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(patchgen.CommandOptions{
		Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: `echo "line of $AZOLLA_WORK_ORDER_ID" >> README.md`,
		WorktreeDiff: gitops.Git{}.WorktreeDiff})})
	return tb
}

// round runs workorder n of objective rev, revising head when it is set.
func (tb *testBundle) reviseRound(t *testing.T, n string, head string) diazotroph.Result {
	t.Helper()
	req := tb.request(t, "rev", "")
	req.Objective.Generator = "command"
	req.WorkOrder.WorkOrderID = "wo-rev-" + n
	if head != "" {
		req.Revise = &diazotroph.Revise{PullRequest: "https://git.example.com/o/r/pulls/7", HeadSHA: head}
	}
	res, err := tb.p.Execute(t.Context(), req)
	require.NoError(t, err)
	requireValidBundle(t, req, res)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)
	return res
}

// A round that revises a pull request adds a commit on its head and
// pushes it without force; its bundle is the whole change against the
// base. A base that moved is not merged in: the diff stays against the
// merge base.
func TestExecute_ARevisionRoundAddsACommitOnThePullRequestsHead(t *testing.T) {
	t.Parallel()
	tb := reviser(t)
	first := tb.reviseRound(t, "1", "")
	head1 := first.Metadata.CommitSHA
	require.Equal(t, head1, strings.TrimSpace(git(t, tb.repo, "rev-parse", "azolla/rev")))

	second := tb.reviseRound(t, "2", head1)
	head2 := second.Metadata.CommitSHA
	require.Equal(t, head1, strings.TrimSpace(git(t, tb.repo, "rev-parse", head2+"^")), "the new commit's parent is the pull request's head")
	require.Equal(t, head2, strings.TrimSpace(git(t, tb.repo, "rev-parse", "azolla/rev")), "pushed")
	require.Contains(t, second.Content, "+line of wo-rev-1", "the whole change against the base")
	require.Contains(t, second.Content, "+line of wo-rev-2")
	require.Contains(t, second.Notes, "Revised pull request https://git.example.com/o/r/pulls/7: this round's commit is added on its head "+head1)

	write(t, tb.repo, "CHANGELOG.md", "base moved\n")
	git(t, tb.repo, "add", "CHANGELOG.md")
	git(t, tb.repo, "commit", "-q", "-m", "base moves")
	third := tb.reviseRound(t, "3", head2)
	require.Equal(t, head2, strings.TrimSpace(git(t, tb.repo, "rev-parse", third.Metadata.CommitSHA+"^")))
	require.NotContains(t, third.Content, "CHANGELOG.md", "the base's own change is not the pull request's")
	require.Contains(t, third.Content, "+line of wo-rev-3")
	require.Contains(t, third.Notes, "Its base branch has moved on since")
}

// A pull request whose branch moved since its head was recorded (someone
// pushed to it) keeps that commit: the push, which replaces nothing, is
// refused and the notes say so. A head that cannot be had starts the
// round from the base, as before revisions existed.
func TestExecute_ARevisionRoundReplacesNothingItHasNotSeen(t *testing.T) {
	t.Parallel()
	tb := reviser(t)
	head1 := tb.reviseRound(t, "1", "").Metadata.CommitSHA
	git(t, tb.repo, "checkout", "-q", "azolla/rev")
	write(t, tb.repo, "NOTES.md", "a reviewer's own commit\n")
	git(t, tb.repo, "add", "NOTES.md")
	git(t, tb.repo, "commit", "-q", "-m", "reviewer's fix")
	human := strings.TrimSpace(git(t, tb.repo, "rev-parse", "HEAD"))
	git(t, tb.repo, "checkout", "-q", "main")

	second := tb.reviseRound(t, "2", head1)
	require.Contains(t, second.Notes, "Push of azolla/rev to "+tb.repo+" failed")
	require.Equal(t, human, strings.TrimSpace(git(t, tb.repo, "rev-parse", "azolla/rev")), "the reviewer's commit stays")

	lost := tb.reviseRound(t, "3", strings.Repeat("ab", 20))
	require.Contains(t, lost.Notes, "could not be had")
	base := strings.TrimSpace(git(t, tb.repo, "rev-parse", "main"))
	require.Equal(t, base, strings.TrimSpace(git(t, tb.repo, "rev-parse", lost.Metadata.CommitSHA+"^")))
}

// A pull request the forge says conflicts with a base that moved gets
// the base merged in: the agent finds the conflicting file with its
// markers and is told to resolve them, and the round's commit is a merge
// of the head and the base, so the bundle, against the base, is the pull
// request's own change.
func TestExecute_ARevisionOfAConflictingPullRequestMergesTheBase(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.settings.PushRemote = tb.repo
	// The first round rewrites the README's last line; the second resolves
	// a conflict by keeping both sides' lines, in order.
	agent := `if grep -q '^<<<<<<<' README.md; then grep -v '^\(<<<<<<<\|=======\|>>>>>>>\)' README.md > r.tmp && mv r.tmp README.md; ` +
		`cp "$AZOLLA_INPUT_FILE" "` + tb.root + `/input"; else sed -i 's/^Hello.$/Hello, reviewer./' README.md; fi`
	tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(patchgen.CommandOptions{
		Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: agent, WorktreeDiff: gitops.Git{}.WorktreeDiff})})
	head1 := tb.reviseRound(t, "1", "").Metadata.CommitSHA

	write(t, tb.repo, "README.md", "# sample\n\nHello, world.\n")
	git(t, tb.repo, "commit", "-q", "-am", "the base says hello to the world")
	base := strings.TrimSpace(git(t, tb.repo, "rev-parse", "main"))

	req := tb.request(t, "rev", "")
	req.Objective.Generator = "command"
	req.WorkOrder.WorkOrderID = "wo-rev-2"
	req.Revise = &diazotroph.Revise{PullRequest: "https://git.example.com/o/r/pulls/7", HeadSHA: head1, Conflicts: true}
	res, err := tb.p.Execute(t.Context(), req)
	require.NoError(t, err)
	requireValidBundle(t, req, res)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)
	merge := res.Metadata.CommitSHA
	require.NotEmpty(t, merge, res.Notes)
	require.Equal(t, head1+" "+base, strings.TrimSpace(git(t, tb.repo, "rev-list", "--parents", "-n1", merge)[41:]),
		"a merge of the head and the base")
	require.Contains(t, res.Notes, "was merged in, 1 file(s) conflicting (README.md), left to the agent to resolve")
	input, err := os.ReadFile(filepath.Join(tb.root, "input"))
	require.NoError(t, err)
	require.Contains(t, string(input), "These files conflict and hold git's conflict markers")
	require.Contains(t, res.Content, "\n Hello, world.\n", "the diff is against the base that was merged in, kept as resolved")
	require.Contains(t, res.Content, "+Hello, reviewer.")
	require.NotContains(t, res.Content, "<<<<<<<")
	require.Equal(t, merge, strings.TrimSpace(git(t, tb.repo, "rev-parse", "azolla/rev")), "pushed: it adds to the head")
}
