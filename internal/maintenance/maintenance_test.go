package maintenance_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/maintenance"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// counter is a pass that counts its runs.
type counter struct{ n atomic.Int64 }

func (c *counter) pass(context.Context) (int64, error) { return c.n.Add(1), nil }

func leadership(st store.Store, owner string) *maintenance.Leadership {
	return &maintenance.Leadership{Name: "test loop", Claims: claim.NewBridge(st), ResourceType: domain.ResourcePoller,
		ResourceID: domain.PollerLeadership, Owner: owner, TTL: time.Minute}
}

func TestRunOnce_WithoutLeadershipEveryInstancePasses(t *testing.T) {
	t.Parallel()
	var c counter
	l := &maintenance.Loop[int64]{Name: "test loop", Interval: time.Hour, Pass: c.pass}
	n, led, err := l.RunOnce(t.Context())
	require.NoError(t, err)
	require.True(t, led)
	require.Equal(t, int64(1), n)
}

func TestRunOnce_OneInstanceLeadsAndAStoppedLeaderHandsOver(t *testing.T) {
	t.Parallel()
	st := storetest.NewSQLite(t)
	var ca, cb counter
	var seen []bool
	a := &maintenance.Loop[int64]{Name: "a", Interval: time.Hour, Pass: ca.pass, Leadership: leadership(st, "a")}
	b := &maintenance.Loop[int64]{Name: "b", Interval: time.Hour, Pass: cb.pass, Leadership: leadership(st, "b"),
		Passed: func(_ int64, led bool, _ error) { seen = append(seen, led) }}

	_, led, err := a.RunOnce(t.Context())
	require.NoError(t, err)
	require.True(t, led)
	_, led, err = b.RunOnce(t.Context())
	require.NoError(t, err)
	require.False(t, led, "b stands by while a leads")
	require.Zero(t, cb.n.Load(), "a standby does not pass")
	_, led, err = a.RunOnce(t.Context())
	require.NoError(t, err)
	require.True(t, led, "a renews its leadership")

	a.Stop()
	require.False(t, a.Leadership.Leads(), "a stopped leader resigns")
	_, led, err = b.RunOnce(t.Context())
	require.NoError(t, err)
	require.True(t, led, "the standby leads at its next pass, not a lease later")
	require.Equal(t, int64(1), cb.n.Load())
	require.Equal(t, []bool{false, true}, seen, "Passed sees a standby's passes too")
}

func TestStart_PassesUntilStopped(t *testing.T) {
	t.Parallel()
	var c counter
	l := &maintenance.Loop[int64]{Name: "test loop", Interval: 10 * time.Millisecond, Pass: c.pass}
	l.Start(t.Context())
	require.Eventually(t, func() bool { return c.n.Load() >= 3 }, 10*time.Second, 5*time.Millisecond)
	l.Stop() // returns once the loop's goroutine has ended
	l.Stop() // and may be called again
}

func TestStart_AFailedPassDoesNotStopTheLoop(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	l := &maintenance.Loop[int64]{Name: "test loop", Interval: 10 * time.Millisecond,
		Pass:   func(context.Context) (int64, error) { return 0, errors.New("store down") },
		Passed: func(int64, bool, error) { n.Add(1) }}
	l.Start(t.Context())
	defer l.Stop()
	require.Eventually(t, func() bool { return n.Load() >= 3 }, 10*time.Second, 5*time.Millisecond)
}

func TestLoop_WakeRunsAPassBeforeTheInterval(t *testing.T) {
	t.Parallel()
	passes := make(chan struct{}, 4)
	l := &maintenance.Loop[int]{Name: "woken", Interval: time.Hour, Pass: func(context.Context) (int, error) {
		passes <- struct{}{}
		return 0, nil
	}}
	l.Wake() // before Start: remembered at most once, never blocks
	l.Start(context.Background())
	defer l.Stop()
	<-passes // the first pass, at once
	<-passes // the wake given before Start
	l.Wake()
	<-passes // an hour early
	l.Stop()
	l.Wake() // after Stop: nothing, and no block
	require.Empty(t, passes)
}
