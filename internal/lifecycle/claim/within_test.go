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
	"github.com/azolla/azolla/internal/store"
)

// Within takes the claim, writes and releases it at one commit: the row
// ends released, two versions on, and the write is in.
func TestWithin_AcquiresWritesAndReleasesAtOneCommit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		emitReady(t, tb.store, "ev-w")
		ok, err := tb.a.Within(ctx, domain.ResourceEvent, "ev-w", "w1", time.Minute, func(q store.Querier) error {
			c, err := q.GetClaim(ctx, domain.ResourceEvent, "ev-w")
			require.NoError(t, err)
			require.Equal(t, "w1", c.OwnerID, "held inside the transaction")
			require.Nil(t, c.ReleasedAt)
			_, err = q.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: "ev-w", Reason: "SCHEDULED", Now: time.Now()})
			return err
		})
		require.NoError(t, err)
		require.True(t, ok)
		c, err := tb.store.GetClaim(ctx, domain.ResourceEvent, "ev-w")
		require.NoError(t, err)
		require.NotNil(t, c.ReleasedAt, "released at the commit")
		require.Equal(t, int64(2), c.ClaimVersion)
		ev, err := tb.store.GetEvent(ctx, "ev-w")
		require.NoError(t, err)
		require.True(t, ev.Processed)
		// Released: the next owner takes it at once.
		_, ok, err = tb.a.Acquire(ctx, domain.ResourceEvent, "ev-w", "w2", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
	})
}

// A live claim held by another owner refuses Within: fn never runs and the
// holder's row is untouched.
func TestWithin_LiveClaimIsRefusedAndNothingRuns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		l, ok, err := tb.a.Acquire(ctx, domain.ResourceEvent, "ev-h", "holder", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		ran := false
		ok, err = tb.a.Within(ctx, domain.ResourceEvent, "ev-h", "w2", time.Minute, func(store.Querier) error {
			ran = true
			return nil
		})
		require.NoError(t, err)
		require.False(t, ok)
		require.False(t, ran)
		c, err := tb.store.GetClaim(ctx, domain.ResourceEvent, "ev-h")
		require.NoError(t, err)
		require.Equal(t, l.Record(), *c)
	})
}

// fn's error rolls the whole transaction back: the claim was never taken
// (no row), the write is not in, and the error is fn's.
func TestWithin_FailedWorkRollsTheClaimBack(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		boom := errors.New("boom")
		ok, err := tb.a.Within(ctx, domain.ResourceWorkOrder, "wo-r", "w1", time.Minute, func(q store.Querier) error {
			return boom
		})
		require.ErrorIs(t, err, boom)
		require.False(t, ok)
		_, err = tb.store.GetClaim(ctx, domain.ResourceWorkOrder, "wo-r")
		require.ErrorIs(t, err, domain.ErrNotFound)
	})
}

// An expired claim is taken over by Within, as by Acquire.
func TestWithin_TakesOverALapsedClaim(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		_, ok, err := tb.a.Acquire(ctx, domain.ResourceWorkOrder, "wo-l", "crashed", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = tb.b.Within(ctx, domain.ResourceWorkOrder, "wo-l", "w2", time.Minute, func(store.Querier) error { return nil })
		require.NoError(t, err)
		require.True(t, ok)
		c, err := tb.store.GetClaim(ctx, domain.ResourceWorkOrder, "wo-l")
		require.NoError(t, err)
		require.Equal(t, "w2", c.OwnerID)
		require.Equal(t, int64(3), c.ClaimVersion)
	})
}

// Owners racing Within on one resource write its outcome once: whoever
// commits first processes the event, and every other finds the claim held
// (refused), or takes it after the release and finds the work done.
func TestWithin_RacingOwnersWriteOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb testBundle) {
		ctx := context.Background()
		emitReady(t, tb.store, "ev-race")
		const owners = 8
		var wrote atomic.Int32
		errs := make(chan error, owners)
		for i := range owners {
			go func() {
				_, err := tb.a.Within(ctx, domain.ResourceEvent, "ev-race", fmt.Sprintf("w%d", i), time.Minute,
					func(q store.Querier) error {
						ev, err := q.GetEvent(ctx, "ev-race")
						if err != nil || ev.Processed {
							return err
						}
						wrote.Add(1)
						_, err = q.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: "ev-race",
							Reason: "SCHEDULED", Now: time.Now()})
						return err
					})
				errs <- err
			}()
		}
		for range owners {
			require.NoError(t, <-errs)
		}
		require.Equal(t, int32(1), wrote.Load())
	})
}

// emitReady stores an unprocessed TICKET_READY event named id, the work a
// test's claim holder does.
func emitReady(t *testing.T, s store.Store, id string) {
	t.Helper()
	_, _, err := s.EmitEvent(context.Background(), &domain.Event{EventID: id, EventType: domain.EventTicketReady,
		SubjectID: "obj-" + id, TransitionSeq: 1, CreatedAt: time.Now()})
	require.NoError(t, err)
}
