package gitlab_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitlab/gitlabfake"
)

// count is how many requests the fake answered with method and a path
// ending in suffix.
func count(fake *gitlabfake.Server, method, suffix string) int {
	n := 0
	for _, r := range fake.Requests() {
		if r.Method == method && strings.HasSuffix(r.Path, suffix) {
			n++
		}
	}
	return n
}

func TestReviews_ReadsEveryPageOfNotes(t *testing.T) {
	t.Parallel()
	b, n := opened(t) // pages of two
	var comments []forge.ReviewComment
	for i := range 7 {
		comments = append(comments, forge.ReviewComment{Path: "README.md", Line: i + 1, Body: fmt.Sprintf("c%d", i)})
	}
	require.NoError(t, b.fake.Review(n, gitlabfake.Reviewer, forge.ReviewChangesRequested, "Seven.", comments))
	mr, _ := b.fake.MergeRequest(n)
	require.Equal(t, 9, mr.Notes, "seven DiffNotes, the summary, the verdict")

	got, _, err := b.forge.Reviews(context.Background(), n, "")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Len(t, got[0].Comments, 7)
	require.Equal(t, 5, count(b.fake, "GET", "/notes"), "nine notes, two a page")
}

func TestChecks_ReadsEveryPageOfStatuses(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{})
	sha := b.fake.Push("azolla/statuses")
	for i := range 5 {
		require.NoError(t, b.fake.Status(sha, fmt.Sprintf("job-%d", i), "success", "", false))
	}
	c, err := b.forge.Checks(context.Background(), sha)
	require.NoError(t, err)
	require.Len(t, c.Checks, 5)
	require.Equal(t, 3, count(b.fake, "GET", "/statuses"))
}

func TestReviews_AzollasOwnNotesAreNoReviews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, n := opened(t)
	require.NoError(t, b.forge.Comment(ctx, n, "azolla started round 2."))
	b.fake.Push("azolla/limited") // "added 1 commit", by azolla
	got, cur, err := b.forge.Reviews(ctx, n, "")
	require.NoError(t, err)
	require.Empty(t, got)
	require.NotEmpty(t, cur, "the cursor moves past what was read")

	require.NoError(t, b.fake.Review(n, gitlabfake.Reviewer, forge.ReviewCommented, "Just a thought.", nil))
	got, _, err = b.forge.Reviews(ctx, n, cur)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, forge.ReviewCommented, got[0].State)
	require.Equal(t, gitlabfake.Reviewer, got[0].Author)
	require.Equal(t, "Just a thought.", got[0].Body)
}

func TestReviews_AWithdrawnApprovalIsDismissed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, n := opened(t)
	require.NoError(t, b.fake.Review(n, gitlabfake.Reviewer, forge.ReviewApproved, "", nil))
	require.NoError(t, b.fake.Review(n, gitlabfake.Maintainer, forge.ReviewCommented, "Wait, one thing.", nil))
	require.NoError(t, b.fake.Review(n, gitlabfake.Reviewer, forge.ReviewDismissed, "", nil))

	got, _, err := b.forge.Reviews(ctx, n, "")
	require.NoError(t, err)
	var states []string
	for _, r := range got {
		states = append(states, r.Author+":"+string(r.State))
	}
	require.Equal(t, []string{
		"reviewer:approved", "maintainer:commented", "reviewer:dismissed",
	}, states)
}

func TestReviews_ABadCursorIsAnError(t *testing.T) {
	t.Parallel()
	b, n := opened(t)
	_, _, err := b.forge.Reviews(context.Background(), n, "abc")
	require.ErrorContains(t, err, "cursor")
}

func TestChecks_GitLabStatuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status       string
		allowFailure bool
		want         forge.CheckState
	}{
		{"success", false, forge.ChecksSuccess},
		{"skipped", false, forge.ChecksSuccess},
		{"failed", false, forge.ChecksFailure},
		{"failed", true, forge.ChecksSuccess},
		{"canceled", false, forge.ChecksFailure},
		{"manual", false, forge.ChecksPending},
		{"manual", true, forge.ChecksSuccess},
		{"created", false, forge.ChecksPending},
		{"pending", false, forge.ChecksPending},
		{"running", false, forge.ChecksPending},
		{"waiting_for_resource", false, forge.ChecksPending},
	} {
		t.Run(fmt.Sprintf("%s/allow_failure=%v", tc.status, tc.allowFailure), func(t *testing.T) {
			t.Parallel()
			b := setup(t, gitlabfake.Options{})
			sha := b.fake.Push("azolla/ci")
			require.NoError(t, b.fake.Status(sha, "ci/job", tc.status, "", tc.allowFailure))
			c, err := b.forge.Checks(context.Background(), sha)
			require.NoError(t, err)
			require.Len(t, c.Checks, 1)
			require.Equal(t, tc.want, c.Checks[0].State)
			require.Equal(t, tc.want, c.State)
			require.NotEmpty(t, c.Checks[0].Description, "a CI job without a description is described by its status")
			require.NotEmpty(t, c.Checks[0].URL)
		})
	}
}
