package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

func exerciseClaims(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("Acquire_LiveClaimIsNotAcquired", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c, ok, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, int64(1), c.ClaimVersion)
		require.Equal(t, T0.Add(time.Minute), c.LeaseExpiresAt)
		require.True(t, c.Live(T0))

		_, ok, err = s.AcquireClaim(ctx, acquire("ev-1", "w2", T0.Add(59*time.Second)))
		require.NoError(t, err, "a live claim is a skip, not an error")
		require.False(t, ok)
		got, err := s.GetClaim(ctx, store.ResourceEvent, "ev-1")
		require.NoError(t, err)
		require.Equal(t, c, got, "a failed acquisition changes nothing")
	})

	t.Run("Acquire_ExpiredClaimIsTakenOver", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		first, _, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0))
		require.NoError(t, err)
		taken, ok, err := s.AcquireClaim(ctx, acquire("ev-1", "w2", first.LeaseExpiresAt))
		require.NoError(t, err)
		require.True(t, ok, "lease_expires_at <= now is expired")
		require.Equal(t, "w2", taken.OwnerID)
		require.Equal(t, first.ClaimVersion+1, taken.ClaimVersion)
	})

	t.Run("Renew_ExtendsAndBumpsVersion", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c, _, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0))
		require.NoError(t, err)
		r, err := s.RenewClaim(ctx, renew(c, T0.Add(20*time.Second)))
		require.NoError(t, err)
		require.Equal(t, c.ClaimVersion+1, r.ClaimVersion)
		require.Equal(t, T0.Add(80*time.Second), r.LeaseExpiresAt)
		require.Equal(t, T0.Add(20*time.Second), r.HeartbeatAt)
		_, err = s.RenewClaim(ctx, renew(c, T0.Add(21*time.Second)))
		require.ErrorIs(t, err, store.ErrLeaseLost, "the old version no longer swaps")
	})

	t.Run("Renew_StaleHolderAfterTakeoverLosesLease", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		stale, _, err := s.AcquireClaim(ctx, acquire("wo-1", "w1", T0))
		require.NoError(t, err)
		_, ok, err := s.AcquireClaim(ctx, acquire("wo-1", "w2", T0.Add(2*time.Minute)))
		require.NoError(t, err)
		require.True(t, ok)

		_, err = s.RenewClaim(ctx, renew(stale, T0.Add(2*time.Minute+time.Second)))
		var lost *store.LeaseLostError
		require.ErrorAs(t, err, &lost)
		require.Equal(t, "w2", lost.HolderID)
		require.Equal(t, stale.ClaimVersion+1, lost.HolderVersion)
		got, err := s.GetClaim(ctx, store.ResourceEvent, "wo-1")
		require.NoError(t, err)
		require.Equal(t, "w2", got.OwnerID)
	})

	t.Run("Release_ByNonHolderIsRefused", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c, _, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0))
		require.NoError(t, err)
		for _, p := range []store.ReleaseClaimParams{
			{ResourceType: store.ResourceEvent, ResourceID: "ev-1", OwnerID: "w2", ClaimVersion: c.ClaimVersion, Now: T0},
			{ResourceType: store.ResourceEvent, ResourceID: "ev-1", OwnerID: "w1", ClaimVersion: c.ClaimVersion + 7, Now: T0},
			{ResourceType: store.ResourceEvent, ResourceID: "ev-404", OwnerID: "w1", ClaimVersion: 1, Now: T0},
		} {
			_, err := s.ReleaseClaim(ctx, p)
			require.ErrorIs(t, err, store.ErrNotHolder)
		}
		got, err := s.GetClaim(ctx, store.ResourceEvent, "ev-1")
		require.NoError(t, err)
		require.Equal(t, c, got)
	})

	t.Run("Release_ExpiresNowAndKeepsVersionMonotonic", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c, _, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0))
		require.NoError(t, err)
		rel, err := s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: store.ResourceEvent, ResourceID: "ev-1",
			OwnerID: "w1", ClaimVersion: c.ClaimVersion, Now: T0.Add(time.Second)})
		require.NoError(t, err)
		require.False(t, rel.Live(T0.Add(time.Second)))
		require.Equal(t, c.ClaimVersion+1, rel.ClaimVersion)
		_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: store.ResourceEvent, ResourceID: "ev-1",
			OwnerID: "w1", ClaimVersion: rel.ClaimVersion, Now: T0.Add(time.Second)})
		require.ErrorIs(t, err, store.ErrNotHolder, "a released claim cannot be released again")

		next, ok, err := s.AcquireClaim(ctx, acquire("ev-1", "w2", T0.Add(time.Second)))
		require.NoError(t, err)
		require.True(t, ok, "a released claim is acquirable at once")
		require.Equal(t, rel.ClaimVersion+1, next.ClaimVersion)
		require.Nil(t, next.ReleasedAt)

		live, err := s.ListClaims(ctx, store.ListClaimsParams{LiveAt: &next.HeartbeatAt})
		require.NoError(t, err)
		require.Len(t, live, 1)
		later := next.LeaseExpiresAt
		live, err = s.ListClaims(ctx, store.ListClaimsParams{LiveAt: &later})
		require.NoError(t, err)
		require.Empty(t, live)
	})

	t.Run("Fence_StaleTerminalWriteIsRefusedAndRolledBack", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		wo := Scheduled(t, s, "obj-1")
		stale, _, err := s.AcquireClaim(ctx, acquire(wo.EventID, "w1", T0))
		require.NoError(t, err)
		fresh, ok, err := s.AcquireClaim(ctx, acquire(wo.EventID, "w2", T0.Add(2*time.Minute)))
		require.NoError(t, err)
		require.True(t, ok)

		err = s.InTx(ctx, func(q store.Querier) error {
			if err := q.CheckFence(ctx, fenceOf(stale)); err != nil {
				return err
			}
			_, _, err := q.CreateWorkOrder(ctx, wo)
			return err
		})
		require.ErrorIs(t, err, store.ErrLeaseLost)
		_, err = s.GetWorkOrderByEvent(ctx, wo.EventID)
		require.ErrorIs(t, err, store.ErrNotFound, "the fenced write did not happen")

		err = s.InTx(ctx, func(q store.Querier) error {
			if err := q.CheckFence(ctx, fenceOf(fresh)); err != nil {
				return err
			}
			_, _, err := q.CreateWorkOrder(ctx, wo)
			return err
		})
		require.NoError(t, err)
		_, err = s.GetWorkOrderByEvent(ctx, wo.EventID)
		require.NoError(t, err)

		err = s.InTx(ctx, func(q store.Querier) error {
			return q.CheckFence(ctx, store.Fence{ResourceType: store.ResourceEvent, ResourceID: "never", OwnerID: "w1", ClaimVersion: 1})
		})
		require.ErrorIs(t, err, store.ErrLeaseLost, "no claim, no write")
	})

	t.Run("Fence_SameOwnerOlderVersionIsRefused", func(t *testing.T) {
		// A worker restarted under the same identity re-acquires after its old
		// lease lapsed: only the version tells the two holds apart.
		s, ctx := open(t), context.Background()
		old, _, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0))
		require.NoError(t, err)
		cur, ok, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0.Add(2*time.Minute)))
		require.NoError(t, err)
		require.True(t, ok)
		err = s.InTx(ctx, func(q store.Querier) error { return q.CheckFence(ctx, fenceOf(old)) })
		require.ErrorIs(t, err, store.ErrLeaseLost)
		require.NoError(t, s.InTx(ctx, func(q store.Querier) error { return q.CheckFence(ctx, fenceOf(cur)) }))
		_, err = s.RenewClaim(ctx, renew(old, T0.Add(2*time.Minute)))
		require.ErrorIs(t, err, store.ErrLeaseLost)
		_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: old.ResourceType, ResourceID: old.ResourceID,
			OwnerID: old.OwnerID, ClaimVersion: old.ClaimVersion, Now: T0.Add(2 * time.Minute)})
		require.ErrorIs(t, err, store.ErrNotHolder)
	})

	t.Run("ClaimRows_AllValidAgainstSchema", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c, _, err := s.AcquireClaim(ctx, acquire("ev-1", "12345@host:azolla/objective-a/1", T0))
		require.NoError(t, err)
		_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: c.ResourceType, ResourceID: c.ResourceID,
			OwnerID: c.OwnerID, ClaimVersion: c.ClaimVersion, Now: T0.Add(time.Second)})
		require.NoError(t, err)
		_, _, err = s.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: store.ResourceWorkOrder, ResourceID: "wo-1", OwnerID: "w1", TTL: time.Minute, Now: T0})
		require.NoError(t, err)
		rows, err := s.ListClaims(ctx, store.ListClaimsParams{})
		require.NoError(t, err)
		require.Len(t, rows, 2)
		for _, r := range rows {
			require.NoError(t, schemas.Validate(schemas.ClaimRecord, r))
		}
	})

	t.Run("Contention_NoOverlappingLeases", func(t *testing.T) {
		r := RunContention(t, open(t), ContentionParams{Workers: 32, Resources: 8, Iterations: 40})
		t.Logf("contention: %+v", r)
		require.Zero(t, r.DoubleGrants, "overlapping leases: %v", r.Overlaps)
		// The run must have exercised what it claims to: real contention,
		// takeovers of expired leases and refused stale renewals.
		require.Positive(t, r.Acquired)
		require.Positive(t, r.Refused)
		require.Positive(t, r.Takeovers)
		require.Positive(t, r.Released)
	})
}

func acquire(id, owner string, now time.Time) store.AcquireClaimParams {
	return store.AcquireClaimParams{ResourceType: store.ResourceEvent, ResourceID: id, OwnerID: owner, TTL: time.Minute, Now: now}
}

func renew(c *store.ClaimRecord, now time.Time) store.RenewClaimParams {
	return store.RenewClaimParams{ResourceType: c.ResourceType, ResourceID: c.ResourceID, OwnerID: c.OwnerID,
		ClaimVersion: c.ClaimVersion, TTL: time.Minute, Now: now}
}

func fenceOf(c *store.ClaimRecord) store.Fence {
	return store.Fence{ResourceType: c.ResourceType, ResourceID: c.ResourceID, OwnerID: c.OwnerID, ClaimVersion: c.ClaimVersion}
}
