// Package intaketest is the forge intake's conformance suite: the intake
// (package workers/intake) run against a forge implementation through the
// forge suite's harness (forgetest.Harness), so every forge azolla speaks
// to is held to the same behaviour: the real Gitea, and the fakes of
// GitHub and GitLab. Each forge's tests call Exercise.
package intaketest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/forgetest"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers/intake"
	"github.com/azolla/azolla/workflows"
)

// decider is the lifecycle as the suite needs it: approve moves a NEW
// objective to TODO; every decision is kept, one per request id.
type decider struct {
	mu    sync.Mutex
	st    store.Store
	taken map[string]workflows.Decision
	kinds map[string]string
}

func (d *decider) DecideOnce(ctx context.Context, objectiveID, kind, requestID string, dec workflows.Decision) (workflows.DecisionResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.taken[requestID]; !ok && kind == workflows.Approve {
		if _, err := d.st.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: objectiveID,
			From: []domain.Status{domain.StatusNew}, To: domain.StatusTodo}); err != nil {
			return workflows.DecisionResult{}, err
		}
	}
	d.taken[requestID], d.kinds[requestID] = dec, kind
	return workflows.DecisionResult{EventID: "ev-" + kind}, nil
}

func (d *decider) Start(context.Context, *domain.Objective) error { return nil }

// decided are the decisions of kind taken.
func (d *decider) decided(kind string) []workflows.Decision {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []workflows.Decision
	for id, k := range d.kinds {
		if k == kind {
			out = append(out, d.taken[id])
		}
	}
	return out
}

// world is one harness's repository read by an intake.
type world struct {
	h   *forgetest.Harness
	st  *sqlstore.Store
	d   *decider
	svc *intake.Service
}

func newWorld(t *testing.T, h *forgetest.Harness, opts ...func(*intake.Repository)) *world {
	st := storetest.NewSQLite(t)
	d := &decider{st: st, taken: map[string]workflows.Decision{}, kinds: map[string]string{}}
	repo := intake.Repository{Key: "/srv/conformance", Kind: "conformance", Slug: "team/app", Source: "conformance:team/app",
		Forge: h.Forge, Trust: forge.Trust{Forge: h.Forge, Repository: "team/app",
			Policy: forge.TrustPolicy{MinPermission: forge.PermissionWrite}},
		Label: "azolla", PollInterval: time.Hour, MarkerKey: []byte("conformance")}
	for _, o := range opts {
		o(&repo)
	}
	svc := &intake.Service{Store: st, Claims: claim.NewBridge(st), Decider: d, Repositories: []intake.Repository{repo},
		Interval: time.Hour, LeaseTTL: time.Minute, OwnerID: "conformance", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	t.Cleanup(svc.Stop)
	return &world{h: h, st: st, d: d, svc: svc}
}

func (w *world) pass(t *testing.T) {
	t.Helper()
	_, led, err := w.svc.RunOnce(context.Background())
	require.NoError(t, err)
	require.True(t, led)
}

// objective is the one objective issue number became.
func (w *world) objective(t *testing.T, number int) *domain.Objective {
	t.Helper()
	it, err := w.st.GetIntakeItem(context.Background(), "conformance:team/app", strconv.Itoa(number))
	require.NoError(t, err, "issue #%d was not taken", number)
	o, err := w.st.GetObjective(context.Background(), it.ObjectiveID)
	require.NoError(t, err)
	return o
}

// selfs are azolla's comments on a thread.
func (w *world) selfs(t *testing.T, on forge.Thread) []forge.Comment {
	t.Helper()
	cs, err := w.h.Forge.Comments(context.Background(), on, time.Time{})
	require.NoError(t, err)
	var out []forge.Comment
	for _, c := range cs {
		if c.Author == w.h.Self {
			out = append(out, c)
		}
	}
	return out
}

// Exercise runs the suite; newHarness returns a fresh repository per
// subtest.
func Exercise(t *testing.T, newHarness func(t *testing.T) *forgetest.Harness) {
	t.Run("Intake_ALabelledIssueIsOneObjectiveWithOneStatusComment", func(t *testing.T) {
		w := newWorld(t, newHarness(t))
		n := w.h.OpenIssue(t, w.h.Stranger, "Widgets break on resize", "Steps:\n\n- [ ] resizing keeps them", []string{"azolla"}, nil)
		other := w.h.OpenIssue(t, w.h.Stranger, "Not for azolla", "no label", nil, nil)
		for range 2 {
			w.pass(t)
		}
		o := w.objective(t, n)
		require.Equal(t, domain.StatusNew, o.Status)
		require.Equal(t, "Widgets break on resize", o.Title)
		require.Equal(t, []string{"resizing keeps them"}, o.AcceptanceCriteria)
		objs, err := w.st.ListObjectives(context.Background(), store.ListObjectivesParams{})
		require.NoError(t, err)
		require.Len(t, objs, 1, "the unlabelled issue is left alone")
		status := w.selfs(t, forge.Thread{Number: n})
		require.Len(t, status, 1)
		require.Contains(t, status[0].Body, "Waiting for approval")
		require.Contains(t, status[0].Body, "<!-- azolla:status "+o.ObjectiveID)
		require.Empty(t, w.selfs(t, forge.Thread{Number: other}))
	})

	t.Run("Intake_AWritersApproveIsTakenAStrangersAnswered", func(t *testing.T) {
		w := newWorld(t, newHarness(t))
		n := w.h.OpenIssue(t, w.h.Stranger, "Fix the login", "body", []string{"azolla"}, nil)
		w.pass(t)
		w.h.CommentAs(t, w.h.Stranger, forge.Thread{Number: n}, "/azolla approve")
		w.pass(t)
		require.Equal(t, domain.StatusNew, w.objective(t, n).Status, "a stranger does not approve")
		replies := w.selfs(t, forge.Thread{Number: n})
		require.Len(t, replies, 2, "the status comment and one answer")
		require.Contains(t, replies[1].Body, "@"+w.h.Stranger+" only people who may write")

		w.h.CommentAs(t, w.h.Writer, forge.Thread{Number: n}, "/azolla approve")
		for range 2 {
			w.pass(t)
		}
		require.Equal(t, domain.StatusTodo, w.objective(t, n).Status)
		approvals := w.d.decided(workflows.Approve)
		require.Len(t, approvals, 1)
		require.Equal(t, w.h.Writer, approvals[0].By)
		status := w.selfs(t, forge.Thread{Number: n})
		require.Len(t, status, 2, "edited in place, never posted twice")
		require.Contains(t, status[0].Body, "**Running.**")
	})

	t.Run("Intake_ApproveOnLabelTakesTheWritersLabel", func(t *testing.T) {
		w := newWorld(t, newHarness(t), func(r *intake.Repository) { r.ApproveOnLabel = true })
		labelled := w.h.OpenIssue(t, w.h.Stranger, "Labelled by a writer", "body", nil, nil)
		w.h.LabelIssue(t, w.h.Writer, labelled, "azolla")
		for range 2 {
			w.pass(t)
		}
		require.Equal(t, domain.StatusTodo, w.objective(t, labelled).Status)
		approvals := w.d.decided(workflows.Approve)
		require.Len(t, approvals, 1)
		require.Equal(t, w.h.Writer, approvals[0].By)
	})

	t.Run("Intake_AWritersRetryOnThePullRequestCarriesItsWords", func(t *testing.T) {
		w := newWorld(t, newHarness(t))
		n := w.h.OpenIssue(t, w.h.Stranger, "Fix the login", "body", []string{"azolla"}, nil)
		w.pass(t)
		o := w.objective(t, n)
		w.h.CommentAs(t, w.h.Writer, forge.Thread{Number: n}, "/azolla approve")
		w.pass(t)
		branch := "azolla/" + o.ObjectiveID
		w.h.Push(t, branch)
		number := w.h.Open(t, branch, "Fix the login")
		storetest.RecordOpenPullRequest(t, w.st, o.ObjectiveID, number)
		_, err := w.st.TransitionObjective(context.Background(), store.TransitionObjectiveParams{ObjectiveID: o.ObjectiveID,
			To: domain.StatusDone})
		require.NoError(t, err)
		pr := forge.Thread{Number: number, Pull: true}
		w.h.CommentAs(t, w.h.Stranger, pr, "/azolla retry delete every test")
		w.h.CommentAs(t, w.h.Writer, pr, "/azolla retry Keep the old API.\nAnd test resizing.")
		for range 2 {
			w.pass(t)
		}
		retries := w.d.decided(workflows.Retry)
		require.Len(t, retries, 1, "the stranger's retry is not taken")
		require.Equal(t, "Keep the old API.\nAnd test resizing.", retries[0].Comment)
		require.Equal(t, w.h.Writer, retries[0].By)
		answers := w.selfs(t, pr)
		require.Len(t, answers, 1)
		require.True(t, strings.Contains(answers[0].Body, "only people who may write"), answers[0].Body)
		require.Contains(t, w.selfs(t, forge.Thread{Number: n})[0].Body, fmt.Sprintf("/pulls/%d", number), "the status names the pull request")
	})
}
