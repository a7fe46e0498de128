package transition_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/transition"
)

var statuses = []domain.Status{domain.StatusNew, domain.StatusTodo, domain.StatusInProgress, domain.StatusDone, domain.StatusBlocked}

// The table, read as the protocol states it (docs/protocol/lifecycle.md): which status may take which
// transition. Every (transition, status) pair is listed, so a changed rule
// fails here.
func TestAllows_TheSeedsStateMachine(t *testing.T) {
	t.Parallel()
	allowed := map[transition.Name][]domain.Status{
		transition.Approve:  {domain.StatusNew},
		transition.Reject:   {domain.StatusNew},
		transition.Retry:    {domain.StatusTodo, domain.StatusBlocked},
		transition.Unblock:  {domain.StatusTodo, domain.StatusBlocked},
		transition.Schedule: {domain.StatusTodo},
		transition.Block:    {domain.StatusTodo},
		transition.Pass:     {domain.StatusInProgress},
		transition.Fail:     {domain.StatusInProgress},
		transition.Revise:   {domain.StatusDone},
	}
	for name, from := range allowed {
		for _, status := range statuses {
			want := false
			for _, f := range from {
				want = want || f == status
			}
			require.Equal(t, want, name.Allows(status), "%s from %s", name, status)
		}
	}
	require.True(t, transition.Executable(domain.StatusTodo))
	for _, s := range []domain.Status{domain.StatusNew, domain.StatusInProgress, domain.StatusDone, domain.StatusBlocked} {
		require.False(t, transition.Executable(s), "scheduling: %s is not executable", s)
	}
}

func TestParams_SayWhatEachTransitionClears(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		name                   transition.Name
		to                     domain.Status
		clearsRef, clearsBlock bool
	}{
		{transition.Approve, domain.StatusTodo, false, false},
		{transition.Retry, domain.StatusTodo, true, false},
		{transition.Unblock, domain.StatusTodo, true, true},
		{transition.Schedule, domain.StatusInProgress, false, false},
		{transition.Block, domain.StatusBlocked, false, false},
		{transition.Pass, domain.StatusDone, true, false},
		{transition.Fail, domain.StatusTodo, false, false},
	}
	for _, tc := range cases {
		p := tc.name.Params("obj-1", now)
		require.Equal(t, "obj-1", p.ObjectiveID)
		require.Equal(t, tc.to, p.To, tc.name)
		require.Equal(t, tc.name.Rule().From, p.From, tc.name)
		require.Equal(t, now, p.Now)
		require.Equal(t, tc.clearsRef, p.BlockerRef != nil, "%s clears blocker_ref", tc.name)
		if p.BlockerRef != nil {
			require.Empty(t, *p.BlockerRef)
		}
		require.Equal(t, tc.clearsBlock, p.Blockers != nil, "%s clears blockers", tc.name)
		if p.Blockers != nil {
			require.Empty(t, *p.Blockers)
		}
	}
	require.Panics(t, func() { transition.Reject.Params("obj-1", now) }, "reject writes no transition")
	require.Panics(t, func() { transition.Name("teleport").Rule() })
}

func TestSettled_FindsACommittedRetry(t *testing.T) {
	t.Parallel()
	todo := &domain.Objective{Status: domain.StatusTodo}
	require.True(t, transition.Retry.Settled(todo))
	require.True(t, transition.Unblock.Settled(todo))

	failed := &domain.Objective{Status: domain.StatusTodo, BlockerRef: domain.GateBlocker("wo-1")}
	require.False(t, transition.Retry.Settled(failed), "a gate blocker is what retry clears")

	blockers := &domain.Objective{Status: domain.StatusTodo, Blockers: []string{"needs a key"}}
	require.True(t, transition.Retry.Settled(blockers), "retry keeps the blockers")
	require.False(t, transition.Unblock.Settled(blockers), "unblock clears them")
	require.False(t, transition.Approve.Settled(&domain.Objective{Status: domain.StatusNew}))
}

func TestRefusal_NamesTheStatusAndWhatWasNeeded(t *testing.T) {
	t.Parallel()
	err := transition.Reject.Refusal("obj-1", domain.StatusDone)
	var te *domain.TransitionError
	require.ErrorAs(t, err, &te)
	require.Equal(t, string(domain.StatusDone), te.Current)
	require.Equal(t, []string{string(domain.StatusNew)}, te.From)
}

func TestBlockerRef_KindAndID(t *testing.T) {
	t.Parallel()
	g := domain.GateBlocker("wo-obj-1-3")
	require.Equal(t, domain.BlockerRef("gate:wo-obj-1-3"), g)
	require.Equal(t, domain.BlockerGate, g.Kind())
	require.Equal(t, "wo-obj-1-3", g.ID())
	b := domain.BlockersOf("obj-1")
	require.Equal(t, domain.BlockerBlockers, b.Kind())
	require.Equal(t, "obj-1", b.ID())
	require.Empty(t, domain.BlockerRef("").Kind())
}
