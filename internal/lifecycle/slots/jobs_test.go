package slots_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"github.com/azolla/azolla/internal/store"
)

// A run's slot handed to a job: KeepFor renews it for the job, finds it
// lost once another run holds it, and takes a lapsed, free one back only
// when asked to; ReleaseFor gives up what is still the job's.
func TestKeepFor_AJobHoldsTheSlotsItWasHanded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		s := newSlots(st, slots.Limits{Repositories: map[string]int{"/repo/a": 1}}, nil)
		held, ok, err := s.Try(ctx, req("wo-1", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok)
		refs := held.Refs()
		require.Len(t, refs, 1)
		held.Disown()
		held.Release(ctx) // disowned: gives nothing up
		slot := func() *domain.ClaimRecord {
			c, err := st.GetClaim(ctx, domain.ResourceRunSlot, refs[0].ResourceID)
			require.NoError(t, err)
			return c
		}
		require.True(t, slot().Live(time.Now()), "a disowned slot is not released")

		// Renewed for the job, twice at the same instant as a heartbeat
		// and a reaper's pass would.
		now := time.Now()
		require.NoError(t, slots.KeepFor(ctx, st, refs, 10*time.Minute, now, false))
		require.NoError(t, slots.KeepFor(ctx, st, refs, 10*time.Minute, now, false))
		require.WithinDuration(t, now.Add(10*time.Minute), slot().LeaseExpiresAt, time.Second)
		require.Equal(t, refs[0].OwnerID, slot().OwnerID)

		// Lapsed and taken by another run: lost, with or without reacquire.
		later := time.Now().Add(time.Hour)
		other := newSlots(st, slots.Limits{Repositories: map[string]int{"/repo/a": 1}}, func() time.Time { return later })
		taker, ok, err := other.Try(ctx, req("wo-2", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok, "the lapsed slot is free to another run")
		for _, reacquire := range []bool{false, true} {
			err = slots.KeepFor(ctx, st, refs, time.Minute, later, reacquire)
			require.ErrorIs(t, err, domain.ErrLeaseLost, "reacquire %t", reacquire)
		}
		require.Contains(t, slot().OwnerID, "wo-2", "the other run keeps its slot")
		require.NoError(t, slots.ReleaseFor(ctx, st, refs, later))
		require.True(t, slot().Live(later), "releasing for the job leaves another run's slot alone")

		// Lapsed and free: taken back only with reacquire.
		taker.Release(ctx)
		err = slots.KeepFor(ctx, st, refs, time.Minute, later, false)
		require.ErrorIs(t, err, domain.ErrLeaseLost, "a lapsed slot is not renewed")
		require.NoError(t, slots.KeepFor(ctx, st, refs, time.Minute, later, true))
		require.Equal(t, refs[0].OwnerID, slot().OwnerID, "taken back for the job")
		require.True(t, slot().Live(later))

		require.NoError(t, slots.ReleaseFor(ctx, st, refs, later))
		require.False(t, slot().Live(later), "given up with the job")
		require.NoError(t, slots.ReleaseFor(ctx, st, refs, later), "releasing again changes nothing")
		require.NoError(t, slots.KeepFor(ctx, st, nil, time.Minute, later, false), "a job without slots holds nothing")
	})
}
