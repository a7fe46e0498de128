package gitlab_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitlab/gitlabfake"
)

// A merge request's notes hold more than its conversation: GitLab's system
// notes (a push, a verdict) and a review's line comments (DiffNotes). They
// are not comments. A review's summary is a plain note: it is one.
func TestComments_LeaveOutSystemNotesAndLineComments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, n := opened(t)
	b.fake.Push("azolla/limited") // GitLab's "added 1 commit"
	require.NoError(t, b.fake.Review(n, gitlabfake.Reviewer, forge.ReviewChangesRequested, "Two things.",
		[]forge.ReviewComment{{Path: "README.md", Line: 1, Body: "On a line."}}))
	said := commentAs(t, b.fake, gitlabfake.Stranger, forge.Thread{Number: n, Pull: true}, "A question.")
	mr, _ := b.fake.MergeRequest(n)
	require.Equal(t, 5, mr.Notes, "the push, the line comment, the summary, the verdict, the question")

	got, err := b.forge.Comments(ctx, forge.Thread{Number: n, Pull: true}, time.Time{})
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "Two things.", got[0].Body)
	require.Equal(t, gitlabfake.Reviewer, got[0].Author)
	require.Equal(t, said, got[1].ID)
}

// The issues are read oldest created first, where an update while pages
// are read moves nothing, since their update time in whole seconds, every
// state; then sorted by update.
func TestIssues_ReadOldestCreatedFirstSortedByUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, gitlabfake.Options{})
	first := openIssue(t, b.fake, gitlabfake.Reviewer, "First", "body", nil, nil)
	second := openIssue(t, b.fake, gitlabfake.Reviewer, "Second", "body", nil, nil)
	third := openIssue(t, b.fake, gitlabfake.Reviewer, "Third", "body", nil, nil)
	commentAs(t, b.fake, gitlabfake.Stranger, forge.Thread{Number: first}, "bump")

	got, err := b.forge.Issues(ctx, time.Time{})
	require.NoError(t, err)
	require.Equal(t, []int{second, third, first}, numbers(got))

	since := got[1].UpdatedAt.Add(500 * time.Millisecond)
	got, err = b.forge.Issues(ctx, since)
	require.NoError(t, err)
	require.Equal(t, []int{third, first}, numbers(got), "at or after since, in whole seconds")

	var asked []string
	for _, r := range b.fake.Requests() {
		if r.Method != "GET" || !strings.HasSuffix(r.Path, "/issues") {
			continue
		}
		require.Equal(t, "created_at", r.Query.Get("order_by"))
		require.Equal(t, "asc", r.Query.Get("sort"))
		require.Empty(t, r.Query.Get("state"), "every state")
		asked = append(asked, r.Query.Get("updated_after"))
	}
	require.Equal(t, []string{"", "", since.Truncate(time.Second).UTC().Format(time.RFC3339)}, asked,
		"three issues on pages of two, then two")
}

func numbers(issues []forge.Issue) []int {
	out := make([]int, len(issues))
	for i, is := range issues {
		out[i] = is.Number
	}
	return out
}
