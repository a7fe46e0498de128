package slots

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// A remote run's slots are held by its job (domain.Job.RunSlots): the run
// that enqueues the job takes them as any run does, stops renewing them
// and hands them over, and from then the control plane renews them with
// the job's lease, in the job's own writes, until the job is settled. So a
// run whose job outlives the worker that enqueued it keeps its slot: the
// slot lapses only when nothing renews the job either.

// Refs names the slots h holds, to hand to a remote job.
func (h *Held) Refs() []domain.SlotRef {
	if h == nil {
		return nil
	}
	refs := make([]domain.SlotRef, 0, len(h.leases))
	for _, l := range h.leases {
		r := l.Record()
		refs = append(refs, domain.SlotRef{ResourceID: r.ResourceID, OwnerID: r.OwnerID})
	}
	return refs
}

// Disown forgets h's slots without giving them up: their holder is now the
// job they were handed to. Release after it gives nothing up.
func (h *Held) Disown() {
	if h != nil {
		h.leases = nil
	}
}

// renewTries bounds the renewals of one slot that find its version moved
// by another renewal of the same job (a heartbeat beside the reaper's
// pass).
const renewTries = 3

// KeepFor renews, for a job, the slots refs name, each for ttl from now.
// A slot must still be its owner's and live; with reacquire, one that
// lapsed is taken back if no other run has taken it since. A slot another
// run holds now is an error wrapping domain.ErrLeaseLost: the job's run
// must not go on (or start) beside that run.
func KeepFor(ctx context.Context, q store.ClaimQuerier, refs []domain.SlotRef, ttl time.Duration, now time.Time,
	reacquire bool) error {
	for _, ref := range refs {
		if err := keepFor(ctx, q, ref, ttl, now, reacquire); err != nil {
			return fmt.Errorf("run slot %s: %w", ref.ResourceID, err)
		}
	}
	return nil
}

func keepFor(ctx context.Context, q store.ClaimQuerier, ref domain.SlotRef, ttl time.Duration, now time.Time,
	reacquire bool) error {
	for range renewTries {
		c, err := q.GetClaim(ctx, domain.ResourceRunSlot, ref.ResourceID)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return err
		}
		if err != nil || c.OwnerID != ref.OwnerID || !c.Live(now) {
			if !reacquire || (c != nil && c.Live(now)) {
				return lostSlot(ref, c, now)
			}
			_, ok, err := q.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: domain.ResourceRunSlot,
				ResourceID: ref.ResourceID, OwnerID: ref.OwnerID, TTL: ttl, Now: now})
			if err != nil || ok {
				return err
			}
			continue // taken meanwhile: look again
		}
		_, err = q.RenewClaim(ctx, store.RenewClaimParams{ResourceType: domain.ResourceRunSlot,
			ResourceID: ref.ResourceID, OwnerID: ref.OwnerID, ClaimVersion: c.ClaimVersion, TTL: ttl, Now: now})
		if !errors.Is(err, domain.ErrLeaseLost) {
			return err
		}
	}
	return fmt.Errorf("renewed by another hand %d times in a row: %w", renewTries, domain.ErrLeaseLost)
}

func lostSlot(ref domain.SlotRef, c *domain.ClaimRecord, now time.Time) error {
	e := &domain.LeaseLostError{ResourceType: domain.ResourceRunSlot, ResourceID: ref.ResourceID, OwnerID: ref.OwnerID}
	if c != nil && c.Live(now) {
		e.HolderID, e.HolderVersion = c.OwnerID, c.ClaimVersion
	}
	return e
}

// ReleaseFor gives up the slots refs name that their owner still holds
// (a lapsed or taken one is someone else's, or no one's, already).
func ReleaseFor(ctx context.Context, q store.ClaimQuerier, refs []domain.SlotRef, now time.Time) error {
	var errs []error
	for _, ref := range refs {
		c, err := q.GetClaim(ctx, domain.ResourceRunSlot, ref.ResourceID)
		if errors.Is(err, domain.ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if c.OwnerID != ref.OwnerID || c.ReleasedAt != nil {
			continue
		}
		_, err = q.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceRunSlot,
			ResourceID: ref.ResourceID, OwnerID: ref.OwnerID, ClaimVersion: c.ClaimVersion, Now: now})
		if err != nil {
			errs = append(errs, fmt.Errorf("release run slot %s: %w", ref.ResourceID, err))
		}
	}
	return errors.Join(errs...)
}
