package transition_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/transition"
)

var statuses = []store.Status{store.StatusNew, store.StatusTodo, store.StatusInProgress, store.StatusDone, store.StatusBlocked}

// The table, read as the protocol states it (docs/protocol/lifecycle.md): which status may take which
// transition. Every (transition, status) pair is listed, so a changed rule
// fails here.
func TestAllows_TheSeedsStateMachine(t *testing.T) {
	t.Parallel()
	allowed := map[transition.Name][]store.Status{
		transition.Approve:  {store.StatusNew},
		transition.Reject:   {store.StatusNew},
		transition.Retry:    {store.StatusTodo, store.StatusBlocked},
		transition.Unblock:  {store.StatusTodo, store.StatusBlocked},
		transition.Schedule: {store.StatusTodo},
		transition.Block:    {store.StatusTodo},
		transition.Pass:     {store.StatusInProgress},
		transition.Fail:     {store.StatusInProgress},
		transition.Revise:   {store.StatusDone},
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
	require.True(t, transition.Executable(store.StatusTodo))
	for _, s := range []store.Status{store.StatusNew, store.StatusInProgress, store.StatusDone, store.StatusBlocked} {
		require.False(t, transition.Executable(s), "scheduling: %s is not executable", s)
	}
}

func TestParams_SayWhatEachTransitionClears(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		name                   transition.Name
		to                     store.Status
		clearsRef, clearsBlock bool
	}{
		{transition.Approve, store.StatusTodo, false, false},
		{transition.Retry, store.StatusTodo, true, false},
		{transition.Unblock, store.StatusTodo, true, true},
		{transition.Schedule, store.StatusInProgress, false, false},
		{transition.Block, store.StatusBlocked, false, false},
		{transition.Pass, store.StatusDone, true, false},
		{transition.Fail, store.StatusTodo, false, false},
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
	todo := &store.Objective{Status: store.StatusTodo}
	require.True(t, transition.Retry.Settled(todo))
	require.True(t, transition.Unblock.Settled(todo))

	failed := &store.Objective{Status: store.StatusTodo, BlockerRef: store.GateBlocker("wo-1")}
	require.False(t, transition.Retry.Settled(failed), "a gate blocker is what retry clears")

	blockers := &store.Objective{Status: store.StatusTodo, Blockers: []string{"needs a key"}}
	require.True(t, transition.Retry.Settled(blockers), "retry keeps the blockers")
	require.False(t, transition.Unblock.Settled(blockers), "unblock clears them")
	require.False(t, transition.Approve.Settled(&store.Objective{Status: store.StatusNew}))
}

func TestRefusal_NamesTheStatusAndWhatWasNeeded(t *testing.T) {
	t.Parallel()
	err := transition.Reject.Refusal("obj-1", store.StatusDone)
	var te *store.TransitionError
	require.ErrorAs(t, err, &te)
	require.Equal(t, string(store.StatusDone), te.Current)
	require.Equal(t, []string{string(store.StatusNew)}, te.From)
}

func TestBlockerRef_KindAndID(t *testing.T) {
	t.Parallel()
	g := store.GateBlocker("wo-obj-1-3")
	require.Equal(t, store.BlockerRef("gate:wo-obj-1-3"), g)
	require.Equal(t, store.BlockerGate, g.Kind())
	require.Equal(t, "wo-obj-1-3", g.ID())
	b := store.BlockersOf("obj-1")
	require.Equal(t, store.BlockerBlockers, b.Kind())
	require.Equal(t, "obj-1", b.ID())
	require.Empty(t, store.BlockerRef("").Kind())
}
