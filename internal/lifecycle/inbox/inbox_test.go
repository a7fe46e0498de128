package inbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/deadline"
	"github.com/azolla/azolla/internal/lifecycle/inbox"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

type testBundle struct {
	ctx context.Context
	st  store.Store
	src inbox.Source
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	st := storetest.NewSQLite(t)
	return &testBundle{ctx: context.Background(), st: st,
		src: inbox.Source{Store: st, Self: "az", Now: storetest.T0.Add(time.Hour)}}
}

// objective writes a NEW objective of urgency created at, changed by each
// of with.
func (b *testBundle) objective(t *testing.T, id, urgency string, at time.Time, with ...func(*domain.Objective)) *domain.Objective {
	t.Helper()
	o := storetest.Objective(id)
	o.Urgency, o.CreatedAt, o.UpdatedAt = urgency, at, at
	for _, f := range with {
		f(o)
	}
	require.NoError(t, b.st.CreateObjective(b.ctx, o))
	return o
}

func (b *testBundle) moveTo(t *testing.T, id string, to domain.Status) *domain.Objective {
	t.Helper()
	o, err := b.st.TransitionObjective(b.ctx, store.TransitionObjectiveParams{ObjectiveID: id, To: to, Now: storetest.T0})
	require.NoError(t, err)
	return o
}

func (b *testBundle) pause(t *testing.T, ps domain.PauseState) {
	t.Helper()
	require.NoError(t, b.st.CreatePauseState(b.ctx, &ps))
}

type row struct{ kind, subject string }

func rows(items []inbox.Item) []row {
	var out []row
	for _, it := range items {
		out = append(out, row{it.Kind, it.SubjectID})
	}
	return out
}

func commands(it inbox.Item) []string {
	var out []string
	for _, a := range it.Actions {
		out = append(out, a.Command)
	}
	return out
}

func TestItems_MostUrgentKindFirstThenUrgencyThenAge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	at := storetest.T0
	b.objective(t, "appr-low", "LOW", at.Add(-time.Hour))
	b.objective(t, "appr-normal-old", "NORMAL", at)
	b.objective(t, "appr-normal-young", "NORMAL", at.Add(time.Hour))
	b.objective(t, "appr-high", "HIGH", at.Add(2*time.Hour))
	b.objective(t, "blocked", "LOW", at.Add(3*time.Hour))
	blocked := b.moveTo(t, "blocked", domain.StatusBlocked)
	b.pause(t, pause.Blocked("blocked", blocked.StatusSeq, []string{"waiting on legal"}, at))
	b.pause(t, pause.ManifestReady("wo-manifest", []string{"Close it"}, at))

	items, err := b.src.Items(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []row{
		{inbox.KindBlocked, "blocked"},
		{inbox.KindApproval, "appr-high"}, {inbox.KindApproval, "appr-normal-old"},
		{inbox.KindApproval, "appr-normal-young"}, {inbox.KindApproval, "appr-low"},
		{inbox.KindManifest, "wo-manifest"},
	}, rows(items))
	require.Equal(t, []string{"az objective approve appr-high", "az objective reject appr-high"}, commands(items[1]),
		"commands are spelled as Self")
	require.Equal(t, "Review the manifest: azolla manifest show wo-manifest", items[5].Title, "titled by its first action")
	require.Equal(t, []string{"az manifest show wo-manifest", ""}, commands(items[5]))
}

func TestItems_AnOverduePauseWaitsWhileItNamesTheDeadlineOfAnObjectiveNotRejected(t *testing.T) {
	t.Parallel()
	b := setup(t)
	at, due := storetest.T0, storetest.T0.Add(-time.Hour)
	for _, id := range []string{"late", "moved", "rejected"} {
		b.objective(t, id, "HIGH", at, func(o *domain.Objective) { o.DueAt = &due })
		b.pause(t, pause.Overdue(deadline.PauseID(id, due), id, "Fix "+id, due, at))
	}
	later := at.Add(10 * time.Hour)
	_, err := b.st.TransitionObjective(b.ctx, store.TransitionObjectiveParams{ObjectiveID: "moved", To: domain.StatusTodo, Now: at})
	require.NoError(t, err)
	b.objective(t, "moved-new", "HIGH", at, func(o *domain.Objective) { o.DueAt = &later })
	b.pause(t, pause.Overdue(deadline.PauseID("moved-new", due), "moved-new", "Fix moved-new", due, at))
	b.pause(t, pause.Rejected("rejected", 0, "ana", "not ours", at.Add(time.Minute)))

	items, err := b.src.Items(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []row{
		{inbox.KindOverdue, "late"}, {inbox.KindOverdue, "moved"},
		{inbox.KindApproval, "moved-new"},
	}, rows(items), "a rejected objective waits for nothing; a deadline moved on leaves its old pause behind")
	require.Equal(t, []string{"az objective show late", "", "az objective approve late", "az objective reject late"},
		commands(items[0]), "an overdue NEW objective carries its approval")
	require.Equal(t, due, items[0].DeadlineAt.UTC())
	require.Equal(t, []string{"az objective show moved", ""}, commands(items[1]))
}

func TestOverdue_OpenObjectivesPastTheirDeadlineNotRejected(t *testing.T) {
	t.Parallel()
	b := setup(t)
	at, due, later := storetest.T0, storetest.T0.Add(-time.Hour), storetest.T0.Add(time.Hour)
	for id, d := range map[string]time.Time{"late-new": due, "late-todo": due, "late-rejected": due, "late-done": due,
		"on-time": later} {
		b.objective(t, id, "NORMAL", at.Add(-2*time.Hour), func(o *domain.Objective) { o.DueAt = &d })
	}
	b.moveTo(t, "late-todo", domain.StatusTodo)
	b.moveTo(t, "late-done", domain.StatusDone)
	b.pause(t, pause.Rejected("late-rejected", 0, "ana", "not ours", at))

	ids := func(status domain.Status) []string {
		list, err := inbox.Overdue(b.ctx, b.st, status, nil, at)
		require.NoError(t, err)
		var out []string
		for _, o := range list {
			out = append(out, o.ObjectiveID)
		}
		return out
	}
	require.ElementsMatch(t, []string{"late-new", "late-todo"}, ids(""))
	require.Equal(t, []string{"late-todo"}, ids(domain.StatusTodo))
	require.Empty(t, ids(domain.StatusDone), "a DONE objective is never overdue")
}

func TestNotTakenLine_SaysWhoAndWhyOnOneEscapedLine(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		author, why, summary, want string
	}{
		"may not":        {"stranger", "may not write to team/app (read access)", "Ignore it.", `not taken: stranger may not write to team/app (read access): "Ignore it."`},
		"other reason":   {"writer", "write access, and forge.trusted asks for maintain", "", "not taken: writer (write access, and forge.trusted asks for maintain)"},
		"hostile fields": {"x\x1b[2J", "may not write", "one\ntwo", `not taken: x\x1b[2J may not write: "one\x0atwo"`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := &domain.PullRequestFeedback{Author: tc.author, TrustReason: tc.why, Summary: tc.summary}
			require.Equal(t, tc.want, inbox.NotTakenLine(f))
		})
	}
}

func TestNotTaken_KeepsTheFeedbackNotTakenOnThatPullRequest(t *testing.T) {
	t.Parallel()
	refused := storetest.NotTakenFeedback("o", 7, "1", storetest.T0)
	earlier := storetest.NotTakenFeedback("o", 6, "2", storetest.T0)
	taken := &domain.PullRequestFeedback{ObjectiveID: "o", Number: 7, Trusted: true, TakenBy: "ev-o-2"}
	require.Equal(t, []*domain.PullRequestFeedback{refused},
		inbox.NotTaken([]*domain.PullRequestFeedback{refused, earlier, taken}, 7))
}

func TestItems_AnApprovalFromAnIssueLinksItAndSaysHowToApproveThere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.objective(t, "widgets-12", "NORMAL", storetest.T0, func(o *domain.Objective) {
		o.Provenance = "https://git.example.com/acme/widgets/issues/12"
	})
	items, err := b.src.Items(b.ctx)
	require.NoError(t, err)
	require.Len(t, items, 1)
	require.Equal(t, "https://git.example.com/acme/widgets/issues/12", items[0].From)
	require.Equal(t, []string{"az objective approve widgets-12", "az objective reject widgets-12", ""}, commands(items[0]))
	require.Contains(t, items[0].Actions[2].Text, "/azolla approve")
}

// An agent's question waits before anything else, even a blocked
// objective of higher urgency, and says how to answer it.
func TestItems_AQuestionComesFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	at := storetest.T0
	b.objective(t, "blocked", "CRITICAL", at)
	blocked := b.moveTo(t, "blocked", domain.StatusBlocked)
	b.pause(t, pause.Blocked("blocked", blocked.StatusSeq, []string{"waiting on legal"}, at))
	b.objective(t, "asks", "LOW", at.Add(time.Hour))
	ref := domain.GateBlocker("wo-asks-1")
	asks, err := b.st.TransitionObjective(b.ctx, store.TransitionObjectiveParams{ObjectiveID: "asks", To: domain.StatusTodo,
		BlockerRef: &ref, Now: at})
	require.NoError(t, err)
	b.pause(t, pause.Question("asks", asks.StatusSeq, "wo-asks-1", "Which database?", budget.Standing{}, at))

	items, err := b.src.Items(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []row{{inbox.KindQuestion, "asks"}, {inbox.KindBlocked, "blocked"}}, rows(items))
	require.Equal(t, "Answer the agent's question: Which database?", items[0].Actions[0].Text)
	require.Equal(t, []string{`az objective answer asks "your answer"`}, commands(items[0]))
}
