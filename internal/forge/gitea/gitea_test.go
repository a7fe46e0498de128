package gitea_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/forgetest"
	"github.com/azolla/azolla/internal/forge/gitea"
	"github.com/azolla/azolla/internal/forge/giteatest"
	"github.com/azolla/azolla/workers/intake/intaketest"
)

// The tests share one Gitea (giteatest.Shared), each with a repository of
// its own. TestMain builds Gitea first when it is missing, and stops the
// server at the end.
func TestMain(m *testing.M) {
	giteatest.Prepare()
	code := m.Run()
	giteatest.StopShared()
	os.Exit(code)
}

// pageSize is small so that every listing takes several pages.
const pageSize = 2

// testBundle is one test's repository and the forge under test on it.
type testBundle struct {
	server *giteatest.Server
	repo   *giteatest.Repo
	forge  *gitea.Forge
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	s := giteatest.Shared(t)
	r := giteatest.NewRepo(t, s)
	return &testBundle{server: s, repo: r, forge: newForge(t, s.URL, r, s.Admin.Token, nil)}
}

func newForge(t *testing.T, baseURL string, r *giteatest.Repo, token string, client *http.Client) *gitea.Forge {
	t.Helper()
	f, err := gitea.New(gitea.Options{BaseURL: baseURL, Owner: r.Owner, Repo: r.Name, Token: token,
		HTTPClient: client, PageSize: pageSize})
	require.NoError(t, err)
	return f
}

func TestConformance(t *testing.T) {
	t.Parallel()
	forgetest.Exercise(t, func(t *testing.T) *forgetest.Harness {
		b := setup(t)
		return b.repo.Harness(b.forge)
	})
}

// The forge intake's suite, through the same harness, on the real Gitea.
func TestConformance_Intake(t *testing.T) {
	t.Parallel()
	intaketest.Exercise(t, func(t *testing.T) *forgetest.Harness {
		b := setup(t)
		return b.repo.Harness(b.forge)
	})
}

// openPulls lists the numbers of the open pull requests from head, as
// Gitea has them.
func (b *testBundle) openPulls(t *testing.T, head string) []int {
	t.Helper()
	var pulls []struct {
		Number int `json:"number"`
		Head   struct {
			Label string `json:"label"`
		} `json:"head"`
	}
	require.NoError(t, b.server.API(context.Background(), b.server.Admin.Token, http.MethodGet,
		b.repo.Path("/pulls?state=open&limit=50"), nil, &pulls))
	var numbers []int
	for _, p := range pulls {
		if p.Head.Label == head {
			numbers = append(numbers, p.Number)
		}
	}
	return numbers
}

func TestOpenOrAdopt_RacingProcessesEndWithOnePullRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for round := range 3 {
		head := fmt.Sprintf("azolla/race-%d", round)
		b.repo.Push(t, head)
		// One Forge per caller: nothing in-process serialises them, as
		// with azolla workers in different processes.
		const callers = 4
		numbers := make([]int, callers)
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			f := newForge(t, b.server.URL, b.repo, b.server.Admin.Token, nil)
			wg.Go(func() {
				pr, _, err := f.OpenOrAdopt(ctx, forge.NewPullRequest{Head: head, Base: b.repo.Base, Title: "Race", Body: "race"})
				numbers[i], errs[i] = pr.Number, err
			})
		}
		wg.Wait()
		for i := range callers {
			require.NoError(t, errs[i])
			require.Equal(t, numbers[0], numbers[i], "every caller holds the same pull request")
		}
		require.Equal(t, []int{numbers[0]}, b.openPulls(t, head), "one pull request is open")
	}
}

// loseCreateAnswer performs the first pull request creation it sees and
// then fails as if the connection dropped before the answer arrived.
type loseCreateAnswer struct {
	once sync.Once
	lost bool
}

func (l *loseCreateAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/pulls") {
		return resp, err
	}
	lose := false
	l.once.Do(func() { lose, l.lost = true, true })
	if !lose {
		return resp, nil
	}
	_ = resp.Body.Close()
	return nil, errors.New("connection reset after the request was sent")
}

func TestOpenOrAdopt_AnswerLostAfterCreateIsAdoptedOnRetry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.repo.Push(t, "azolla/lost")
	lossy := &loseCreateAnswer{}
	f := newForge(t, b.server.URL, b.repo, b.server.Admin.Token, &http.Client{Transport: lossy})
	p := forge.NewPullRequest{Head: "azolla/lost", Base: b.repo.Base, Title: "Lost", Body: "lost"}

	_, _, err := f.OpenOrAdopt(ctx, p)
	require.Error(t, err)
	require.True(t, lossy.lost)
	require.Len(t, b.openPulls(t, "azolla/lost"), 1, "the forge created it although the answer was lost")

	pr, created, err := f.OpenOrAdopt(ctx, p)
	require.NoError(t, err)
	require.False(t, created, "the retry adopts what the lost call created")
	require.Equal(t, b.openPulls(t, "azolla/lost"), []int{pr.Number})
}

func TestOpenOrAdopt_DraftLabelsAndReviewers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, name := range []string{"azolla", "needs-review", "unrelated"} {
		require.NoError(t, b.server.API(ctx, b.server.Admin.Token, http.MethodPost, b.repo.Path("/labels"),
			map[string]string{"name": name, "color": "#00aabb"}, nil))
	}
	b.repo.Push(t, "azolla/draft")
	pr, created, err := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/draft", Base: b.repo.Base,
		Title: "Work in progress", Body: "draft", Draft: true,
		Labels: []string{"needs-review", "azolla"}, Reviewers: []string{b.server.Reviewer.Name}})
	require.NoError(t, err)
	require.True(t, created)
	require.True(t, pr.Draft)
	require.Equal(t, "Work in progress", pr.Title, "the draft prefix is Gitea's business")
	require.Nil(t, pr.Mergeable, "Gitea never finds a draft mergeable")

	var raw struct {
		Title  string `json:"title"`
		Draft  bool   `json:"draft"`
		Labels []struct {
			Name string `json:"name"`
		} `json:"labels"`
		RequestedReviewers []struct {
			Login string `json:"login"`
		} `json:"requested_reviewers"`
	}
	prPath := b.repo.Path("/pulls/" + strconv.Itoa(pr.Number))
	require.NoError(t, b.server.API(ctx, b.server.Admin.Token, http.MethodGet, prPath, nil, &raw))
	require.Equal(t, "WIP: Work in progress", raw.Title)
	require.True(t, raw.Draft)
	var labels []string
	for _, l := range raw.Labels {
		labels = append(labels, l.Name)
	}
	require.ElementsMatch(t, []string{"azolla", "needs-review"}, labels)
	require.Len(t, raw.RequestedReviewers, 1)
	require.Equal(t, b.server.Reviewer.Name, raw.RequestedReviewers[0].Login)

	up, err := b.forge.Update(ctx, pr.Number, "Still in progress", "round 2")
	require.NoError(t, err)
	require.True(t, up.Draft, "an update keeps a draft a draft")
	require.Equal(t, "Still in progress", up.Title)
	require.NoError(t, b.server.API(ctx, b.server.Admin.Token, http.MethodGet, prPath, nil, &raw))
	require.Equal(t, "WIP: Still in progress", raw.Title)
}

func TestOpenOrAdopt_MissingLabelsAreNamedAndNothingIsCreated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.server.API(context.Background(), b.server.Admin.Token, http.MethodPost,
		b.repo.Path("/labels"), map[string]string{"name": "azolla", "color": "#00aabb"}, nil))
	b.repo.Push(t, "azolla/labels")
	_, _, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: "azolla/labels",
		Base: b.repo.Base, Title: "Labels", Body: "labels", Labels: []string{"azolla", "no-such", "nor-this"}})
	require.ErrorContains(t, err, `"no-such", "nor-this"`)
	require.NotContains(t, err.Error(), `"azolla"`)
	require.Empty(t, b.openPulls(t, "azolla/labels"))
}

func TestReviews_APendingReviewSubmittedLaterIsReadOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.repo.Push(t, "azolla/pending")
	pr, _, err := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/pending", Base: b.repo.Base,
		Title: "Pending", Body: "pending"})
	require.NoError(t, err)
	prPath := b.repo.Path("/pulls/" + strconv.Itoa(pr.Number))

	// The reviewer starts a review and leaves it pending ...
	var pending struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, b.server.API(ctx, b.server.Reviewer.Token, http.MethodPost, prPath+"/reviews",
		map[string]any{"event": "PENDING", "body": "Started.", "comments": []map[string]any{
			{"path": giteatest.Files[0], "body": "Not yet sent.", "new_position": 1}}}, &pending))
	// ... while someone else's review is submitted and read (the
	// admin's: a reviewer's next review would submit the pending one).
	require.NoError(t, b.server.API(ctx, b.server.Admin.Token, http.MethodPost, prPath+"/reviews",
		map[string]any{"event": "COMMENT", "body": "A remark."}, nil))
	got, cur, err := b.forge.Reviews(ctx, pr.Number, "")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, forge.ReviewCommented, got[0].State)

	// The pending review is submitted: its id is lower than the one read.
	require.NoError(t, b.server.API(ctx, b.server.Reviewer.Token, http.MethodPost,
		fmt.Sprintf("%s/reviews/%d", prPath, pending.ID), map[string]string{"event": "REQUEST_CHANGES", "body": "Sent now."}, nil))
	got, cur, err = b.forge.Reviews(ctx, pr.Number, cur)
	require.NoError(t, err)
	require.Len(t, got, 1, "a review submitted late is returned, whatever its id")
	require.Equal(t, strconv.FormatInt(pending.ID, 10), got[0].ID)
	require.Equal(t, forge.ReviewChangesRequested, got[0].State)
	require.Len(t, got[0].Comments, 1)
	require.Equal(t, "Not yet sent.", got[0].Comments[0].Body)

	again, _, err := b.forge.Reviews(ctx, pr.Number, cur)
	require.NoError(t, err)
	require.Empty(t, again)
}

func TestReviews_DismissedReviewIsDismissed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.repo.Push(t, "azolla/dismissed")
	pr, _, err := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/dismissed", Base: b.repo.Base,
		Title: "Dismissed", Body: "dismissed"})
	require.NoError(t, err)
	b.repo.Review(t, pr.Number, forge.ReviewDismissed, "Stop.", nil)
	got, _, err := b.forge.Reviews(ctx, pr.Number, "")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, forge.ReviewDismissed, got[0].State)
}

func TestChecks_WarningFailsAndSkippedPasses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sha := b.repo.Push(t, "azolla/checks")
	post := func(name, state string) {
		require.NoError(t, b.server.API(ctx, b.server.Admin.Token, http.MethodPost, b.repo.Path("/statuses/"+sha),
			map[string]string{"state": state, "context": name}, nil))
	}
	post("ci/lint", "skipped")
	post("ci/build", "success")
	c, err := b.forge.Checks(ctx, sha)
	require.NoError(t, err)
	require.Equal(t, forge.ChecksSuccess, c.State)
	post("ci/vet", "warning")
	c, err = b.forge.Checks(ctx, sha)
	require.NoError(t, err)
	require.Equal(t, forge.ChecksFailure, c.State)
	require.Len(t, c.Checks, 3)
	require.Equal(t, "ci/vet", c.Failed()[0].Name)
}

func TestErrors_UnknownTokenIsUnauthorized(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sha := b.repo.Push(t, "azolla/token")
	const token = "0123456789abcdef0123456789abcdef01234567"
	f := newForge(t, b.server.URL, b.repo, token, nil)
	calls := map[string]func() error{
		"OpenOrAdopt": func() error {
			_, _, err := f.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/token", Base: b.repo.Base, Title: "t", Body: "t"})
			return err
		},
		"PullRequest": func() error { _, err := f.PullRequest(ctx, 1); return err },
		"Update":      func() error { _, err := f.Update(ctx, 1, "t", "b"); return err },
		"Comment":     func() error { return f.Comment(ctx, 1, "c") },
		"Reviews":     func() error { _, _, err := f.Reviews(ctx, 1, ""); return err },
		"Checks":      func() error { _, err := f.Checks(ctx, sha); return err },
		"Issues":      func() error { _, err := f.Issues(ctx, time.Time{}); return err },
		"Issue":       func() error { _, err := f.Issue(ctx, 1); return err },
		"Comments":    func() error { _, err := f.Comments(ctx, forge.Thread{Number: 1}, time.Time{}); return err },
		"PostComment": func() error { _, err := f.PostComment(ctx, forge.Thread{Number: 1}, "c"); return err },
		"EditComment": func() error { return f.EditComment(ctx, forge.Thread{Number: 1}, "1", "c") },
	}
	for name, call := range calls {
		err := call()
		require.ErrorIs(t, err, forge.ErrUnauthorized, name)
		require.NotContains(t, err.Error(), token, name)
	}
	require.Empty(t, b.openPulls(t, "azolla/token"))
}

func TestErrors_NeverCarryTheToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	token := b.server.Admin.Token
	_, err := b.forge.PullRequest(ctx, 987654)
	require.ErrorIs(t, err, forge.ErrNotFound)
	_, _, err2 := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/never-pushed", Base: b.repo.Base, Title: "x", Body: "x"})
	_, _, err3 := b.forge.Reviews(ctx, 1, "not a cursor")
	_, err4 := b.forge.Checks(ctx, strings.Repeat("0", 40))
	down := newForge(t, "http://127.0.0.1:1", b.repo, token, nil)
	_, err5 := down.PullRequest(ctx, 1)
	for i, err := range []error{err, err2, err3, err4, err5} {
		require.Error(t, err, i)
		require.NotContains(t, err.Error(), token, i)
	}
}

// Not parallel: it stops the shared server, and the parallel tests run
// after it.
func TestForgeDown_AnErrorThenOnePullRequest(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	b.repo.Push(t, "azolla/down")
	p := forge.NewPullRequest{Head: "azolla/down", Base: b.repo.Base, Title: "Down", Body: "down"}

	b.server.Stop()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			// Leave the server up for the tests after this one.
			require.NoError(t, b.server.Restart(context.Background()))
		}
	})
	_, _, err := b.forge.OpenOrAdopt(ctx, p)
	require.Error(t, err)
	require.NotErrorIs(t, err, forge.ErrNotFound)
	_, err = b.forge.PullRequest(ctx, 1)
	require.Error(t, err)

	require.NoError(t, b.server.Restart(ctx))
	restarted = true
	pr, created, err := b.forge.OpenOrAdopt(ctx, p)
	require.NoError(t, err)
	require.True(t, created)
	again, created, err := b.forge.OpenOrAdopt(ctx, p)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, pr.Number, again.Number)
	require.Equal(t, []int{pr.Number}, b.openPulls(t, "azolla/down"))
}
