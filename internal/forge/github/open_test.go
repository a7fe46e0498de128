package github_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/github"
)

const pullsPath = "/repos/" + fakeOwner + "/" + fakeRepo + "/pulls"

func TestOpenOrAdopt_CreateRefusedAsAlreadyExistsAdoptsTheWinner(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	b.fake.push("azolla/race")
	// Between azolla's list (none open) and its create, someone else opens
	// the pull request: the create gets GitHub's 422.
	var winner atomic.Int64
	b.fake.onRequest(func(r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == pullsPath && winner.Load() == 0 {
			winner.Store(int64(b.fake.humanOpens("azolla/race", "Won the race")))
		}
	})

	pr, created, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: "azolla/race",
		Base: fakeBase, Title: "Lost the race", Body: "body", Labels: []string{"azolla"}})
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, int(winner.Load()), pr.Number)
	require.Equal(t, "Won the race", pr.Title)
	require.Equal(t, 1, b.fake.pullCount())
	require.Len(t, b.fake.requests("POST "+pullsPath), 1)
	require.Len(t, b.fake.requests("GET "+pullsPath+"?"), 2, "listed, refused, listed again")
	require.Empty(t, b.fake.labelsOf(pr.Number), "the adopted pull request is not changed")
}

func TestOpenOrAdopt_DraftLabelsAndReviewersOnCreate(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	b.fake.push("azolla/decorated")
	pr, created, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: "azolla/decorated",
		Base: fakeBase, Title: "Decorated", Body: "body", Draft: true,
		Labels: []string{"azolla", "needs-review"}, Reviewers: []string{"reviewer"}})
	require.NoError(t, err)
	require.True(t, created)
	require.True(t, pr.Draft)
	require.Equal(t, []string{"azolla", "needs-review"}, b.fake.labelsOf(pr.Number))
	require.Equal(t, []string{"reviewer"}, b.fake.reviewersOf(pr.Number))
}

func TestOpenOrAdopt_UnknownLabelsAndStrangersAreRefusedBeforeCreating(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	b.fake.push("azolla/typo")
	_, _, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: "azolla/typo",
		Base: fakeBase, Title: "Typo", Body: "body",
		Labels: []string{"azolla", "azola"}, Reviewers: []string{"reviewer", "stranger"}})
	require.Error(t, err)
	require.ErrorContains(t, err, `"azola"`)
	require.ErrorContains(t, err, `"stranger"`)
	require.NotContains(t, err.Error(), `"reviewer"`)
	require.Zero(t, b.fake.pullCount(), "nothing is opened")
	require.Empty(t, b.fake.requests("POST "), "nothing is written, so no label is created")
}

func TestNew_RefusesIncompleteOptions(t *testing.T) {
	t.Parallel()
	for name, o := range map[string]github.Options{
		"no owner":       {Repo: "r", Token: "t"},
		"no repository":  {Owner: "o", Token: "t"},
		"no token":       {Owner: "o", Repo: "r"},
		"page too large": {Owner: "o", Repo: "r", Token: "t", PageSize: 101},
		"bad base URL":   {Owner: "o", Repo: "r", Token: "t", BaseURL: "http://[::1"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := github.New(o)
			require.Error(t, err)
		})
	}
}
