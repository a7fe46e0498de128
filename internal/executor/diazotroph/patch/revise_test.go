package patch_test

import (
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
