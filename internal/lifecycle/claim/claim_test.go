package claim_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// testBundle is what each test gets: a store and two bridges on it, the
// second with a clock far enough ahead that every lease of the first looks
// expired to it (a worker that took over after a crash).
type testBundle struct {
	store store.Store
	a, b  *claim.Bridge
}

func forEachBackend(t *testing.T, test func(t *testing.T, tb testBundle)) {
	for _, be := range storetest.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			s := be.Open(t)
			ahead := func() time.Time { return time.Now().Add(time.Hour) }
			test(t, testBundle{store: s, a: claim.NewBridge(s), b: claim.NewBridge(s, claim.WithClock(ahead))})
		})
	}
}

func TestAcquire_LiveClaimIsSkipped(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		l, ok, err := tb.a.Acquire(ctx, domain.ResourceEvent, "ev-1", "w1", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "w1", l.Record().OwnerID)
		_, ok, err = tb.a.Acquire(ctx, domain.ResourceEvent, "ev-1", "w2", time.Minute)
		require.NoError(t, err)
		require.False(t, ok)
	})
}

func TestKeeper_RenewsUntilStopped(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		l, _, err := tb.a.Acquire(ctx, domain.ResourceWorkOrder, "wo-1", "w1", 600*time.Millisecond)
		require.NoError(t, err)
		var renewals atomic.Int32
		renewed := make(chan struct{}, 1)
		// Ask for a slow interval: the keeper clamps it to TTL/3.
		kctx, stop := l.Keep(ctx, claim.KeepOptions{Interval: time.Hour, OnRenew: func() {
			renewals.Add(1)
			select {
			case renewed <- struct{}{}:
			default:
			}
		}})
		// Four renewals at TTL/3 take the lease well past its first 600ms.
		for renewals.Load() < 4 {
			select {
			case <-renewed:
			case <-kctx.Done():
				t.Fatalf("a kept lease was lost: %v", context.Cause(kctx))
			case <-time.After(5 * time.Second):
				t.Fatalf("the keeper stopped renewing after %d renewals", renewals.Load())
			}
		}
		stop()
		require.Equal(t, context.Canceled, context.Cause(kctx), "stopped, not lost")
		rec := l.Record()
		require.Equal(t, int64(1+renewals.Load()), rec.ClaimVersion)
		_, ok, err := tb.a.Acquire(ctx, domain.ResourceWorkOrder, "wo-1", "w2", time.Minute)
		require.NoError(t, err)
		require.False(t, ok, "a kept lease stays held")
		require.NoError(t, l.Release(ctx))
		require.ErrorIs(t, l.Release(ctx), claim.ErrReleased)
	})
}

func TestKeeper_CancelsHolderWhenLeaseIsTakenOver(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		wo := storetest.Scheduled(t, tb.store, "obj-1")
		l, _, err := tb.a.Acquire(ctx, domain.ResourceEvent, wo.EventID, "w1", 300*time.Millisecond)
		require.NoError(t, err)
		kctx, stop := l.Keep(ctx, claim.KeepOptions{})
		defer stop()

		taker, ok, err := tb.b.Acquire(ctx, domain.ResourceEvent, wo.EventID, "w2", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)

		select {
		case <-kctx.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("keeper did not notice the takeover")
		}
		require.ErrorIs(t, context.Cause(kctx), claim.ErrLeaseLost)
		var lost *claim.LeaseLostError
		require.ErrorAs(t, context.Cause(kctx), &lost)
		require.Equal(t, "w2", lost.HolderID)

		// The old holder's terminal write is refused and leaves no trace.
		err = l.Fenced(ctx, func(q store.Querier) error {
			_, _, err := q.CreateWorkOrder(ctx, wo)
			return err
		})
		require.ErrorIs(t, err, claim.ErrLeaseLost)
		_, err = tb.store.GetWorkOrderByEvent(ctx, wo.EventID)
		require.ErrorIs(t, err, domain.ErrNotFound)
		require.ErrorIs(t, l.Release(ctx), claim.ErrLeaseLost)

		require.NoError(t, taker.Fenced(ctx, func(q store.Querier) error {
			_, _, err := q.CreateWorkOrder(ctx, wo)
			return err
		}))
		require.NoError(t, taker.Release(ctx))
	})
}

func TestFenced_StaleHolderIsRefusedWithoutAKeeper(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		wo := storetest.Scheduled(t, tb.store, "obj-1")
		stale, _, err := tb.a.Acquire(ctx, domain.ResourceEvent, wo.EventID, "w1", time.Minute)
		require.NoError(t, err)
		_, ok, err := tb.b.Acquire(ctx, domain.ResourceEvent, wo.EventID, "w2", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)

		ran := false
		err = stale.Fenced(ctx, func(q store.Querier) error {
			ran = true
			_, err := q.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: wo.EventID, Reason: domain.ReasonScheduled})
			return err
		})
		require.ErrorIs(t, err, claim.ErrLeaseLost)
		require.False(t, ran, "the write never ran")
		ev, err := tb.store.GetEvent(ctx, wo.EventID)
		require.NoError(t, err)
		require.False(t, ev.Processed)
		require.ErrorIs(t, stale.Renew(ctx), claim.ErrLeaseLost)
	})
}

// renewSpy counts the renewals that reach the store and answers them as
// told: fail answers each with that error, as a database outage would; hang
// takes them and never answers, as a database that stopped would; neither
// passes them on.
type renewSpy struct {
	store.Store
	fail     error
	hang     bool
	renewals atomic.Int32
}

func (s *renewSpy) RenewClaim(ctx context.Context, p store.RenewClaimParams) (*domain.ClaimRecord, error) {
	s.renewals.Add(1)
	switch {
	case s.fail != nil:
		return nil, s.fail
	case s.hang:
		<-ctx.Done()
		return nil, fmt.Errorf("renew claim: %w", ctx.Err())
	}
	return s.Store.RenewClaim(ctx, p)
}

func TestKeeper_LapsedLeaseCancelsHolderWhenRenewalsFail(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		br := claim.NewBridge(&renewSpy{Store: tb.store, fail: errors.New("connection refused")})
		l, _, err := br.Acquire(ctx, domain.ResourceWorkOrder, "wo-1", "w1", 300*time.Millisecond)
		require.NoError(t, err)
		var failures atomic.Int32
		kctx, stop := l.Keep(ctx, claim.KeepOptions{OnError: func(error) { failures.Add(1) }})
		defer stop()
		select {
		case <-kctx.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("keeper kept a lapsed lease")
		}
		require.ErrorIs(t, context.Cause(kctx), claim.ErrLeaseLost)
		require.GreaterOrEqual(t, failures.Load(), int32(2), "transient failures are retried until the lease lapses")
	})
}

func TestRelease_AfterUnnoticedTakeoverIsRefusedAsNotHolder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		stale, _, err := tb.a.Acquire(ctx, domain.ResourceEvent, "ev-1", "w1", time.Minute)
		require.NoError(t, err)
		taker, ok, err := tb.b.Acquire(ctx, domain.ResourceEvent, "ev-1", "w2", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)

		require.ErrorIs(t, stale.Release(ctx), claim.ErrNotHolder)
		rec, err := tb.store.GetClaim(ctx, domain.ResourceEvent, "ev-1")
		require.NoError(t, err)
		require.Equal(t, taker.Record(), *rec, "the refused release changed nothing")
	})
}

func TestKeeper_RenewalNeverAnsweredEndsWhenTheLeaseLapses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		hs := &renewSpy{Store: tb.store, hang: true}
		l, _, err := claim.NewBridge(hs).Acquire(ctx, domain.ResourceWorkOrder, "wo-1", "w1", 300*time.Millisecond)
		require.NoError(t, err)
		kctx, stop := l.Keep(ctx, claim.KeepOptions{})
		select {
		case <-kctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the holder was not told its lease lapsed behind a renewal that never came back")
		}
		require.ErrorIs(t, context.Cause(kctx), claim.ErrLeaseLost)
		require.ErrorContains(t, context.Cause(kctx), "WORKORDER wo-1 lapsed at")

		stopped := make(chan struct{})
		go func() { stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Fatal("stop waited on a renewal past the lapse")
		}
		require.EqualValues(t, 1, hs.renewals.Load(), "one renewal, cut off at the lapse")
		require.ErrorIs(t, l.Renew(ctx), claim.ErrLeaseLost)
		require.EqualValues(t, 1, hs.renewals.Load(), "a lapsed lease is not renewed")
	})
}

func TestRenew_LeaseLapsedByTheClockIsLostForGood(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		var at atomic.Int64
		at.Store(time.Now().UnixMicro())
		now := func() time.Time { return time.UnixMicro(at.Load()).UTC() }
		cs := &renewSpy{Store: tb.store}
		br := claim.NewBridge(cs, claim.WithClock(now))
		l, _, err := br.Acquire(ctx, domain.ResourceEvent, "ev-1", "w1", time.Minute)
		require.NoError(t, err)
		require.NoError(t, l.Renew(ctx))

		at.Add((2 * time.Minute).Microseconds())
		require.ErrorIs(t, l.Renew(ctx), claim.ErrLeaseLost)
		require.EqualValues(t, 1, cs.renewals.Load(), "the lapse is seen before the database is asked")
		ran := false
		err = l.Fenced(ctx, func(q store.Querier) error { ran = true; return nil })
		require.ErrorIs(t, err, claim.ErrLeaseLost)
		require.False(t, ran, "no write under a lapsed lease")

		// Nobody took it meanwhile: the holder acquires it again, as a new hold.
		again, ok, err := br.Acquire(ctx, domain.ResourceEvent, "ev-1", "w1", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		require.Greater(t, again.Record().ClaimVersion, l.Record().ClaimVersion)
		require.NoError(t, again.Release(ctx))
	})
}
