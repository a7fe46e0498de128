package claim_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/claim"
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
		l, ok, err := tb.a.Acquire(ctx, store.ResourceEvent, "ev-1", "w1", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "w1", l.Record().OwnerID)
		_, ok, err = tb.a.Acquire(ctx, store.ResourceEvent, "ev-1", "w2", time.Minute)
		require.NoError(t, err)
		require.False(t, ok)
	})
}

func TestKeeper_RenewsUntilStopped(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		l, _, err := tb.a.Acquire(ctx, store.ResourceWorkOrder, "wo-1", "w1", 600*time.Millisecond)
		require.NoError(t, err)
		var renewals atomic.Int32
		// Ask for a slow interval: the keeper clamps it to TTL/3.
		kctx, stop := l.Keep(ctx, claim.KeepOptions{Interval: time.Hour, OnRenew: func() { renewals.Add(1) }})
		time.Sleep(1500 * time.Millisecond)
		require.NoError(t, kctx.Err(), "a kept lease is not lost")
		stop()
		require.GreaterOrEqual(t, renewals.Load(), int32(2), "renewed at TTL/3, well past the 600ms TTL")
		rec := l.Record()
		require.Equal(t, int64(1+renewals.Load()), rec.ClaimVersion)
		_, ok, err := tb.a.Acquire(ctx, store.ResourceWorkOrder, "wo-1", "w2", time.Minute)
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
		l, _, err := tb.a.Acquire(ctx, store.ResourceEvent, wo.EventID, "w1", 300*time.Millisecond)
		require.NoError(t, err)
		kctx, stop := l.Keep(ctx, claim.KeepOptions{})
		defer stop()

		taker, ok, err := tb.b.Acquire(ctx, store.ResourceEvent, wo.EventID, "w2", time.Minute)
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
		require.ErrorIs(t, err, store.ErrNotFound)
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
		stale, _, err := tb.a.Acquire(ctx, store.ResourceEvent, wo.EventID, "w1", time.Minute)
		require.NoError(t, err)
		_, ok, err := tb.b.Acquire(ctx, store.ResourceEvent, wo.EventID, "w2", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)

		ran := false
		err = stale.Fenced(ctx, func(q store.Querier) error {
			ran = true
			_, err := q.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: wo.EventID, Reason: store.ReasonScheduled})
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

// flakyStore fails every renewal as a database outage would.
type flakyStore struct{ store.Store }

func (flakyStore) RenewClaim(context.Context, store.RenewClaimParams) (*store.ClaimRecord, error) {
	return nil, errors.New("connection refused")
}

func TestKeeper_LapsedLeaseCancelsHolderWhenRenewalsFail(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		br := claim.NewBridge(flakyStore{tb.store})
		l, _, err := br.Acquire(ctx, store.ResourceWorkOrder, "wo-1", "w1", 300*time.Millisecond)
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
		stale, _, err := tb.a.Acquire(ctx, store.ResourceEvent, "ev-1", "w1", time.Minute)
		require.NoError(t, err)
		taker, ok, err := tb.b.Acquire(ctx, store.ResourceEvent, "ev-1", "w2", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)

		require.ErrorIs(t, stale.Release(ctx), claim.ErrNotHolder)
		rec, err := tb.store.GetClaim(ctx, store.ResourceEvent, "ev-1")
		require.NoError(t, err)
		require.Equal(t, taker.Record(), *rec, "the refused release changed nothing")
	})
}
