package github_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// GitHub documents since as "after"; the seam's since is at or after. The
// Forge asks a second earlier, reads the list oldest created first (an
// update moves nothing while pages are read), and keeps what is at or
// after since, by update.
func TestIssues_SinceIsAtOrAfterWhateverGitHubCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, "")
	maintainer := b.client(t, maintainerToken)
	since := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	before := openIssue(t, maintainer, maintainer, "A second before", "body", nil, nil)
	at := openIssue(t, maintainer, maintainer, "At since", "body", nil, nil)
	after := openIssue(t, maintainer, maintainer, "A minute after", "body", nil, nil)
	b.fake.setUpdated(after, since.Add(time.Minute))
	b.fake.setUpdated(at, since)
	b.fake.setUpdated(before, since.Add(-time.Second))

	got, err := b.forge.Issues(ctx, since.Add(400*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, []int{at, after}, numbers(got), "at or after since, in whole seconds, oldest update first")

	listed := b.fake.requests("GET /repos/" + fakeOwner + "/" + fakeRepo + "/issues?")
	require.NotEmpty(t, listed)
	q, err := url.ParseQuery(listed[0][strings.IndexByte(listed[0], '?')+1:])
	require.NoError(t, err)
	require.Equal(t, "2026-05-04T09:59:59Z", q.Get("since"), "a second earlier")
	require.Equal(t, "all", q.Get("state"))
	require.Equal(t, "created", q.Get("sort"))
	require.Equal(t, "asc", q.Get("direction"))
}

func TestComments_SinceIsAtOrAfterWhateverGitHubCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, "")
	maintainer := b.client(t, maintainerToken)
	n := openIssue(t, maintainer, maintainer, "Talk", "body", nil, nil)
	mine, err := b.forge.PostComment(ctx, thread(n), "azolla was here")
	require.NoError(t, err)

	got, err := b.forge.Comments(ctx, thread(n), mine.UpdatedAt)
	require.NoError(t, err)
	require.Equal(t, []string{mine.ID}, ids(got), "at since is kept")
	got, err = b.forge.Comments(ctx, thread(n), mine.UpdatedAt.Add(time.Second))
	require.NoError(t, err)
	require.Empty(t, got, "the second before since, which GitHub was asked for, is dropped")
}
