package github_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

// GitHub computes mergeability in the background: null first, then known.
// The merge commit is reported once merged, never the test merge of an
// open pull request.
func TestPullRequest_MergeableAsGivenAndMergeSHAOnceMerged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, "")
	b.fake.push("azolla/mergeable")
	n := b.fake.humanOpens("azolla/mergeable", "Mergeable")

	first, err := b.forge.PullRequest(ctx, n)
	require.NoError(t, err)
	require.Nil(t, first.Mergeable)
	require.Empty(t, first.MergeSHA)
	second, err := b.forge.PullRequest(ctx, n)
	require.NoError(t, err)
	require.NotNil(t, second.Mergeable)
	require.True(t, *second.Mergeable)

	_, _, err = b.client(t, maintainerToken).PullRequests.Merge(ctx, fakeOwner, fakeRepo, n, "", nil)
	require.NoError(t, err)
	merged, err := b.forge.PullRequest(ctx, n)
	require.NoError(t, err)
	require.Equal(t, forge.StateMerged, merged.State)
	require.NotEmpty(t, merged.MergeSHA)
	require.NotEqual(t, first.HeadSHA, merged.MergeSHA)
}
