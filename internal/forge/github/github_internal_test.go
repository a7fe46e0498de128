package github

import (
	"testing"
	"time"

	gh "github.com/google/go-github/v89/github"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

// A listed pull request ("pull request simple") carries no merged field:
// merged_at alone says it was merged.
func TestPullRequest_MergedAtAloneMeansMerged(t *testing.T) {
	t.Parallel()
	closed, sha := "closed", "4f1c0ffee"
	got := pullRequest(&gh.PullRequest{State: &closed, MergedAt: &gh.Timestamp{Time: time.Unix(1_800_000_000, 0)},
		MergeCommitSHA: &sha})
	require.Equal(t, forge.StateMerged, got.State)
	require.Equal(t, sha, got.MergeSHA)
	got = pullRequest(&gh.PullRequest{State: &closed, MergeCommitSHA: &sha})
	require.Equal(t, forge.StateClosed, got.State)
	require.Empty(t, got.MergeSHA, "an unmerged pull request's merge commit is GitHub's test merge")
}
