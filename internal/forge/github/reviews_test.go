package github_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	gh "github.com/google/go-github/v89/github"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

// openForReview opens a pull request from a branch with two commits, one
// on each of fakeFiles, as azolla does.
func openForReview(t *testing.T, b *testBundle, branch string) int {
	t.Helper()
	b.fake.push(branch)
	b.fake.push(branch)
	pr, _, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: branch, Base: fakeBase,
		Title: "Review " + branch, Body: "body"})
	require.NoError(t, err)
	return pr.Number
}

func TestReviews_CommentsFollowTheLinkHeader(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	n := openForReview(t, b, "azolla/paged")
	var comments []forge.ReviewComment
	for i := range 7 {
		comments = append(comments, forge.ReviewComment{Path: fakeFiles[i%2], Line: i + 1, Body: fmt.Sprintf("c%d", i)})
	}
	submitReview(t, b.client(t, maintainerToken), b.client(t, reviewerToken), n, forge.ReviewChangesRequested,
		"Seven.", comments)

	got, _, err := b.forge.Reviews(context.Background(), n, "")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Len(t, got[0].Comments, 7)
	for i, c := range got[0].Comments {
		require.Equal(t, fmt.Sprintf("c%d", i), c.Body, "in the order written")
		require.Equal(t, i+1, c.Line)
		require.Equal(t, "reviewer", c.Author)
	}
	pages := b.fake.requests("GET " + pullsPath + "/" + strconv.Itoa(n) + "/comments")
	require.Len(t, pages, 4, "seven comments two to a page")
	for i, req := range pages {
		require.Contains(t, req, "per_page=2")
		require.Contains(t, req, "page="+strconv.Itoa(i+1), "page %d is the one the Link header named", i+1)
	}
}

// A review started before another was submitted, and submitted after it,
// has the lower id: it is read all the same, and once.
func TestReviews_AReviewStartedEarlierAndSubmittedLaterIsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, "")
	n := openForReview(t, b, "azolla/slow-reviewer")
	maintainer, reviewer := b.client(t, maintainerToken), b.client(t, reviewerToken)

	// azolla's own pending review is visible to azolla, and skipped.
	own, _, err := b.client(t, azollaToken).PullRequests.CreateReview(ctx, fakeOwner, fakeRepo, n,
		&gh.PullRequestReviewRequest{Body: ptr("draft")})
	require.NoError(t, err)
	require.Equal(t, "PENDING", own.GetState())
	// The maintainer starts a review and leaves it pending.
	slow, _, err := maintainer.PullRequests.CreateReview(ctx, fakeOwner, fakeRepo, n,
		&gh.PullRequestReviewRequest{Body: ptr("Looking."), Comments: []*gh.DraftReviewComment{
			{Path: &fakeFiles[0], Line: ptr(2), Side: ptr("RIGHT"), Body: ptr("Why this?")}}})
	require.NoError(t, err)
	fast := submitReview(t, maintainer, reviewer, n, forge.ReviewApproved, "Fine by me.", nil)
	require.Less(t, slow.GetID(), fast)

	got, cur, err := b.forge.Reviews(ctx, n, "")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, strconv.FormatInt(fast, 10), got[0].ID)

	_, _, err = maintainer.PullRequests.SubmitReview(ctx, fakeOwner, fakeRepo, n, slow.GetID(),
		&gh.PullRequestReviewRequest{Event: ptr("REQUEST_CHANGES")})
	require.NoError(t, err)
	got, cur, err = b.forge.Reviews(ctx, n, cur)
	require.NoError(t, err)
	require.Len(t, got, 1, "the slow review, though its id is below the last one read")
	require.Equal(t, strconv.FormatInt(slow.GetID(), 10), got[0].ID)
	require.Equal(t, forge.ReviewChangesRequested, got[0].State)
	require.Equal(t, "maintainer", got[0].Author)
	require.Len(t, got[0].Comments, 1)
	require.Equal(t, 2, got[0].Comments[0].Line)

	again, cur2, err := b.forge.Reviews(ctx, n, cur)
	require.NoError(t, err)
	require.Empty(t, again)
	require.Equal(t, cur, cur2)
}

func TestReviews_StatesSidesAndOutdatedLines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, "")
	n := openForReview(t, b, "azolla/lines")
	maintainer, reviewer := b.client(t, maintainerToken), b.client(t, reviewerToken)
	submitReview(t, maintainer, reviewer, n, forge.ReviewDismissed, "Withdrawn.", nil)
	submitReview(t, maintainer, reviewer, n, forge.ReviewCommented, "Notes.", []forge.ReviewComment{
		{Path: fakeFiles[0], Line: 5, Body: "on the new line 5"},
		{Path: fakeFiles[1], OldLine: 3, Body: "on the removed line 3"},
	})
	// A later push moved the lines: GitHub nulls line and keeps
	// original_line.
	b.fake.outdate(n)

	got, _, err := b.forge.Reviews(ctx, n, "")
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, forge.ReviewDismissed, got[0].State)
	require.Equal(t, forge.ReviewCommented, got[1].State)
	require.NotEmpty(t, got[1].CommitSHA)
	require.Equal(t, []forge.ReviewComment{
		{ID: got[1].Comments[0].ID, Author: "reviewer", Path: fakeFiles[0], Line: 5, Body: "on the new line 5"},
		{ID: got[1].Comments[1].ID, Author: "reviewer", Path: fakeFiles[1], OldLine: 3, Body: "on the removed line 3"},
	}, got[1].Comments)
}

func TestReviews_UnreadableCursorIsAnError(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	n := openForReview(t, b, "azolla/cursor")
	for _, c := range []forge.Cursor{"12", "x:1", "12:1,y", "-5:"} {
		_, _, err := b.forge.Reviews(context.Background(), n, c)
		require.ErrorContains(t, err, "cursor", "cursor %q", c)
	}
}
