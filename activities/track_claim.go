package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// The TRACK claim serializes a task-management track: the scheduler takes
// it for one event (owner store.TrackOwner(event_id), the same whatever the
// attempt or worker), Run extends it, the gate releases it after its
// durable write. It spans activities, so it is kept by its owner id, not by
// a Lease: each step reads the row and acts by compare-and-swap on its
// version. Its TTL (budget plus three leases) outlives a workorder's run
// and gate, and lapses on its own when a track gives up on the event.

// Defaults of TaskOptions.
const (
	DefaultTriageMaxCaptures = 50
	DefaultTriageMaxBytes    = 256 << 10
	DefaultTaskBudget        = time.Minute
	DefaultDeadlineScanLimit = 500
	DefaultTrackEventsLimit  = 1000
)

func (o TaskOptions) maxCaptures() int {
	if o.TriageMaxCaptures > 0 {
		return o.TriageMaxCaptures
	}
	return DefaultTriageMaxCaptures
}

func (o TaskOptions) maxBytes() int {
	if o.TriageMaxBytes > 0 {
		return o.TriageMaxBytes
	}
	return DefaultTriageMaxBytes
}

func (o TaskOptions) budget() time.Duration {
	if o.Budget > 0 {
		return o.Budget
	}
	return DefaultTaskBudget
}

// trackTTL is the TRACK claim's TTL: a track workorder's budget (0: the
// default) and three leases.
func trackTTL(taskBudget, leaseTTL time.Duration) time.Duration {
	if leaseTTL <= 0 {
		leaseTTL = time.Minute
	}
	return TaskOptions{Budget: taskBudget}.budget() + 3*leaseTTL
}

func (a *Tracks) trackTTL() time.Duration { return trackTTL(a.Tasks.Budget, a.LeaseTTL) }

// claimNow is the clock of the TRACK claim, the claim bridge's (real time).
func claimNow() time.Time { return store.NowOr(time.Time{}) }

// holdTrack takes the track's TRACK claim for the event's owner for ttl,
// or extends it when that owner holds it already. Another owner's live
// claim is a (retryable) *Claimed.
func holdTrack(ctx context.Context, st store.ClaimQuerier, track, eventID string, ttl time.Duration) error {
	res, owner := domain.TrackResource(track), domain.TrackOwner(eventID)
	now := claimNow()
	cur, err := st.GetClaim(ctx, domain.ResourceTrack, res)
	switch {
	case errors.Is(err, domain.ErrNotFound):
	case err != nil:
		return fmt.Errorf("track claim %s: %w", res, err)
	case cur.Live(now) && cur.OwnerID == owner:
		if _, err := st.RenewClaim(ctx, store.RenewClaimParams{ResourceType: domain.ResourceTrack, ResourceID: res,
			OwnerID: owner, ClaimVersion: cur.ClaimVersion, TTL: ttl, Now: now}); err != nil {
			return fmt.Errorf("extend track claim %s: %w", res, err)
		}
		return nil
	case cur.Live(now):
		return &Claimed{ResourceType: domain.ResourceTrack, ResourceID: res, Holder: *cur}
	}
	_, ok, err := st.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: domain.ResourceTrack, ResourceID: res,
		OwnerID: owner, TTL: ttl, Now: now})
	if err != nil {
		return fmt.Errorf("track claim %s: %w", res, err)
	}
	if !ok {
		holder, gerr := st.GetClaim(ctx, domain.ResourceTrack, res)
		if gerr != nil {
			return fmt.Errorf("track claim %s: held by another owner", res)
		}
		return &Claimed{ResourceType: domain.ResourceTrack, ResourceID: res, Holder: *holder}
	}
	return nil
}

// releaseTrack gives the TRACK claim up if the event's owner holds it, after
// the durable write. A failure is only logged: the lease lapses on its own.
func (a *Tracks) releaseTrack(ctx context.Context, track, eventID string) {
	ctx = context.WithoutCancel(ctx)
	res, owner := domain.TrackResource(track), domain.TrackOwner(eventID)
	cur, err := a.Store.GetClaim(ctx, domain.ResourceTrack, res)
	if err == nil && (cur.OwnerID != owner || cur.ReleasedAt != nil) {
		return
	}
	if err == nil {
		_, err = a.Store.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceTrack, ResourceID: res,
			OwnerID: owner, ClaimVersion: cur.ClaimVersion, Now: claimNow()})
	}
	if err != nil && !errors.Is(err, domain.ErrNotFound) && activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Warn("release track claim", "track", track, "event_id", eventID, "error", err)
	}
}
