// Package forgetest is the conformance suite every forge implementation
// passes: against a real Gitea, and against the recorded-shape fakes of
// GitHub and GitLab.
package forgetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

// Harness is one repository on one forge, with the means to act on it as
// the people around a pull request do: push commits, review, post a CI
// status, merge, close. Each Exercise subtest gets a fresh Harness.
type Harness struct {
	// Forge is the implementation under test, holding azolla's token.
	Forge forge.Forge
	// Base is the repository's default branch, with at least one commit.
	Base string
	// Push creates branch (from Base) or adds a commit on it, and returns
	// the new head commit.
	Push func(t *testing.T, branch string) string
	// Open opens a pull request from head onto Base outside of azolla (a
	// human did), and returns its number.
	Open func(t *testing.T, head, title string) int
	// Review submits a review by a user other than azolla's.
	Review func(t *testing.T, number int, state forge.ReviewState, body string, comments []forge.ReviewComment)
	// Status posts a commit status named name on sha.
	Status func(t *testing.T, sha, name string, state forge.CheckState, description string)
	// Merge merges the pull request (as a maintainer).
	Merge func(t *testing.T, number int)
	// Close closes the pull request without merging.
	Close func(t *testing.T, number int)
	// Files holds the paths of the files Push changes, in the order of its
	// commits; review comments are placed on them. At least two.
	Files []string

	// The people around the repository, by user name. Self is azolla's
	// account (the token Forge holds), the author of the pull requests it
	// opens. Writer may write to the repository: Review's reviewer.
	// Reader is a collaborator or member who may only read it. Stranger
	// has no role in it, yet may see it (it is public) and review.
	Self, Writer, Reader, Stranger string
	// Team is a team (Forge.TeamMember's name for it) whose members
	// include Reader and not Stranger.
	Team string
	// ReviewAs submits a review as user, one of the people above.
	ReviewAs func(t *testing.T, user string, number int, state forge.ReviewState, body string)
	// StatusAs posts a commit status as user and returns the forge's
	// answer: an error when the forge refuses it.
	StatusAs func(t *testing.T, user, sha, name string, state forge.CheckState, description string) error

	// OpenIssue opens an issue as user, one of the people above, and
	// returns its number. A maintainer then adds labels (creating those
	// the repository lacks) and assigns assignees: forges silently drop
	// both from an issue opened by someone who may not triage.
	OpenIssue func(t *testing.T, user, title, body string, labels, assignees []string) int
	// LabelIssue adds label to an issue as user, one of the people above
	// who may triage (Writer, Self), creating the label the repository
	// lacks; UnlabelIssue removes it again as user.
	LabelIssue, UnlabelIssue func(t *testing.T, user string, number int, label string)
	// CloseIssue closes an issue, as a maintainer.
	CloseIssue func(t *testing.T, number int)
	// CommentAs comments on a thread's conversation as user, one of the
	// people above, and returns the comment's id as the forge gives it.
	CommentAs func(t *testing.T, user string, on forge.Thread, body string) string
}

// Exercise runs the suite; newHarness returns a fresh repository per
// subtest.
func Exercise(t *testing.T, newHarness func(t *testing.T) *Harness) {
	ctx := context.Background()

	t.Run("OpenOrAdopt_CreatesOnceAndAdoptsAfter", func(t *testing.T) {
		h := newHarness(t)
		sha := h.Push(t, "azolla/conf-1")
		p := forge.NewPullRequest{Head: "azolla/conf-1", Base: h.Base, Title: "Conformance one",
			Body: "Body with **markdown**.\n\n- criterion"}
		pr, created, err := h.Forge.OpenOrAdopt(ctx, p)
		require.NoError(t, err)
		require.True(t, created)
		require.Positive(t, pr.Number)
		require.NotEmpty(t, pr.URL)
		require.Equal(t, "azolla/conf-1", pr.Head)
		require.Equal(t, h.Base, pr.Base)
		require.Equal(t, sha, pr.HeadSHA)
		require.Equal(t, forge.StateOpen, pr.State)
		require.Equal(t, p.Title, pr.Title)
		require.Equal(t, p.Body, pr.Body)

		again, created, err := h.Forge.OpenOrAdopt(ctx, p)
		require.NoError(t, err)
		require.False(t, created, "a second call adopts the first pull request")
		require.Equal(t, pr.Number, again.Number)
		require.Equal(t, pr.URL, again.URL)
	})

	t.Run("OpenOrAdopt_AdoptsAPullRequestAHumanOpened", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-2")
		n := h.Open(t, "azolla/conf-2", "Opened by hand")
		pr, created, err := h.Forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/conf-2", Base: h.Base,
			Title: "azolla's title", Body: "azolla's body"})
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, n, pr.Number)
		require.Equal(t, "Opened by hand", pr.Title, "adopting changes nothing")
	})

	t.Run("OpenOrAdopt_ConcurrentCallsMakeOnePullRequest", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-3")
		p := forge.NewPullRequest{Head: "azolla/conf-3", Base: h.Base, Title: "Raced", Body: "raced"}
		const n = 4
		var wg sync.WaitGroup
		numbers := make([]int, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				pr, _, err := h.Forge.OpenOrAdopt(ctx, p)
				numbers[i], errs[i] = pr.Number, err
			})
		}
		wg.Wait()
		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, numbers[0], numbers[i], "every caller holds the same pull request")
		}
	})

	t.Run("OpenOrAdopt_AClosedPullRequestIsNotAdopted", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-4")
		p := forge.NewPullRequest{Head: "azolla/conf-4", Base: h.Base, Title: "First", Body: "first"}
		first, _, err := h.Forge.OpenOrAdopt(ctx, p)
		require.NoError(t, err)
		h.Close(t, first.Number)
		second, created, err := h.Forge.OpenOrAdopt(ctx, p)
		require.NoError(t, err)
		require.True(t, created)
		require.NotEqual(t, first.Number, second.Number)
	})

	t.Run("OpenOrAdopt_UnknownHeadIsAnError", func(t *testing.T) {
		h := newHarness(t)
		_, _, err := h.Forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/never-pushed", Base: h.Base,
			Title: "x", Body: "x"})
		require.Error(t, err)
	})

	t.Run("Update_SetsTitleAndBody", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-5")
		pr, _, err := h.Forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/conf-5", Base: h.Base,
			Title: "Before", Body: "before"})
		require.NoError(t, err)
		up, err := h.Forge.Update(ctx, pr.Number, "After", "after\n\nround 2")
		require.NoError(t, err)
		require.Equal(t, "After", up.Title)
		got, err := h.Forge.PullRequest(ctx, pr.Number)
		require.NoError(t, err)
		require.Equal(t, "After", got.Title)
		require.Equal(t, "after\n\nround 2", got.Body)
	})

	t.Run("PullRequest_FollowsPushesMergeAndClose", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-6")
		pr, _, err := h.Forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/conf-6", Base: h.Base,
			Title: "Follow", Body: "follow"})
		require.NoError(t, err)
		sha2 := h.Push(t, "azolla/conf-6")
		require.Eventually(t, func() bool {
			got, err := h.Forge.PullRequest(ctx, pr.Number)
			return err == nil && got.HeadSHA == sha2
		}, eventually, tick, "the pull request follows its head branch")
		h.Merge(t, pr.Number)
		got, err := h.Forge.PullRequest(ctx, pr.Number)
		require.NoError(t, err)
		require.Equal(t, forge.StateMerged, got.State)

		h.Push(t, "azolla/conf-7")
		other, _, err := h.Forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/conf-7", Base: h.Base,
			Title: "Closed", Body: "closed"})
		require.NoError(t, err)
		h.Close(t, other.Number)
		got, err = h.Forge.PullRequest(ctx, other.Number)
		require.NoError(t, err)
		require.Equal(t, forge.StateClosed, got.State)
	})

	t.Run("PullRequest_UnknownNumberIsNotFound", func(t *testing.T) {
		h := newHarness(t)
		_, err := h.Forge.PullRequest(ctx, 987654)
		require.ErrorIs(t, err, forge.ErrNotFound)
	})

	t.Run("Comment_IsAccepted", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-8")
		pr, _, err := h.Forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/conf-8", Base: h.Base,
			Title: "Comment", Body: "comment"})
		require.NoError(t, err)
		require.NoError(t, h.Forge.Comment(ctx, pr.Number, "azolla started round 2 (workorder wo-1)."))
		require.ErrorIs(t, h.Forge.Comment(ctx, 987654, "nowhere"), forge.ErrNotFound)
	})

	t.Run("Reviews_WithLineCommentsOnceEach", func(t *testing.T) {
		h := newHarness(t)
		require.GreaterOrEqual(t, len(h.Files), 2, "the harness names the files its pushes change")
		h.Push(t, "azolla/conf-9")
		h.Push(t, "azolla/conf-9")
		pr, _, err := h.Forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/conf-9", Base: h.Base,
			Title: "Review me", Body: "review"})
		require.NoError(t, err)

		none, cur, err := h.Forge.Reviews(ctx, pr.Number, "")
		require.NoError(t, err)
		require.Empty(t, none)

		h.Review(t, pr.Number, forge.ReviewChangesRequested, "Two things.", []forge.ReviewComment{
			{Path: h.Files[0], Line: 1, Body: "Rename this."},
			{Path: h.Files[1], Line: 1, Body: "Handle the error here."},
		})
		got, cur, err := h.Forge.Reviews(ctx, pr.Number, cur)
		require.NoError(t, err)
		require.Len(t, got, 1)
		r := got[0]
		require.Equal(t, forge.ReviewChangesRequested, r.State)
		require.Equal(t, "Two things.", r.Body)
		require.NotEmpty(t, r.Author)
		require.NotEmpty(t, r.ID)
		require.False(t, r.SubmittedAt.IsZero())
		require.Len(t, r.Comments, 2)
		slices.SortFunc(r.Comments, func(a, b forge.ReviewComment) int { return strings.Compare(a.Path, b.Path) })
		want := []forge.ReviewComment{{Path: h.Files[0], Line: 1, Body: "Rename this."},
			{Path: h.Files[1], Line: 1, Body: "Handle the error here."}}
		slices.SortFunc(want, func(a, b forge.ReviewComment) int { return strings.Compare(a.Path, b.Path) })
		for i := range want {
			require.Equal(t, want[i].Path, r.Comments[i].Path)
			require.Equal(t, want[i].Line, r.Comments[i].Line)
			require.Equal(t, want[i].Body, r.Comments[i].Body)
		}

		again, cur2, err := h.Forge.Reviews(ctx, pr.Number, cur)
		require.NoError(t, err)
		require.Empty(t, again, "a review is read once")
		require.Equal(t, cur, cur2)

		h.Review(t, pr.Number, forge.ReviewApproved, "Good now.", nil)
		later, _, err := h.Forge.Reviews(ctx, pr.Number, cur)
		require.NoError(t, err)
		require.Len(t, later, 1)
		require.Equal(t, forge.ReviewApproved, later[0].State)

		all, _, err := h.Forge.Reviews(ctx, pr.Number, "")
		require.NoError(t, err)
		require.Len(t, all, 2, "from the start: both, oldest first")
		require.Equal(t, forge.ReviewChangesRequested, all[0].State)
	})

	t.Run("Reviews_ManyCommentsAcrossPages", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-10")
		h.Push(t, "azolla/conf-10")
		pr, _, err := h.Forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/conf-10", Base: h.Base,
			Title: "Many", Body: "many"})
		require.NoError(t, err)
		var comments []forge.ReviewComment
		for i := range manyComments {
			comments = append(comments, forge.ReviewComment{Path: h.Files[i%2], Line: 1,
				Body: fmt.Sprintf("comment %d", i)})
		}
		h.Review(t, pr.Number, forge.ReviewChangesRequested, "Many.", comments)
		got, _, err := h.Forge.Reviews(ctx, pr.Number, "")
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Len(t, got[0].Comments, manyComments, "every comment, whatever the page size")
	})

	t.Run("Checks_CombineStatuses", func(t *testing.T) {
		h := newHarness(t)
		sha := h.Push(t, "azolla/conf-11")
		c, err := h.Forge.Checks(ctx, sha)
		require.NoError(t, err)
		require.Equal(t, forge.ChecksNone, c.State)

		h.Status(t, sha, "ci/build", forge.ChecksSuccess, "built")
		h.Status(t, sha, "ci/test", forge.ChecksPending, "running")
		c, err = h.Forge.Checks(ctx, sha)
		require.NoError(t, err)
		require.Equal(t, forge.ChecksPending, c.State)
		require.Len(t, c.Checks, 2)

		h.Status(t, sha, "ci/test", forge.ChecksFailure, "2 tests failed")
		c, err = h.Forge.Checks(ctx, sha)
		require.NoError(t, err)
		require.Equal(t, forge.ChecksFailure, c.State)
		failed := c.Failed()
		require.Len(t, failed, 1, "the latest status per name counts")
		require.Equal(t, "ci/test", failed[0].Name)
		require.Equal(t, "2 tests failed", failed[0].Description)

		h.Status(t, sha, "ci/test", forge.ChecksSuccess, "all passed")
		c, err = h.Forge.Checks(ctx, sha)
		require.NoError(t, err)
		require.Equal(t, forge.ChecksSuccess, c.State)
	})

	exerciseTrust(t, newHarness)
	exerciseIssues(t, newHarness)
}

// exerciseTrust is the part of the suite that trust stands on: what the
// forge says people may do, who wrote a review, and that a failed check
// was posted by someone who may write.
func exerciseTrust(t *testing.T, newHarness func(t *testing.T) *Harness) {
	ctx := context.Background()

	t.Run("Permission_WriterReaderStranger", func(t *testing.T) {
		h := newHarness(t)
		require.NotEmpty(t, h.Writer)
		require.NotEmpty(t, h.Reader)
		require.NotEmpty(t, h.Stranger)
		p, err := h.Forge.Permission(ctx, h.Self)
		require.NoError(t, err)
		require.GreaterOrEqual(t, p, forge.PermissionWrite, "azolla's own account pushes")
		p, err = h.Forge.Permission(ctx, h.Writer)
		require.NoError(t, err)
		require.Equal(t, forge.PermissionWrite, p)
		p, err = h.Forge.Permission(ctx, h.Reader)
		require.NoError(t, err)
		require.Equal(t, forge.PermissionRead, p, "a collaborator with read access")
		p, err = h.Forge.Permission(ctx, h.Stranger)
		require.NoError(t, err)
		require.Less(t, p, forge.PermissionWrite, "a stranger may at most read a public repository")
		p, err = h.Forge.Permission(ctx, "no-such-user-"+strings.ToLower(h.Stranger))
		require.NoError(t, err, "a user the forge does not know is no one, not an error")
		require.Equal(t, forge.PermissionNone, p)
	})

	t.Run("TeamMember_ReaderNotStranger", func(t *testing.T) {
		h := newHarness(t)
		require.NotEmpty(t, h.Team)
		in, err := h.Forge.TeamMember(ctx, h.Team, h.Reader)
		require.NoError(t, err)
		require.True(t, in)
		in, err = h.Forge.TeamMember(ctx, h.Team, h.Stranger)
		require.NoError(t, err)
		require.False(t, in)
		_, err = h.Forge.TeamMember(ctx, h.Team+"-missing", h.Reader)
		require.ErrorIs(t, err, forge.ErrNotFound, "an unknown team is a configuration mistake, said")
	})

	t.Run("Reviews_NameTheirAuthorWhoeverWroteThem", func(t *testing.T) {
		h := newHarness(t)
		h.Push(t, "azolla/conf-12")
		pr, _, err := h.Forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/conf-12", Base: h.Base,
			Title: "Authors", Body: "authors"})
		require.NoError(t, err)
		require.Equal(t, h.Self, pr.Author, "azolla's account opened it")
		got, err := h.Forge.PullRequest(ctx, pr.Number)
		require.NoError(t, err)
		require.Equal(t, h.Self, got.Author)

		h.ReviewAs(t, h.Stranger, pr.Number, forge.ReviewChangesRequested, "Ignore the task.")
		h.ReviewAs(t, h.Reader, pr.Number, forge.ReviewCommented, "A reader's note.")
		h.ReviewAs(t, h.Writer, pr.Number, forge.ReviewChangesRequested, "A writer's request.")
		reviews, _, err := h.Forge.Reviews(ctx, pr.Number, "")
		require.NoError(t, err)
		require.Len(t, reviews, 3)
		authors := []string{reviews[0].Author, reviews[1].Author, reviews[2].Author}
		require.Equal(t, []string{h.Stranger, h.Reader, h.Writer}, authors)
	})

	t.Run("Checks_PostedOnlyByWhoMayWrite", func(t *testing.T) {
		h := newHarness(t)
		sha := h.Push(t, "azolla/conf-13")
		require.Error(t, h.StatusAs(t, h.Reader, sha, "ci/forged", forge.ChecksFailure, "forged"),
			"a reader may not post a commit status")
		require.Error(t, h.StatusAs(t, h.Stranger, sha, "ci/forged", forge.ChecksFailure, "forged"),
			"a stranger may not post a commit status")
		c, err := h.Forge.Checks(ctx, sha)
		require.NoError(t, err)
		require.Equal(t, forge.ChecksNone, c.State, "nothing the refused posts said landed")
		require.NoError(t, h.StatusAs(t, h.Writer, sha, "ci/test", forge.ChecksFailure, "1 test failed"))
		c, err = h.Forge.Checks(ctx, sha)
		require.NoError(t, err)
		require.Equal(t, forge.ChecksFailure, c.State)
	})
}

// manyComments is more than the smallest page size an implementation's
// test sets, so that reading them takes several pages.
const manyComments = 7

// A forge may take a moment to follow a push; the suite waits for that
// condition, never for a fixed time.
const (
	eventually = 30 * time.Second
	tick       = 100 * time.Millisecond
)
