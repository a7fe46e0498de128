package github_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/github"
)

func TestErrors_SentinelsByStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		token string
		call  func(f forge.Forge, n int) error
		want  error
	}{
		{name: "401 bad credentials", token: "ghp_RevokedLongAgo000000000000000000",
			call: func(f forge.Forge, n int) error { _, err := f.PullRequest(ctx, n); return err },
			want: forge.ErrUnauthorized},
		{name: "403 without the permission", token: readerToken,
			call: func(f forge.Forge, n int) error { _, err := f.Update(ctx, n, "title", "body"); return err },
			want: forge.ErrUnauthorized},
		{name: "404 unknown pull request", token: azollaToken,
			call: func(f forge.Forge, n int) error { _, err := f.PullRequest(ctx, n+1000); return err },
			want: forge.ErrNotFound},
		{name: "404 unknown commit", token: azollaToken,
			call: func(f forge.Forge, n int) error { _, err := f.Checks(ctx, strings.Repeat("ab", 20)); return err },
			want: forge.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "", func(o *github.Options) { o.Token = tc.token })
			b.fake.push("azolla/errors")
			n := b.fake.humanOpens("azolla/errors", "Errors")
			err := tc.call(b.forge, n)
			require.ErrorIs(t, err, tc.want)
			require.NotContains(t, err.Error(), tc.token)
		})
	}
}

// Every failure azolla can meet, and not one error string carries the
// token: go-github names the request's URL, and the token is never in it.
func TestErrors_NeverCarryTheToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, "", func(o *github.Options) { o.MaxWait = time.Second })
	b.fake.push("azolla/secret")
	n := b.fake.humanOpens("azolla/secret", "Secret")
	var errs []error
	collect := func(err error) {
		require.Error(t, err)
		errs = append(errs, err)
	}

	_, err := b.forge.PullRequest(ctx, n+1)
	collect(err)
	collect(b.forge.Comment(ctx, n+1, "nowhere"))
	_, _, err = b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/never-pushed", Base: fakeBase, Title: "x"})
	collect(err)
	b.fake.push("azolla/labelled")
	_, _, err = b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/labelled", Base: fakeBase, Title: "x",
		Labels: []string{"nope"}})
	collect(err)
	_, _, err = b.forge.Reviews(ctx, n, "not a cursor")
	collect(err)
	b.fake.failNext(primaryLimit(time.Hour))
	_, err = b.forge.Checks(ctx, "deadbeef")
	collect(err)
	b.fake.failNext(secondaryLimit(time.Hour))
	_, err = b.forge.Update(ctx, n, "t", "b")
	collect(err)

	// A forge that is not there: the transport's error names the URL.
	gone := httptest.NewServer(nil)
	gone.Close()
	f, err := github.New(github.Options{BaseURL: gone.URL + "/", Owner: fakeOwner, Repo: fakeRepo, Token: azollaToken})
	require.NoError(t, err)
	_, err = f.PullRequest(ctx, 1)
	collect(err)

	for _, err := range errs {
		require.NotContains(t, err.Error(), azollaToken)
		require.NotContains(t, err.Error(), "Bearer")
	}
}
