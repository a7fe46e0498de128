package github_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

func TestChecks_CheckRunStates(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	for _, tc := range []struct {
		status, conclusion string
		want               forge.CheckState
	}{
		{"queued", "", forge.ChecksPending},
		{"in_progress", "", forge.ChecksPending},
		{"waiting", "", forge.ChecksPending},
		{"completed", "success", forge.ChecksSuccess},
		{"completed", "neutral", forge.ChecksSuccess},
		{"completed", "skipped", forge.ChecksSuccess},
		{"completed", "failure", forge.ChecksFailure},
		{"completed", "timed_out", forge.ChecksFailure},
		{"completed", "cancelled", forge.ChecksFailure},
		{"completed", "action_required", forge.ChecksFailure},
		{"completed", "stale", forge.ChecksFailure},
		{"completed", "a-conclusion-yet-unknown", forge.ChecksFailure},
	} {
		t.Run(tc.status+"/"+tc.conclusion, func(t *testing.T) {
			sha := b.fake.push("azolla/run-" + tc.status + "-" + tc.conclusion)
			b.fake.addCheckRun(sha, "build", tc.status, tc.conclusion, "")
			c, err := b.forge.Checks(context.Background(), sha)
			require.NoError(t, err)
			require.Equal(t, sha, c.SHA)
			require.Len(t, c.Checks, 1)
			require.Equal(t, tc.want, c.Checks[0].State)
			require.Equal(t, tc.want, c.State)
			require.Equal(t, "https://ci.example/build", c.Checks[0].URL)
		})
	}
}

func TestChecks_StatusesAndRunsTogetherAcrossPages(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	sha := b.fake.push("azolla/many-checks")
	b.postStatus(t, sha, "ci/lint", forge.ChecksSuccess, "clean")
	b.postStatus(t, sha, "ci/test", forge.ChecksFailure, "1 failed")
	b.postStatus(t, sha, "ci/vet", forge.ChecksSuccess, "clean")
	b.postStatus(t, sha, "ci/test", forge.ChecksSuccess, "all passed")
	b.fake.addCheckRun(sha, "e2e", "completed", "failure", "3 scenarios failed")
	b.fake.addCheckRun(sha, "e2e", "completed", "success", "all scenarios passed")
	b.fake.addCheckRun(sha, "docs", "completed", "skipped", "")

	c, err := b.forge.Checks(context.Background(), sha)
	require.NoError(t, err)
	require.Equal(t, forge.ChecksSuccess, c.State, "the latest of each name counts")
	names := map[string]forge.Check{}
	for _, k := range c.Checks {
		names[k.Name] = k
	}
	require.Len(t, names, 5)
	require.Equal(t, "all passed", names["ci/test"].Description)
	require.Equal(t, "all scenarios passed", names["e2e"].Description)
	require.Equal(t, "skipped", names["docs"].Description, "a run without a title says its conclusion")
	require.Equal(t, "https://ci.example/ci/lint", names["ci/lint"].URL)
	require.Len(t, b.fake.requests("GET /repos/"+fakeOwner+"/"+fakeRepo+"/commits/"+sha+"/status"), 2,
		"three contexts, two to a page")
}

func TestChecks_NoneOnACommitWithout(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	sha := b.fake.push("azolla/bare")
	c, err := b.forge.Checks(context.Background(), sha)
	require.NoError(t, err)
	require.Equal(t, forge.ChecksNone, c.State)
	require.Empty(t, c.Checks)
}
