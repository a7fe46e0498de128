package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
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
		got, err := s.GetClaim(ctx, domain.ResourceEvent, "ev-1")
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
		require.ErrorIs(t, err, domain.ErrLeaseLost, "the old version no longer swaps")
	})

	t.Run("Renew_StaleHolderAfterTakeoverLosesLease", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		stale, _, err := s.AcquireClaim(ctx, acquire("wo-1", "w1", T0))
		require.NoError(t, err)
		_, ok, err := s.AcquireClaim(ctx, acquire("wo-1", "w2", T0.Add(2*time.Minute)))
		require.NoError(t, err)
		require.True(t, ok)

		_, err = s.RenewClaim(ctx, renew(stale, T0.Add(2*time.Minute+time.Second)))
		var lost *domain.LeaseLostError
		require.ErrorAs(t, err, &lost)
		require.Equal(t, "w2", lost.HolderID)
		require.Equal(t, stale.ClaimVersion+1, lost.HolderVersion)
		got, err := s.GetClaim(ctx, domain.ResourceEvent, "wo-1")
		require.NoError(t, err)
		require.Equal(t, "w2", got.OwnerID)
	})

	t.Run("Release_ByNonHolderIsRefused", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c, _, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0))
		require.NoError(t, err)
		for _, p := range []store.ReleaseClaimParams{
			{ResourceType: domain.ResourceEvent, ResourceID: "ev-1", OwnerID: "w2", ClaimVersion: c.ClaimVersion, Now: T0},
			{ResourceType: domain.ResourceEvent, ResourceID: "ev-1", OwnerID: "w1", ClaimVersion: c.ClaimVersion + 7, Now: T0},
			{ResourceType: domain.ResourceEvent, ResourceID: "ev-404", OwnerID: "w1", ClaimVersion: 1, Now: T0},
		} {
			_, err := s.ReleaseClaim(ctx, p)
			require.ErrorIs(t, err, domain.ErrNotHolder)
		}
		got, err := s.GetClaim(ctx, domain.ResourceEvent, "ev-1")
		require.NoError(t, err)
		require.Equal(t, c, got)
	})

	t.Run("Release_ExpiresNowAndKeepsVersionMonotonic", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c, _, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0))
		require.NoError(t, err)
		rel, err := s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceEvent, ResourceID: "ev-1",
			OwnerID: "w1", ClaimVersion: c.ClaimVersion, Now: T0.Add(time.Second)})
		require.NoError(t, err)
		require.False(t, rel.Live(T0.Add(time.Second)))
		require.Equal(t, c.ClaimVersion+1, rel.ClaimVersion)
		_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceEvent, ResourceID: "ev-1",
			OwnerID: "w1", ClaimVersion: rel.ClaimVersion, Now: T0.Add(time.Second)})
		require.ErrorIs(t, err, domain.ErrNotHolder, "a released claim cannot be released again")

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

		// Listed by type: one, or several.
		slot := acquire("all:0", "w3", T0)
		slot.ResourceType = domain.ResourceRunSlot
		_, ok, err = s.AcquireClaim(ctx, slot)
		require.NoError(t, err)
		require.True(t, ok)
		typed, err := s.ListClaims(ctx, store.ListClaimsParams{ResourceType: domain.ResourceRunSlot})
		require.NoError(t, err)
		require.Len(t, typed, 1)
		require.Equal(t, "all:0", typed[0].ResourceID)
		typed, err = s.ListClaims(ctx, store.ListClaimsParams{ResourceTypes: []string{domain.ResourceRunSlot,
			domain.ResourceEvent}})
		require.NoError(t, err)
		require.Len(t, typed, 2)
		typed, err = s.ListClaims(ctx, store.ListClaimsParams{ResourceTypes: []string{domain.ResourceRunSlotWait}})
		require.NoError(t, err)
		require.Empty(t, typed)
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
		require.ErrorIs(t, err, domain.ErrLeaseLost)
		_, err = s.GetWorkOrderByEvent(ctx, wo.EventID)
		require.ErrorIs(t, err, domain.ErrNotFound, "the fenced write did not happen")

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
			return q.CheckFence(ctx, store.Fence{ResourceType: domain.ResourceEvent, ResourceID: "never", OwnerID: "w1", ClaimVersion: 1})
		})
		require.ErrorIs(t, err, domain.ErrLeaseLost, "no claim, no write")
	})

	t.Run("Fence_SameOwnerOlderVersionIsRefused", func(t *testing.T) {
		require.NoError(t, OlderVersionRefused(context.Background(), open(t)))
	})

	t.Run("InvalidLeaseFields_RefusedAndNothingWritten", func(t *testing.T) {
		// Renewals and releases check only the fields they write (times and
		// version): these are the cases that check must refuse.
		s, ctx := open(t), context.Background()
		held, _, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0))
		require.NoError(t, err)
		endOfTime := time.Date(9999, 12, 31, 23, 59, 30, 0, time.UTC) // a minute's lease ends in year 10000
		for name, p := range map[string]store.RenewClaimParams{
			"zero TTL":             {TTL: 0, Now: T0},
			"negative TTL":         {TTL: -time.Second, Now: T0},
			"lease past year 9999": {TTL: time.Minute, Now: endOfTime},
			"now past year 9999":   {TTL: time.Minute, Now: endOfTime.Add(time.Hour)},
			"now before year 0":    {TTL: time.Minute, Now: time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC)},
		} {
			p.ResourceType, p.ResourceID, p.OwnerID, p.ClaimVersion = held.ResourceType, held.ResourceID, held.OwnerID, held.ClaimVersion
			_, err := s.RenewClaim(ctx, p)
			require.Error(t, err, name)
			require.NotErrorIs(t, err, domain.ErrLeaseLost, "%s: refused before the swap, not lost", name)
		}
		_, err = s.RenewClaim(ctx, store.RenewClaimParams{ResourceType: held.ResourceType, ResourceID: held.ResourceID,
			OwnerID: held.OwnerID, ClaimVersion: math.MaxInt64, TTL: time.Minute, Now: T0})
		requireViolation(t, err, "/claim_version") // the next version would overflow
		_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: held.ResourceType, ResourceID: held.ResourceID,
			OwnerID: held.OwnerID, ClaimVersion: held.ClaimVersion, Now: endOfTime.Add(time.Hour)})
		require.Error(t, err)
		require.NotErrorIs(t, err, domain.ErrNotHolder)
		got, err := s.GetClaim(ctx, domain.ResourceEvent, "ev-1")
		require.NoError(t, err)
		require.Equal(t, held, got, "refused renewals and releases change nothing")

		for name, p := range map[string]store.AcquireClaimParams{
			"zero TTL":             {TTL: 0, Now: T0},
			"lease past year 9999": {TTL: time.Minute, Now: endOfTime},
		} {
			p.ResourceType, p.ResourceID, p.OwnerID = domain.ResourceEvent, "ev-2", "w1"
			_, _, err := s.AcquireClaim(ctx, p)
			require.Error(t, err, name)
		}
		_, err = s.GetClaim(ctx, domain.ResourceEvent, "ev-2")
		require.ErrorIs(t, err, domain.ErrNotFound, "a refused acquisition writes nothing")
	})

	t.Run("ReturnedRecordIsTheStoredRow", func(t *testing.T) {
		// The claim calls build their result in Go instead of reading the row
		// back; it must be exactly what a read returns. A TTL finer than the
		// stored microsecond is cut to it.
		s, ctx := open(t), context.Background()
		now := T0.Add(123456789 * time.Nanosecond)
		c, ok, err := s.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: domain.ResourceEvent, ResourceID: "ev-1",
			OwnerID: "w1", TTL: time.Minute + 999*time.Nanosecond, Now: now})
		require.NoError(t, err)
		require.True(t, ok)
		got, err := s.GetClaim(ctx, domain.ResourceEvent, "ev-1")
		require.NoError(t, err)
		require.Equal(t, got, c)
		r, err := s.RenewClaim(ctx, store.RenewClaimParams{ResourceType: c.ResourceType, ResourceID: c.ResourceID, OwnerID: c.OwnerID,
			ClaimVersion: c.ClaimVersion, TTL: 30*time.Second + 1, Now: now.Add(time.Second + 1)})
		require.NoError(t, err)
		got, err = s.GetClaim(ctx, domain.ResourceEvent, "ev-1")
		require.NoError(t, err)
		require.Equal(t, got, r)
		rel, err := s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: r.ResourceType, ResourceID: r.ResourceID,
			OwnerID: r.OwnerID, ClaimVersion: r.ClaimVersion, Now: now.Add(2 * time.Second)})
		require.NoError(t, err)
		got, err = s.GetClaim(ctx, domain.ResourceEvent, "ev-1")
		require.NoError(t, err)
		require.Equal(t, got, rel)
		again, ok, err := s.AcquireClaim(ctx, acquire("ev-1", "w2", now.Add(3*time.Second)))
		require.NoError(t, err)
		require.True(t, ok)
		got, err = s.GetClaim(ctx, domain.ResourceEvent, "ev-1")
		require.NoError(t, err)
		require.Equal(t, got, again, "a takeover returns the row it wrote, version included")
	})

	t.Run("ClaimRows_AllValidAgainstSchema", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c, _, err := s.AcquireClaim(ctx, acquire("ev-1", "12345@host:azolla/objective-a/1", T0))
		require.NoError(t, err)
		_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: c.ResourceType, ResourceID: c.ResourceID,
			OwnerID: c.OwnerID, ClaimVersion: c.ClaimVersion, Now: T0.Add(time.Second)})
		require.NoError(t, err)
		_, _, err = s.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: domain.ResourceWorkOrder, ResourceID: "wo-1", OwnerID: "w1", TTL: time.Minute, Now: T0})
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

// OlderVersionRefused checks the version fence on a fresh store: a worker
// restarted under the same identity re-acquires after its old lease lapsed,
// and only the claim version tells the two holds apart, so the old one's
// fenced write, renewal and release must all be refused. It returns what went
// wrong, so that the mutation tests can require it to notice a broken guard.
func OlderVersionRefused(ctx context.Context, s store.Store) error {
	old, _, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0))
	if err != nil {
		return err
	}
	cur, ok, err := s.AcquireClaim(ctx, acquire("ev-1", "w1", T0.Add(2*time.Minute)))
	if err != nil || !ok {
		return fmt.Errorf("re-acquire after the lease lapsed: acquired=%v, %w", ok, err)
	}
	if err := s.InTx(ctx, func(q store.Querier) error { return q.CheckFence(ctx, fenceOf(old)) }); !errors.Is(err, domain.ErrLeaseLost) {
		return fmt.Errorf("fence of the older version: want a lost lease, got %v", err)
	}
	if err := s.InTx(ctx, func(q store.Querier) error { return q.CheckFence(ctx, fenceOf(cur)) }); err != nil {
		return fmt.Errorf("fence of the current version: %w", err)
	}
	if _, err := s.RenewClaim(ctx, renew(old, T0.Add(2*time.Minute))); !errors.Is(err, domain.ErrLeaseLost) {
		return fmt.Errorf("renewal of the older version: want a lost lease, got %v", err)
	}
	_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: old.ResourceType, ResourceID: old.ResourceID,
		OwnerID: old.OwnerID, ClaimVersion: old.ClaimVersion, Now: T0.Add(2 * time.Minute)})
	if !errors.Is(err, domain.ErrNotHolder) {
		return fmt.Errorf("release of the older version: want not-holder, got %v", err)
	}
	return nil
}

func acquire(id, owner string, now time.Time) store.AcquireClaimParams {
	return store.AcquireClaimParams{ResourceType: domain.ResourceEvent, ResourceID: id, OwnerID: owner, TTL: time.Minute, Now: now}
}

func renew(c *domain.ClaimRecord, now time.Time) store.RenewClaimParams {
	return store.RenewClaimParams{ResourceType: c.ResourceType, ResourceID: c.ResourceID, OwnerID: c.OwnerID,
		ClaimVersion: c.ClaimVersion, TTL: time.Minute, Now: now}
}

func fenceOf(c *domain.ClaimRecord) store.Fence {
	return store.Fence{ResourceType: c.ResourceType, ResourceID: c.ResourceID, OwnerID: c.OwnerID, ClaimVersion: c.ClaimVersion}
}
