package gitlab_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitlab/gitlabfake"
)

func TestOpenOrAdopt_CreateRefusedWith409AdoptsTheWinner(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{})
	b.fake.Push("azolla/raced")
	// Between azolla's list (none open) and its create, a human opens one.
	var once sync.Once
	winner := 0
	b.fake.OnCreate(func() {
		once.Do(func() {
			n, err := b.fake.Open("azolla/raced", "Opened by hand meanwhile", gitlabfake.Maintainer)
			require.NoError(t, err)
			winner = n
		})
	})

	pr, created, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{
		Head: "azolla/raced", Base: "main", Title: "azolla's", Body: "azolla's"})
	require.NoError(t, err)
	require.False(t, created, "the create got 409; the open one is adopted")
	require.Equal(t, winner, pr.Number)
	require.Equal(t, "Opened by hand meanwhile", pr.Title)
	require.Equal(t, 1, b.fake.Count())

	var creates, lists int
	for _, r := range b.fake.Requests() {
		switch {
		case r.Method == "POST" && r.Path == "/api/v4/projects/azolla%2Fwidgets/merge_requests":
			creates++
		case r.Method == "GET" && r.Path == "/api/v4/projects/azolla%2Fwidgets/merge_requests":
			lists++
		}
	}
	require.Equal(t, 1, creates)
	require.Equal(t, 2, lists, "listed before the create and again after its 409")
}

func TestOpenOrAdopt_DraftLabelsAndReviewers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, gitlabfake.Options{Labels: []string{"azolla", "bug"}})
	b.fake.Push("azolla/draft")

	pr, created, err := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/draft", Base: "main",
		Title: "Add the widget", Body: "body", Draft: true, Labels: []string{"azolla", "bug"},
		Reviewers: []string{gitlabfake.Reviewer}})
	require.NoError(t, err)
	require.True(t, created)
	require.True(t, pr.Draft)
	require.Equal(t, "Add the widget", pr.Title, "the draft prefix is GitLab's marker, not the title")
	require.NotNil(t, pr.Mergeable)
	require.False(t, *pr.Mergeable, "a draft cannot be merged")

	mr, ok := b.fake.MergeRequest(pr.Number)
	require.True(t, ok)
	require.Equal(t, "Draft: Add the widget", mr.Title)
	require.Equal(t, []string{"azolla", "bug"}, mr.Labels)
	require.Equal(t, []string{gitlabfake.Reviewer}, mr.Reviewers)

	up, err := b.forge.Update(ctx, pr.Number, "Add the widget, round 2", "body 2")
	require.NoError(t, err)
	require.True(t, up.Draft, "renaming a draft leaves it a draft")
	require.Equal(t, "Add the widget, round 2", up.Title)
	mr, _ = b.fake.MergeRequest(pr.Number)
	require.Equal(t, "Draft: Add the widget, round 2", mr.Title)
}

func TestOpenOrAdopt_UnknownLabelIsRefusedBeforeCreating(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{Labels: []string{"bug", "bugfix-later"}})
	b.fake.Push("azolla/labels")
	_, _, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: "azolla/labels", Base: "main",
		Title: "t", Body: "b", Labels: []string{"bug", "bugs"}})
	require.ErrorContains(t, err, `"bugs"`)
	require.NotContains(t, err.Error(), `"bug",`)
	require.Zero(t, b.fake.Count(), "nothing created, so GitLab created no label")
}

func TestOpenOrAdopt_UnknownReviewerIsRefusedBeforeCreating(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{})
	b.fake.Push("azolla/reviewers")
	_, _, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: "azolla/reviewers", Base: "main",
		Title: "t", Body: "b", Reviewers: []string{"nobody-here"}})
	require.ErrorContains(t, err, "nobody-here")
	require.Zero(t, b.fake.Count())
}

func TestOpenOrAdopt_OpenFromTheHeadOntoAnotherBaseIsAnError(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{})
	b.fake.Push("release")
	b.fake.Push("azolla/elsewhere")
	_, _, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: "azolla/elsewhere", Base: "release",
		Title: "onto release", Body: "b"})
	require.NoError(t, err)
	_, _, err = b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: "azolla/elsewhere", Base: "main",
		Title: "onto main", Body: "b"})
	require.ErrorContains(t, err, "not onto main")
	require.Equal(t, 1, b.fake.Count())
}

func TestPullRequest_MergeableOnceGitLabHasChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, gitlabfake.Options{})
	b.fake.Push("azolla/check")
	pr, _, err := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/check", Base: "main", Title: "t", Body: "b"})
	require.NoError(t, err)
	require.Nil(t, pr.Mergeable, "checking: not known yet")
	require.Eventually(t, func() bool {
		got, err := b.forge.PullRequest(ctx, pr.Number)
		return err == nil && got.Mergeable != nil && *got.Mergeable
	}, eventually, tick)

	require.NoError(t, b.fake.Merge(pr.Number, gitlabfake.Maintainer))
	got, err := b.forge.PullRequest(ctx, pr.Number)
	require.NoError(t, err)
	require.Equal(t, forge.StateMerged, got.State)
	require.NotEmpty(t, got.MergeSHA)
	require.False(t, *got.Mergeable, "not_open")
}
