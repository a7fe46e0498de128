package forgetest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

// exerciseIssues is the part of the suite that work entering from the
// forge stands on: issues as people open them, and the conversations of
// issues and pull requests, where azolla answers.
func exerciseIssues(t *testing.T, newHarness func(t *testing.T) *Harness) {
	ctx := context.Background()

	t.Run("Issues_AStrangersIssueIsListedAndReadNotAPullRequest", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-14")
		h.Open(t, "azolla/conf-14", "A pull request, not an issue")
		n := h.OpenIssue(t, h.Stranger, "Widgets break on resize", "Steps:\n\n1. resize\n2. see it break",
			[]string{"bug"}, []string{h.Writer})

		got, err := h.Forge.Issues(ctx, time.Time{})
		require.NoError(t, err)
		require.Len(t, got, 1, "the pull request is not listed")
		is := got[0]
		require.Equal(t, n, is.Number)
		require.True(t, strings.HasPrefix(is.URL, "http"), "a page a human opens: %q", is.URL)
		require.True(t, strings.HasSuffix(is.URL, "/"+strconv.Itoa(n)), "the issue's own page: %q", is.URL)
		require.NotContains(t, is.URL, "/api/", "the web page, not the API's")
		require.Equal(t, "Widgets break on resize", is.Title)
		require.Equal(t, "Steps:\n\n1. resize\n2. see it break", is.Body)
		require.Equal(t, h.Stranger, is.Author)
		require.Equal(t, forge.IssueOpen, is.State)
		require.Equal(t, []string{"bug"}, is.Labels)
		require.Equal(t, []string{h.Writer}, is.Assignees)
		require.False(t, is.UpdatedAt.IsZero())

		one, err := h.Forge.Issue(ctx, n)
		require.NoError(t, err)
		require.Equal(t, is.Number, one.Number)
		require.Equal(t, is.URL, one.URL)
		require.Equal(t, is.Title, one.Title)
		require.Equal(t, is.Body, one.Body)
		require.Equal(t, is.Author, one.Author)
		require.Equal(t, is.State, one.State)
		require.Equal(t, is.Labels, one.Labels)
		require.Equal(t, is.Assignees, one.Assignees)
		require.True(t, is.UpdatedAt.Equal(one.UpdatedAt), "listed %s, read %s", is.UpdatedAt, one.UpdatedAt)
	})

	t.Run("Issue_APullRequestOrAnUnknownNumberIsNotFound", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-15")
		pr := h.Open(t, "azolla/conf-15", "A pull request")
		n := h.OpenIssue(t, h.Writer, "An issue", "body", nil, nil)
		got, err := h.Forge.Issue(ctx, pr)
		if err == nil {
			// GitLab numbers merge requests apart from issues: there the
			// pull request's number may be an issue's, never the pull
			// request itself.
			require.Equal(t, n, got.Number, "pull request #%d read as an issue", pr)
			require.Equal(t, "An issue", got.Title)
		} else {
			require.ErrorIs(t, err, forge.ErrNotFound)
		}
		_, err = h.Forge.Issue(ctx, 987654)
		require.ErrorIs(t, err, forge.ErrNotFound)
	})

	t.Run("Issues_SinceIsInclusiveAndClosedIssuesAreListed", func(t *testing.T) {
		h := newHarness(t)
		var opened []int
		for _, title := range []string{"First", "Second", "Third"} {
			opened = append(opened, h.OpenIssue(t, h.Writer, title, "body of "+title, nil, nil))
		}
		h.CloseIssue(t, opened[1])

		all, err := h.Forge.Issues(ctx, time.Time{})
		require.NoError(t, err)
		require.ElementsMatch(t, opened, numbers(all), "every issue, open and closed, whatever the page size")
		require.True(t, slices.IsSortedFunc(all, func(a, b forge.Issue) int { return a.UpdatedAt.Compare(b.UpdatedAt) }),
			"oldest update first")
		for _, is := range all {
			want := forge.IssueOpen
			if is.Number == opened[1] {
				want = forge.IssueClosed
			}
			require.Equal(t, want, is.State, "issue #%d", is.Number)
		}

		latest := all[len(all)-1].UpdatedAt
		from, err := h.Forge.Issues(ctx, latest)
		require.NoError(t, err)
		require.Contains(t, numbers(from), all[len(all)-1].Number, "since is inclusive")
		for _, is := range from {
			require.False(t, is.UpdatedAt.Before(latest), "issue #%d updated %s, before %s", is.Number, is.UpdatedAt, latest)
		}

		none, err := h.Forge.Issues(ctx, latest.Add(24*time.Hour))
		require.NoError(t, err)
		require.Empty(t, none, "nothing was updated after the latest update")
	})

	t.Run("Comments_EveryonesOnAnIssueOldestFirstAndAzollasEdited", func(t *testing.T) {
		h := newHarness(t)
		issue := forge.Thread{Number: h.OpenIssue(t, h.Stranger, "It breaks", "body", nil, nil)}
		writers := h.CommentAs(t, h.Writer, issue, "I can reproduce this.")
		strangers := h.CommentAs(t, h.Stranger, issue, "Here is a log.")
		mine, err := h.Forge.PostComment(ctx, issue, "azolla is on it.")
		require.NoError(t, err)
		require.NotEmpty(t, mine.ID)
		require.Equal(t, h.Self, mine.Author)
		require.Equal(t, "azolla is on it.", mine.Body)

		got, err := h.Forge.Comments(ctx, issue, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{writers, strangers, mine.ID}, ids(got), "oldest first, strangers' too")
		require.Equal(t, []string{h.Writer, h.Stranger, h.Self}, authors(got))
		require.Equal(t, []string{"I can reproduce this.", "Here is a log.", "azolla is on it."}, bodies(got))
		for _, c := range got {
			require.False(t, c.CreatedAt.IsZero())
			require.False(t, c.UpdatedAt.Before(c.CreatedAt))
		}

		require.NoError(t, h.Forge.EditComment(ctx, issue, mine.ID, "azolla opened a pull request."))
		got, err = h.Forge.Comments(ctx, issue, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{writers, strangers, mine.ID}, ids(got), "an edit keeps the comment's place and id")
		require.Equal(t, []string{"I can reproduce this.", "Here is a log.", "azolla opened a pull request."}, bodies(got))

		edited := got[2]
		from, err := h.Forge.Comments(ctx, issue, edited.UpdatedAt)
		require.NoError(t, err)
		require.Contains(t, ids(from), mine.ID, "since is inclusive, and counts edits")
		latest := slices.MaxFunc(got, func(a, b forge.Comment) int { return a.UpdatedAt.Compare(b.UpdatedAt) }).UpdatedAt
		none, err := h.Forge.Comments(ctx, issue, latest.Add(24*time.Hour))
		require.NoError(t, err)
		require.Empty(t, none)
	})

	t.Run("Comments_APullRequestsThreadIsItsOwn", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-16")
		pr, _, err := h.Forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/conf-16", Base: h.Base,
			Title: "Fix the resize", Body: "fix"})
		require.NoError(t, err)
		issue := forge.Thread{Number: h.OpenIssue(t, h.Stranger, "It breaks", "body", nil, nil)}
		h.CommentAs(t, h.Writer, issue, "On the issue.")
		pull := forge.Thread{Number: pr.Number, Pull: true}

		mine, err := h.Forge.PostComment(ctx, pull, "azolla started round 1.")
		require.NoError(t, err)
		require.Equal(t, h.Self, mine.Author)
		strangers := h.CommentAs(t, h.Stranger, pull, "Why this way?")
		got, err := h.Forge.Comments(ctx, pull, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{mine.ID, strangers}, ids(got), "the pull request's own conversation, nothing else")
		require.Equal(t, []string{h.Self, h.Stranger}, authors(got))
		require.Equal(t, []string{"azolla started round 1.", "Why this way?"}, bodies(got))

		require.NoError(t, h.Forge.EditComment(ctx, pull, mine.ID, "azolla finished round 1."))
		got, err = h.Forge.Comments(ctx, pull, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{"azolla finished round 1.", "Why this way?"}, bodies(got))
		onIssue, err := h.Forge.Comments(ctx, issue, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{"On the issue."}, bodies(onIssue))
	})

	t.Run("Comments_UnknownThreadsAndCommentsAreNotFound", func(t *testing.T) {
		h := newHarness(t)
		issue := forge.Thread{Number: h.OpenIssue(t, h.Writer, "Known", "body", nil, nil)}
		mine, err := h.Forge.PostComment(ctx, issue, "known")
		require.NoError(t, err)
		for _, nowhere := range []forge.Thread{{Number: 987654}, {Number: 987654, Pull: true}} {
			_, err := h.Forge.Comments(ctx, nowhere, time.Time{})
			require.ErrorIs(t, err, forge.ErrNotFound, "comments of %s", nowhere)
			_, err = h.Forge.PostComment(ctx, nowhere, "nowhere")
			require.ErrorIs(t, err, forge.ErrNotFound, "a comment on %s", nowhere)
		}
		unknown, err := strconv.Atoi(mine.ID)
		require.NoError(t, err, "a comment's id is decimal")
		err = h.Forge.EditComment(ctx, issue, strconv.Itoa(unknown+987654), "nothing")
		require.ErrorIs(t, err, forge.ErrNotFound)
		got, err := h.Forge.Comments(ctx, issue, time.Time{})
		require.NoError(t, err)
		require.Equal(t, []string{"known"}, bodies(got))
	})

	t.Run("LabelledBy_WhoLastAppliedALabelStillOn", func(t *testing.T) {
		h := newHarness(t)
		n := h.OpenIssue(t, h.Stranger, "Please triage", "body", nil, nil)
		user, at, err := h.Forge.LabelledBy(ctx, n, "triaged")
		require.NoError(t, err)
		require.Empty(t, user, "a label never applied")
		require.True(t, at.IsZero())

		opened, err := h.Forge.Issue(ctx, n) // the forge's clock, not ours: a fake keeps its own
		require.NoError(t, err)
		h.LabelIssue(t, h.Writer, n, "triaged")
		h.LabelIssue(t, h.Writer, n, "later")
		h.UnlabelIssue(t, h.Writer, n, "later")
		require.Eventually(t, func() bool {
			user, at, err = h.Forge.LabelledBy(ctx, n, "TRIAGED")
			return err == nil && user != ""
		}, eventually, tick, "the label's adding is in the issue's history; names compare without case")
		require.Equal(t, h.Writer, user)
		require.False(t, at.Before(opened.UpdatedAt.Truncate(time.Second)), "labelled at %s, opened %s", at, opened.UpdatedAt)

		user, at, err = h.Forge.LabelledBy(ctx, n, "later")
		require.NoError(t, err)
		require.Empty(t, user, "a label removed after it was added")
		require.True(t, at.IsZero())

		user, _, err = h.Forge.LabelledBy(ctx, n, "never")
		require.NoError(t, err)
		require.Empty(t, user)

		_, _, err = h.Forge.LabelledBy(ctx, 987654, "triaged")
		require.ErrorIs(t, err, forge.ErrNotFound)
	})
}

func numbers(issues []forge.Issue) []int {
	out := make([]int, len(issues))
	for i, is := range issues {
		out[i] = is.Number
	}
	return out
}

func ids(comments []forge.Comment) []string {
	out := make([]string, len(comments))
	for i, c := range comments {
		out[i] = c.ID
	}
	return out
}

func authors(comments []forge.Comment) []string {
	out := make([]string, len(comments))
	for i, c := range comments {
		out[i] = c.Author
	}
	return out
}

func bodies(comments []forge.Comment) []string {
	out := make([]string, len(comments))
	for i, c := range comments {
		out[i] = c.Body
	}
	return out
}
