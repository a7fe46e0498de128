package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitea"
	"github.com/azolla/azolla/internal/forge/giteatest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workers"
	"github.com/azolla/azolla/workflows"
)

// forgeWorld is one test's repository on a real Gitea, and an azolla
// whose repository configuration points at it.
type forgeWorld struct {
	*bundle
	gitea *giteatest.Server
	repo  *giteatest.Repo
	// clone is the repository's address, the objectives' repository.
	clone string
	// forge reads the repository as azolla does (admin's token).
	forge forge.Forge
	// roundEnds are the workorders waitRound saw end each round, by
	// objective id and round.
	roundEnds map[string]string
}

// taskAgent is the command generator's agent: it writes the task it was
// given into task.txt, so the branch shows what each round was told.
const taskAgent = `cp "$AZOLLA_INPUT_FILE" task.txt`

func setupForge(t testing.TB, s *giteatest.Server, f func(*config.ForgeConfig)) *forgeWorld {
	t.Helper()
	return setupForgeWith(t, s, f, nil)
}

// setupForgeWith is setupForge with the repository's settings changed by
// rc after the forge's.
func setupForgeWith(t testing.TB, s *giteatest.Server, f func(*config.ForgeConfig), rc func(*config.RepositoryConfig),
	more ...func(*setupOptions)) *forgeWorld {
	t.Helper()
	r := giteatest.NewRepo(t, s)
	// The token is in the worker's environment under a name of the
	// test's: only azolla's own calls read it.
	tokenEnv := "IT_FORGE_TOKEN_" + strings.ToUpper(randomHex(4))
	require.NoError(t, os.Setenv(tokenEnv, s.Admin.Token))
	t.Cleanup(func() { _ = os.Unsetenv(tokenEnv) })
	w := &forgeWorld{gitea: s, repo: r, clone: s.URL + "/" + r.Owner + "/" + r.Name + ".git",
		roundEnds: map[string]string{}}
	fc := config.ForgeConfig{Kind: forge.KindGitea, URL: s.URL, Repository: r.Owner + "/" + r.Name,
		TokenEnv: tokenEnv, PollInterval: time.Hour}
	if f != nil {
		f(&fc)
	}
	rcfg := config.RepositoryConfig{Repository: w.clone, Forge: fc}
	if rc != nil {
		rc(&rcfg)
	}
	o := setupOptions{configure: func(c *config.Config) {
		c.Patch.Command.Run = taskAgent
		// Objectives made from issues choose no generator.
		c.Patch.Generator = config.GeneratorCommand
		c.Patch.Repositories = []config.RepositoryConfig{rcfg}
	}}
	for _, m := range more {
		m(&o)
	}
	w.bundle = setup(t, o)
	var err error
	w.forge, err = gitea.New(gitea.Options{BaseURL: s.URL, Owner: r.Owner, Repo: r.Name, Token: s.Admin.Token})
	require.NoError(t, err)
	return w
}

// approve creates an objective on the repository and approves it.
func (w *forgeWorld) approve(t testing.TB, id string) {
	t.Helper()
	w.create(t, id, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = w.clone, "main", config.GeneratorCommand
		o.AcceptanceCriteria = []string{"task.txt says what to do"}
	})
	w.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := w.starter.Decide(context.Background(), id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
}

// sync wakes the lifecycle so that it reads its pull request now (azolla
// pr sync), rather than at its next poll.
func (w *forgeWorld) sync(t testing.TB, id string) {
	t.Helper()
	o, err := w.store.GetObjective(context.Background(), id)
	require.NoError(t, err)
	require.NoError(t, w.starter.Start(context.Background(), o))
}

// pullRequests lists every pull request of the repository, any state.
func (w *forgeWorld) pullRequests(t testing.TB) []int {
	t.Helper()
	var prs []struct {
		Number int `json:"number"`
	}
	require.NoError(t, w.gitea.API(context.Background(), w.gitea.Admin.Token, http.MethodGet,
		w.repo.Path("/pulls?state=all&limit=50"), nil, &prs))
	out := make([]int, 0, len(prs))
	for _, p := range prs {
		out = append(out, p.Number)
	}
	return out
}

// file reads path at ref on the forge.
func (w *forgeWorld) file(t testing.TB, path, ref string) string {
	t.Helper()
	var c struct {
		Content string `json:"content"`
	}
	require.NoError(t, w.gitea.API(context.Background(), w.gitea.Admin.Token, http.MethodGet,
		w.repo.Path("/contents/"+path+"?ref="+ref), nil, &c))
	raw, err := base64.StdEncoding.DecodeString(c.Content)
	require.NoError(t, err)
	return string(raw)
}

// parents are the parents of commit sha on the forge.
func (w *forgeWorld) parents(t testing.TB, sha string) []string {
	t.Helper()
	var c struct {
		Parents []struct {
			SHA string `json:"sha"`
		} `json:"parents"`
	}
	require.NoError(t, w.gitea.API(context.Background(), w.gitea.Admin.Token, http.MethodGet,
		w.repo.Path("/git/commits/"+sha), nil, &c))
	var out []string
	for _, p := range c.Parents {
		out = append(out, p.SHA)
	}
	return out
}

// comments are the bodies of the pull request's conversation comments.
func (w *forgeWorld) comments(t testing.TB, number int) []string {
	t.Helper()
	var cs []struct {
		Body string `json:"body"`
	}
	require.NoError(t, w.gitea.API(context.Background(), w.gitea.Admin.Token, http.MethodGet,
		w.repo.Path(fmt.Sprintf("/issues/%d/comments", number)), nil, &cs))
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Body)
	}
	return out
}

// waitRound waits until the objective's pull request is in round n, that
// round's workorder has pushed to it (a round is counted when it starts,
// its head moves when it passes), and its lifecycle follows it again.
//
// The round counter moves when a round is taken, before its workorder
// exists, so round n > 1 is over only once the pull request carries a
// workorder other than the one round n-1 ended on.
func (w *forgeWorld) waitRound(t testing.TB, id string, n int) *domain.PullRequest {
	t.Helper()
	before, seen := w.roundEnds[fmt.Sprintf("%s/%d", id, n-1)]
	require.True(t, n == 1 || seen, "wait for round %d of %s before round %d", n-1, id, n)
	var pr *domain.PullRequest
	require.Eventually(t, func() bool {
		var err error
		pr, err = w.store.GetPullRequest(context.Background(), id)
		if err != nil || pr.Rounds != n || pr.WorkOrderID == before {
			return false
		}
		wos, err := w.store.ListWorkOrders(context.Background(), store.ListWorkOrdersParams{ObjectiveID: id})
		if err != nil || len(wos) == 0 || wos[len(wos)-1].WorkOrderID != pr.WorkOrderID {
			return false
		}
		st, err := w.starter.State(context.Background(), id)
		return err == nil && st.Step == workflows.StepAwaitingReview && st.PullRequest == pr.URL &&
			st.Status == domain.StatusDone
	}, 2*time.Minute, 100*time.Millisecond, "round %d never reached review (pull request %+v)", n, pr)
	w.roundEnds[fmt.Sprintf("%s/%d", id, n)] = pr.WorkOrderID
	return pr
}

// The whole loop on a real Gitea: approve → PASS → one pull request with
// the right head, base and body; a review requesting changes with two line
// comments → objective retry → the next run's task holds both comments
// with file and line, its commit lands on the same pull request, which
// says so in a comment; an approval and a merge → the objective is
// confirmed, its pull request MERGED, still one pull request.
func TestForge_FullLoopOnGitea(t *testing.T) {
	t.Parallel()
	w := setupForge(t, giteatest.Shared(t), nil)
	ctx := context.Background()
	id := uniqueID("forge")
	w.approve(t, id)

	pr := w.waitRound(t, id, 1)
	wos, err := w.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	require.Len(t, wos, 1)
	rr, err := w.store.GetRunRecord(ctx, wos[0].WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, domain.GatePass, rr.GateResult)
	require.Equal(t, rr.CommitSHA, pr.HeadSHA, "the recorded head is the commit the gate passed")
	require.False(t, pr.Adopted)
	fpr, err := w.forge.PullRequest(ctx, pr.Number)
	require.NoError(t, err)
	require.Equal(t, "azolla/"+id, fpr.Head)
	require.Equal(t, "main", fpr.Base)
	require.Equal(t, rr.CommitSHA, fpr.HeadSHA, "the forge has the pushed commit")
	require.Contains(t, fpr.Body, "task.txt says what to do", "the acceptance criteria")
	require.Contains(t, fpr.Body, id, "the way back to the objective")
	require.Contains(t, fpr.Body, wos[0].WorkOrderID)
	require.Equal(t, []int{pr.Number}, w.pullRequests(t))
	require.Equal(t, pr.URL, w.attr(t, id, workflows.AttrPullRequest.GetName()))

	w.repo.Review(t, pr.Number, forge.ReviewChangesRequested, "Two things before this goes in.", []forge.ReviewComment{
		{Path: "task.txt", Line: 1, Body: "Say which objective this is first."},
		{Path: "task.txt", Line: 2, Body: "Keep the criteria on their own line."},
	})
	w.sync(t, id)
	require.Eventually(t, func() bool {
		st, err := w.starter.State(ctx, id)
		return err == nil && strings.Contains(st.PullRequestWaiting, "requested changes (2 comments)")
	}, time.Minute, 100*time.Millisecond, "the review is reported as waiting for a retry")
	p, err := w.store.GetPullRequest(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 1, p.Rounds, "without auto_revise a human starts the round")

	res, err := w.starter.Decide(ctx, id, workflows.Retry, workflows.Decision{By: "ana", Comment: "as reviewed"})
	require.NoError(t, err)
	require.NotEmpty(t, res.EventID)

	pr2 := w.waitRound(t, id, 2)
	require.Equal(t, pr.Number, pr2.Number, "the same pull request")
	require.NotEqual(t, pr.HeadSHA, pr2.HeadSHA)
	task := w.file(t, "task.txt", pr2.HeadSHA)
	require.Contains(t, task, "task.txt:1: Say which objective this is first.")
	require.Contains(t, task, "task.txt:2: Keep the criteria on their own line.")
	require.Contains(t, task, "as reviewed")
	require.Equal(t, []int{pr.Number}, w.pullRequests(t), "never a second pull request")
	require.Equal(t, []string{pr.HeadSHA}, w.parents(t, pr2.HeadSHA),
		"the round added a commit on the reviewed head; nothing was force-pushed over it")
	b2, err := w.store.GetOutputBundle(ctx, pr2.WorkOrderID)
	require.NoError(t, err)
	require.Contains(t, b2.Content, "new file mode", "the bundle is the whole change against the base")
	pauses, err := w.store.ListPauseStates(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "Review PR "+pr.URL, pauses[len(pauses)-1].PrioritizedActions[0],
		"a later round's pause names its pull request")
	require.Eventually(t, func() bool {
		for _, c := range w.comments(t, pr.Number) {
			if strings.Contains(c, "round 2 pushed `"+pr2.HeadSHA+"`") {
				return true
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond, "the pull request links the new round")

	w.repo.Review(t, pr.Number, forge.ReviewApproved, "Good now.", nil)
	w.repo.Merge(t, pr.Number)
	w.sync(t, id)
	st := w.waitStep(t, id, workflows.StepMerged)
	require.Equal(t, domain.StatusDone, st.Status)
	p, err = w.store.GetPullRequest(ctx, id)
	require.NoError(t, err)
	require.Equal(t, domain.PullRequestMerged, p.State)
	require.NotNil(t, p.MergedAt)
	require.Equal(t, 2, p.Rounds)
	nWO, bundles, records := w.counts(t, id)
	require.Equal(t, []int{2, 2, 2}, []int{nWO, bundles, records}, "one bundle and one run record per workorder")
	w.requireAuditClean(t)
	recordHistories(t, w.bundle, "forge_review", id)
}

// attr is the lifecycle's search attribute name as the visibility store
// lists it.
func (w *forgeWorld) attr(t testing.TB, id, name string) string {
	t.Helper()
	d, err := w.client.DescribeWorkflowExecution(context.Background(), workflows.ObjectiveWorkflowID(id), "")
	require.NoError(t, err)
	f := d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[name]
	if f == nil {
		return ""
	}
	var v string
	require.NoError(t, json.Unmarshal(f.GetData(), &v))
	return v
}

// A pull request a human opened for the objective's branch before azolla
// asked is adopted, not doubled; and the step run again and again, from
// several workers at once, still leaves that one pull request: it is what
// a worker killed between the forge's answer and the record finds on its
// retry.
func TestForge_OnePullRequestWhateverRunsTheStep(t *testing.T) {
	t.Parallel()
	w := setupForge(t, giteatest.Shared(t), nil)
	ctx := context.Background()
	id := uniqueID("adopt")
	w.repo.Push(t, "azolla/"+id)
	byHand := w.repo.Open(t, "azolla/"+id, "Opened by hand")
	w.approve(t, id)

	pr := w.waitRound(t, id, 1)
	require.Equal(t, byHand, pr.Number)
	require.True(t, pr.Adopted)
	require.Equal(t, []int{byHand}, w.pullRequests(t))

	wos, err := w.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	// Other workers' steps, on the same store and forge.
	lc := &activities.PullRequests{Store: w.store, Forges: workers.NewForges(w.cfg, os.Getenv)}
	results := make(chan activities.PullRequestResult, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			res, err := lc.OpenPullRequest(ctx, activities.PullRequestInput{WorkOrderID: wos[0].WorkOrderID})
			assert.NoError(t, err)
			results <- res
		})
	}
	wg.Wait()
	close(results)
	for res := range results {
		require.Equal(t, byHand, res.Number)
		require.False(t, res.Created)
	}
	require.Equal(t, []int{byHand}, w.pullRequests(t), "still one pull request")
	again, err := w.store.GetPullRequest(ctx, id)
	require.NoError(t, err)
	require.Equal(t, pr.HeadSHA, again.HeadSHA)
	require.Equal(t, 1, again.Rounds)
}

// With auto_revise a failed check on azolla's commit starts the next round
// at once, its task naming the check; a success on the new commit starts
// nothing; a close without merge ends the lifecycle with a pause state.
func TestForge_FailedCheckRevisesThenACloseHandsBack(t *testing.T) {
	t.Parallel()
	w := setupForge(t, giteatest.Shared(t), func(f *config.ForgeConfig) { f.AutoRevise = true })
	ctx := context.Background()
	id := uniqueID("checks")
	w.approve(t, id)
	pr := w.waitRound(t, id, 1)

	w.repo.Status(t, pr.HeadSHA, "ci/test", forge.ChecksFailure, "2 tests failed in login_test.go")
	w.sync(t, id)
	pr2 := w.waitRound(t, id, 2)
	require.Equal(t, pr.Number, pr2.Number)
	task := w.file(t, "task.txt", pr2.HeadSHA)
	require.Contains(t, task, "Failed checks on "+pr.HeadSHA)
	require.Contains(t, task, "ci/test: 2 tests failed in login_test.go")

	w.repo.Status(t, pr2.HeadSHA, "ci/test", forge.ChecksSuccess, "all passed")
	w.sync(t, id)
	// The look after the wake finds the success: nothing waits.
	require.Eventually(t, func() bool {
		st, err := w.starter.State(ctx, id)
		return err == nil && st.Step == workflows.StepAwaitingReview && st.PullRequestWaiting == ""
	}, time.Minute, 100*time.Millisecond)
	w.repo.Close(t, pr.Number)
	w.sync(t, id)
	st := w.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.PausePullRequestClosed, st.LastPause.Reason)
	p, err := w.store.GetPullRequest(ctx, id)
	require.NoError(t, err)
	require.Equal(t, domain.PullRequestClosed, p.State)
	require.Equal(t, 2, p.Rounds, "the success started no round")
	require.Equal(t, []int{pr.Number}, w.pullRequests(t))
	w.requireAuditClean(t)
}

// toggled answers 503 while down, as a forge behind a gateway does when
// it is down, and passes every request through otherwise.
type toggled struct {
	down     atomic.Bool
	refused  atomic.Int64
	upstream http.Handler
}

func (p *toggled) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.down.Load() {
		p.refused.Add(1)
		http.Error(w, "forge down", http.StatusServiceUnavailable)
		return
	}
	p.upstream.ServeHTTP(w, r)
}

// A forge down when the pull request is to be opened is asked again with
// backoff; once it is back, one pull request opens. The push goes straight
// to Gitea (push_remote), the API through a gateway the test turns off.
func TestForge_DownDuringCreationThenOnePullRequest(t *testing.T) {
	t.Parallel()
	s := giteatest.Shared(t)
	target, err := url.Parse(s.URL)
	require.NoError(t, err)
	gw := &toggled{upstream: httputil.NewSingleHostReverseProxy(target)}
	proxy := httptest.NewServer(gw)
	t.Cleanup(proxy.Close)
	var push string
	w := setupForgeWith(t, s, func(f *config.ForgeConfig) { f.URL = proxy.URL }, func(r *config.RepositoryConfig) {
		u := *target
		u.User = url.UserPassword(s.Admin.Name, s.Admin.Token)
		u.Path = "/" + r.Forge.Repository + ".git"
		push = u.String()
		r.PushRemote = push
	})
	ctx := context.Background()
	id := uniqueID("down")
	gw.down.Store(true)
	w.approve(t, id)
	require.Eventually(t, func() bool {
		st, err := w.starter.State(ctx, id)
		return err == nil && st.Step == workflows.StepPullRequest && gw.refused.Load() >= 2
	}, 2*time.Minute, 100*time.Millisecond, "the step is retried while the forge is down")
	require.Empty(t, w.pullRequests(t))
	gw.down.Store(false)

	pr := w.waitRound(t, id, 1)
	require.Equal(t, []int{pr.Number}, w.pullRequests(t))
	rr, err := w.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	b, err := w.store.GetOutputBundle(ctx, rr[0].WorkOrderID)
	require.NoError(t, err)
	require.NotContains(t, b.Notes, s.Admin.Token, "the push remote's token is redacted")
}

// A review on Gitea reaches azolla through a real webhook delivery, signed
// with the repository's secret: the lifecycle, polling only every hour,
// reads its pull request at once and reports the review as waiting.
func TestForge_WebhookWakesTheLifecycle(t *testing.T) {
	t.Parallel()
	s := giteatest.Shared(t)
	secretEnv := "IT_HOOK_SECRET_" + strings.ToUpper(randomHex(4))
	secret := "hook-" + randomHex(12)
	require.NoError(t, os.Setenv(secretEnv, secret))
	t.Cleanup(func() { _ = os.Unsetenv(secretEnv) })
	w := setupForge(t, s, func(f *config.ForgeConfig) { f.WebhookSecretEnv = secretEnv })
	var delivered atomic.Int64
	hook := workers.ForgeWebhook(w.cfg, os.Getenv, w.store, func(ctx context.Context, o *domain.Objective) error {
		delivered.Add(1)
		return w.starter.Start(ctx, o)
	}, nil, nil)
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	require.NoError(t, s.API(ctx, s.Admin.Token, http.MethodPost, w.repo.Path("/hooks"), map[string]any{
		"type": "gitea", "active": true, "events": []string{"pull_request", "pull_request_review_rejected",
			"pull_request_review_approved", "pull_request_comment", "status"},
		"config": map[string]string{"url": srv.URL + workers.PathForgeWebhook, "content_type": "json", "secret": secret},
	}, nil))

	id := uniqueID("hook")
	w.approve(t, id)
	pr := w.waitRound(t, id, 1)
	w.repo.Review(t, pr.Number, forge.ReviewChangesRequested, "One thing.", []forge.ReviewComment{
		{Path: "task.txt", Line: 1, Body: "Shorter."}})
	require.Eventually(t, func() bool {
		st, err := w.starter.State(ctx, id)
		return err == nil && strings.Contains(st.PullRequestWaiting, "requested changes (1 comments)")
	}, time.Minute, 100*time.Millisecond, "the delivery woke the lifecycle (poll interval: an hour)")
	require.Positive(t, delivered.Load())
}
