package github_test

import (
	"context"
	"strconv"
	"testing"

	gh "github.com/google/go-github/v89/github"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/forgetest"
	"github.com/azolla/azolla/internal/forge/github"
)

// testPageSize is small, so that every list of more than two takes pages.
const testPageSize = 2

type testBundle struct {
	fake    *fakeGitHub
	forge   forge.Forge
	sleeper *forgetest.Sleeper
}

// setup starts a fake serving under prefix ("" or "/api/v3") and a Forge
// on it holding azolla's token; opts adjust the Forge's options.
func setup(t *testing.T, prefix string, opts ...func(*github.Options)) *testBundle {
	t.Helper()
	b := &testBundle{fake: newFake(t, prefix), sleeper: &forgetest.Sleeper{}}
	o := github.Options{BaseURL: b.fake.baseURL(), Owner: fakeOwner, Repo: fakeRepo, Token: azollaToken,
		PageSize: testPageSize, Sleep: b.sleeper.Sleep}
	for _, opt := range opts {
		opt(&o)
	}
	f, err := github.New(o)
	require.NoError(t, err)
	b.forge = f
	return b
}

// client is a go-github client of another user of the fake.
func (b *testBundle) client(t *testing.T, token string) *gh.Client {
	t.Helper()
	base := b.fake.baseURL()
	c, err := gh.NewClient(gh.WithURLs(&base, nil), gh.WithAuthToken(token))
	require.NoError(t, err)
	return c
}

// clientOf is the go-github client of the fake's user login, with their
// own token.
func (b *testBundle) clientOf(t *testing.T, login string) *gh.Client {
	t.Helper()
	token := b.fake.tokenOf(login)
	require.NotEmpty(t, token, "the fake has no user %q", login)
	return b.client(t, token)
}

// postStatus posts a commit status as the maintainer's CI would.
func (b *testBundle) postStatus(t *testing.T, sha, name string, state forge.CheckState, description string) {
	t.Helper()
	require.NoError(t, postStatusAs(t, b.client(t, maintainerToken), sha, name, state, description))
}

// postStatusAs posts a commit status with client and returns GitHub's
// refusal.
func postStatusAs(t *testing.T, client *gh.Client, sha, name string, state forge.CheckState, description string) error {
	t.Helper()
	s := map[forge.CheckState]string{forge.ChecksSuccess: "success", forge.ChecksPending: "pending",
		forge.ChecksFailure: "failure"}[state]
	require.NotEmpty(t, s, "no commit status is %q", state)
	target := "https://ci.example/" + name
	_, _, err := client.Repositories.CreateStatus(context.Background(), fakeOwner, fakeRepo, sha,
		gh.RepoStatus{State: &s, Context: &name, Description: &description, TargetURL: &target})
	return err
}

// newHarness is forgetest's Harness on a fake under prefix: the
// maintainer opens, merges, closes and posts statuses, the reviewer
// reviews, and ReviewAs and StatusAs act as whoever they name, each
// through the REST API with their own token.
func newHarness(prefix string) func(t *testing.T) *forgetest.Harness {
	return func(t *testing.T) *forgetest.Harness {
		b := setup(t, prefix)
		ctx := context.Background()
		maintainer, reviewer := b.client(t, maintainerToken), b.client(t, reviewerToken)
		return &forgetest.Harness{
			Forge: b.forge,
			Base:  fakeBase,
			Files: fakeFiles,
			Push: func(t *testing.T, branch string) string {
				return b.fake.push(branch)
			},
			Open: func(t *testing.T, head, title string) int {
				base, body := fakeBase, "Opened by hand."
				pr, _, err := maintainer.PullRequests.Create(ctx, fakeOwner, fakeRepo,
					&gh.NewPullRequest{Title: &title, Head: &head, Base: &base, Body: &body})
				require.NoError(t, err)
				return pr.GetNumber()
			},
			Review: func(t *testing.T, number int, state forge.ReviewState, body string, comments []forge.ReviewComment) {
				submitReview(t, maintainer, reviewer, number, state, body, comments)
			},
			Status: b.postStatus,
			Merge: func(t *testing.T, number int) {
				_, _, err := maintainer.PullRequests.Merge(ctx, fakeOwner, fakeRepo, number, "", nil)
				require.NoError(t, err)
			},
			Close: func(t *testing.T, number int) {
				closed := "closed"
				_, _, err := maintainer.PullRequests.Edit(ctx, fakeOwner, fakeRepo, number, &gh.PullRequest{State: &closed})
				require.NoError(t, err)
			},
			Self:     "azolla-bot",
			Writer:   "reviewer",
			Reader:   "reader",
			Stranger: "stranger",
			Team:     fakeOwner + "/readers",
			ReviewAs: func(t *testing.T, user string, number int, state forge.ReviewState, body string) {
				submitReview(t, maintainer, b.clientOf(t, user), number, state, body, nil)
			},
			StatusAs: func(t *testing.T, user, sha, name string, state forge.CheckState, description string) error {
				return postStatusAs(t, b.clientOf(t, user), sha, name, state, description)
			},
			OpenIssue: func(t *testing.T, user, title, body string, labels, assignees []string) int {
				return openIssue(t, maintainer, b.clientOf(t, user), title, body, labels, assignees)
			},
			LabelIssue: func(t *testing.T, user string, number int, label string) {
				_, _, err := b.clientOf(t, user).Issues.AddLabelsToIssue(ctx, fakeOwner, fakeRepo, number, []string{label})
				require.NoError(t, err, "label issue #%d %q as %s", number, label, user)
			},
			UnlabelIssue: func(t *testing.T, user string, number int, label string) {
				_, err := b.clientOf(t, user).Issues.RemoveLabelForIssue(ctx, fakeOwner, fakeRepo, number, label)
				require.NoError(t, err, "unlabel issue #%d %q as %s", number, label, user)
			},
			CloseIssue: func(t *testing.T, number int) {
				closed := "closed"
				_, _, err := maintainer.Issues.Edit(ctx, fakeOwner, fakeRepo, number, &gh.IssueRequest{State: &closed})
				require.NoError(t, err)
			},
			CommentAs: func(t *testing.T, user string, on forge.Thread, body string) string {
				c, _, err := b.clientOf(t, user).Issues.CreateComment(ctx, fakeOwner, fakeRepo, on.Number,
					&gh.IssueComment{Body: &body})
				require.NoError(t, err, "comment on %s as %s", on, user)
				return strconv.FormatInt(c.GetID(), 10)
			},
		}
	}
}

// openIssue has author open an issue, then the maintainer label and
// assign it: GitHub drops labels and assignees asked for by anyone
// without push access.
func openIssue(t *testing.T, maintainer, author *gh.Client, title, body string, labels, assignees []string) int {
	t.Helper()
	ctx := context.Background()
	is, _, err := author.Issues.Create(ctx, fakeOwner, fakeRepo, &gh.IssueRequest{Title: &title, Body: &body})
	require.NoError(t, err)
	n := is.GetNumber()
	if len(labels) > 0 {
		_, _, err := maintainer.Issues.AddLabelsToIssue(ctx, fakeOwner, fakeRepo, n, labels)
		require.NoError(t, err)
	}
	if len(assignees) > 0 {
		_, _, err := maintainer.Issues.Edit(ctx, fakeOwner, fakeRepo, n, &gh.IssueRequest{Assignees: &assignees})
		require.NoError(t, err)
	}
	return n
}

// submitReview has reviewer submit a review; a dismissed one is a request
// for changes the maintainer then dismisses.
func submitReview(t *testing.T, maintainer, reviewer *gh.Client, number int, state forge.ReviewState, body string,
	comments []forge.ReviewComment) int64 {
	t.Helper()
	ctx := context.Background()
	event := map[forge.ReviewState]string{forge.ReviewApproved: "APPROVE", forge.ReviewChangesRequested: "REQUEST_CHANGES",
		forge.ReviewCommented: "COMMENT", forge.ReviewDismissed: "REQUEST_CHANGES"}[state]
	req := &gh.PullRequestReviewRequest{Body: &body, Event: &event}
	for _, c := range comments {
		line, side := c.Line, "RIGHT"
		if line == 0 {
			line, side = c.OldLine, "LEFT"
		}
		req.Comments = append(req.Comments, &gh.DraftReviewComment{Path: &c.Path, Body: &c.Body, Line: &line, Side: &side})
	}
	rv, _, err := reviewer.PullRequests.CreateReview(ctx, fakeOwner, fakeRepo, number, req)
	require.NoError(t, err)
	if state == forge.ReviewDismissed {
		why := "superseded"
		_, _, err := maintainer.PullRequests.DismissReview(ctx, fakeOwner, fakeRepo, number, rv.GetID(),
			&gh.PullRequestReviewDismissalRequest{Message: &why})
		require.NoError(t, err)
	}
	return rv.GetID()
}

func thread(number int) forge.Thread { return forge.Thread{Number: number} }

func numbers(issues []forge.Issue) []int {
	out := make([]int, len(issues))
	for i, is := range issues {
		out[i] = is.Number
	}
	return out
}

func ids(comments []forge.Comment) []string {
	out := make([]string, len(comments))
	for i, c := range comments {
		out[i] = c.ID
	}
	return out
}
