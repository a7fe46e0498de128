package gitlab_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitlab"
	"github.com/azolla/azolla/internal/forge/gitlab/gitlabfake"
)

// everyCall calls every method of f once, on merge request n and commit
// sha, and returns the errors.
func everyCall(f forge.Forge, n int, sha string) map[string]error {
	ctx := context.Background()
	errs := map[string]error{}
	_, _, errs["OpenOrAdopt"] = f.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/x", Base: "main", Title: "t", Body: "b"})
	_, errs["Update"] = f.Update(ctx, n, "t", "b")
	errs["Comment"] = f.Comment(ctx, n, "c")
	_, errs["PullRequest"] = f.PullRequest(ctx, n)
	_, _, errs["Reviews"] = f.Reviews(ctx, n, "")
	_, errs["Checks"] = f.Checks(ctx, sha)
	return errs
}

func TestErrors_ARefusedTokenIsUnauthorized(t *testing.T) {
	t.Parallel()
	const wrong = "glpat-wrong-secret-0123456789"
	b, n := opened(t)
	sha := b.fake.Push("azolla/x")
	f, err := gitlab.New(gitlab.Options{BaseURL: b.fake.URL, Project: b.fake.Options().Project, Token: wrong})
	require.NoError(t, err)
	for call, err := range everyCall(f, n, sha) {
		require.ErrorIs(t, err, forge.ErrUnauthorized, call)
		require.NotContains(t, err.Error(), wrong, call)
	}
}

func TestErrors_NeverCarryTheToken(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{Labels: []string{"bug"}})
	token := b.fake.Options().Token
	ctx := context.Background()
	var errs []error
	for _, err := range everyCall(b.forge, 404404, strings.Repeat("0", 40)) {
		errs = append(errs, err)
	}

	b.fake.Push("azolla/one")
	b.fake.Push("azolla/two")
	_, _, err := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/one", Base: "azolla/two", Title: "t", Body: "b"})
	require.NoError(t, err)
	_, _, err = b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/one", Base: "main", Title: "t", Body: "b"})
	errs = append(errs, err) // 409, open onto another base
	_, _, err = b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/two", Base: "main", Title: "t", Body: "b",
		Labels: []string{"nope"}, Reviewers: []string{"nobody"}})
	errs = append(errs, err)
	_, _, err = b.forge.Reviews(ctx, 1, "not-a-cursor")
	errs = append(errs, err)
	b.fake.Throttle(gitlabfake.Limit{Requests: 1, RetryAfter: time.Hour})
	_, err = b.forge.PullRequest(ctx, 1)
	errs = append(errs, err)

	for _, err := range errs {
		require.Error(t, err)
		require.NotContains(t, err.Error(), token)
	}
}

func TestErrors_NotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, n := opened(t)
	_, err := b.forge.Checks(ctx, strings.Repeat("a", 40))
	require.ErrorIs(t, err, forge.ErrNotFound, "a commit GitLab does not have")
	_, _, err = b.forge.Reviews(ctx, 404404, "")
	require.ErrorIs(t, err, forge.ErrNotFound)
	_, err = b.forge.Update(ctx, 404404, "t", "b")
	require.ErrorIs(t, err, forge.ErrNotFound)

	other, err := gitlab.New(gitlab.Options{BaseURL: b.fake.URL, Project: "azolla/elsewhere", Token: b.fake.Options().Token})
	require.NoError(t, err)
	_, err = other.PullRequest(ctx, n)
	require.ErrorIs(t, err, forge.ErrNotFound, "a project GitLab does not have")
}

func TestProject_ASubgroupPathIsURLEncoded(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{Project: "azolla-org/platform/web.app"})
	b.fake.Push("azolla/encoded")
	pr, _, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: "azolla/encoded", Base: "main",
		Title: "t", Body: "b"})
	require.NoError(t, err)
	require.Contains(t, pr.URL, "/azolla-org/platform/web.app/-/merge_requests/")
	for _, r := range b.fake.Requests() {
		if r.Path == "/api/v4/user" {
			continue
		}
		require.True(t, strings.HasPrefix(r.Path, "/api/v4/projects/azolla-org%2Fplatform%2Fweb%2Eapp/"), r.Path)
	}
}
