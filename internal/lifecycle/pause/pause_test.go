package pause_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/schemas"
)

var now = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

// Every constructor makes a valid record whose kinds match its actions one
// for one, even when the facts it is given hold control characters.
func TestConstructors_MakeValidRecordsWithOneKindPerAction(t *testing.T) {
	t.Parallel()
	keep := pause.KeepBranchAction("azolla/obj-1", 7*24*time.Hour)
	hostile := "gate command exited 1: \x1b]0;pwned\x07\x1b[31mred\u202e"
	cases := map[string]struct {
		ps    domain.PauseState
		kinds []string
	}{
		"run complete on a branch": {pause.RunComplete("obj-1", 3, "wo-obj-1-2", "azolla/obj-1", nil, now),
			[]string{pause.ReviewBranch, pause.ConfirmCompletion}},
		"run complete, not pushed": {pause.RunComplete("obj-1", 3, "wo-obj-1-2", "azolla/obj-1", keep, now),
			[]string{pause.ReviewBranch, pause.KeepBranch, pause.ConfirmCompletion}},
		"run complete without a branch": {pause.RunComplete("obj-1", 3, "wo-obj-1-2", "", nil, now),
			[]string{pause.ReviewOutput, pause.ConfirmCompletion}},
		"gate failed": {pause.GateFailed("obj-1", 3, "wo-obj-1-2", hostile+"\nsecond line", keep, nil, now),
			[]string{pause.ReviewGateFailure, pause.Retry, pause.KeepBranch}},
		"gate failed again": {pause.GateFailed("obj-1", 3, "wo-obj-1-2", "exit 1", nil, pause.Repeated("wo-obj-1-1"), now),
			[]string{pause.ReviewGateFailure, pause.ReviewRepeatedFailure, pause.Retry}},
		"budget spent": {pause.BudgetSpent("obj-1", 3, "wo-obj-1-2", "exit 1", standing(4.5, 3, 1, 4),
			keep, nil, now), []string{pause.ReviewGateFailure, pause.AddBudget, pause.Retry, pause.KeepBranch}},
		"budget spent before a round": {pause.BudgetSpent("obj-1", 3, "", "", standing(4, 2, 0, 4), nil, nil, now),
			[]string{pause.AddBudget, pause.Retry}},
		"run complete past the budget": {pause.RunCompleteOn("obj-1", 3, "wo-obj-1-2", "azolla/obj-1", "", nil,
			pause.Overspent(standing(0.007, 1, 0, 0.005)), now),
			[]string{pause.ReviewBranch, pause.ReviewSpend, pause.ConfirmCompletion}},
		"blocked": {pause.Blocked("obj-1", 4, []string{"base branch main is missing", "needs a key"}, now),
			[]string{pause.ResolveBlockers, pause.Unblock}},
		"rejected": {pause.Rejected("obj-1", 0, "ana", "out of scope", now),
			[]string{pause.ReviewRejection, pause.CreateRefined}},
	}
	for name, tc := range cases {
		require.NoError(t, schemas.Validate(schemas.PauseState, tc.ps), name)
		require.Equal(t, tc.kinds, tc.ps.ActionKinds, name)
		require.Len(t, tc.ps.PrioritizedActions, len(tc.ps.ActionKinds), name)
		for _, a := range tc.ps.PrioritizedActions {
			for _, r := range a {
				require.False(t, r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u202e', "%s: action %q holds %U", name, a, r)
			}
		}
	}
	failed := cases["gate failed"].ps
	require.Equal(t, "ps-obj-1-3-GATE_FAILED", failed.PauseStateID)
	require.Equal(t, "wo-obj-1-2", failed.WorkOrderID)
	require.NotContains(t, failed.PrioritizedActions[0], "second line", "only the failure's first line is quoted")
	require.Equal(t, "Refine objective and retry", failed.PrioritizedActions[1], "the words of the patch flow")
	require.Equal(t, []string{"Review PR on azolla/obj-1", "Confirm completion"},
		cases["run complete on a branch"].ps.PrioritizedActions, "the words of the patch flow")
	require.Equal(t, "Re-emit TICKET_READY after resolution", cases["blocked"].ps.PrioritizedActions[1])
	require.Equal(t, "Spent $4.50 of its $4.00 budget (over by $0.50), plus 1 run(s) of unknown cost: raise the budget to run again",
		cases["budget spent"].ps.PrioritizedActions[1])
	require.Equal(t, "ps-obj-1-3-BUDGET_SPENT", cases["budget spent"].ps.PauseStateID)
	require.Equal(t, "Spent $0.007 of its $0.005 budget (over by $0.002)",
		cases["run complete past the budget"].ps.PrioritizedActions[1], "below a cent, the digits that are there")
}

// Commands are rendered at the edge from the kinds, as the user invoked
// azolla; an action for the human alone, and a record written before kinds
// existed, get none.
func TestCommand_RendersFromTheKind(t *testing.T) {
	t.Parallel()
	failed := pause.GateFailed("obj-1", 3, "wo-obj-1-2", "exit 1", nil, nil, now)
	require.Equal(t, "./bin/azolla objective show obj-1", pause.Command("./bin/azolla", &failed, 0))
	require.Equal(t, `azolla objective retry obj-1 --comment "what to do differently"`, pause.Command("azolla", &failed, 1))
	blocked := pause.Blocked("obj-1", 4, []string{"x"}, now)
	require.Empty(t, pause.Command("azolla", &blocked, 0), "resolving a blocker is the human's")
	require.Equal(t, "azolla objective unblock obj-1", pause.Command("azolla", &blocked, 1))
	require.Empty(t, pause.Command("azolla", &blocked, 2), "out of range")
	legacy := domain.PauseState{ObjectiveID: "obj-1", Reason: domain.PauseGateFailed,
		PrioritizedActions: []string{"Refine objective and retry: azolla objective retry obj-1"}}
	require.Empty(t, pause.Command("azolla", &legacy, 0))
}

func TestWarned_OnlyWithAKeepBranchAction(t *testing.T) {
	t.Parallel()
	plain := pause.RunComplete("obj-1", 3, "wo-1", "azolla/obj-1", nil, now)
	require.False(t, pause.Warned(&plain))
	warned := pause.RunComplete("obj-1", 3, "wo-1", "azolla/obj-1", pause.KeepBranchAction("azolla/obj-1", time.Hour), now)
	require.True(t, pause.Warned(&warned))
}

func TestDuration_ReadsAsAPersonWouldSayIt(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		7 * 24 * time.Hour: "7 days", 36 * time.Hour: "36 hours", 90 * time.Minute: "90 minutes",
		time.Hour: "60 minutes", 90 * time.Second: "1m30s",
	} {
		require.Equal(t, want, pause.Duration(d))
	}
}

func TestWasRejected_ReadsTheLatestPauseOfItsOwn(t *testing.T) {
	p := func(reason string) *domain.PauseState { return &domain.PauseState{Reason: reason} }
	for _, c := range []struct {
		name   string
		pauses []*domain.PauseState
		want   bool
	}{
		{"none", nil, false},
		{"rejected", []*domain.PauseState{p(domain.PauseRejected)}, true},
		{"rejected, then overdue", []*domain.PauseState{p(domain.PauseRejected), p(domain.PauseOverdue)}, true},
		{"rejected, then paused again", []*domain.PauseState{p(domain.PauseRejected), p(domain.PauseGateFailed)}, false},
		{"only overdue", []*domain.PauseState{p(domain.PauseOverdue)}, false},
	} {
		require.Equal(t, c.want, pause.WasRejected(c.pauses), c.name)
	}
}

// standing is an objective's budget of cap dollars against runs that
// spent usd, unknown of them of unknown cost.
func standing(usd float64, runs, unknown int, cap float64) budget.Standing {
	return budget.Standing{ObjectiveID: "obj-1", Budget: &cap, Spend: domain.Spend{USD: usd, Runs: runs, Unknown: unknown}}
}
