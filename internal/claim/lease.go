package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/store"
)

// Lease is one held claim. Its methods are safe for concurrent use; renewals
// and fenced writes are serialized so a write always checks the version the
// latest renewal produced.
type Lease struct {
	bridge *Bridge
	ttl    time.Duration

	mu       sync.Mutex
	rec      store.ClaimRecord
	lost     error // set once the lease is known lost
	released bool
}

// Record returns the claim row as of the last successful operation.
func (l *Lease) Record() store.ClaimRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec
}

// usableLocked returns why the lease is unusable (lost or released), or nil.
func (l *Lease) usableLocked() error {
	switch {
	case l.lost != nil:
		return l.lost
	case l.released:
		return fmt.Errorf("%s %s: %w", l.rec.ResourceType, l.rec.ResourceID, ErrReleased)
	}
	return nil
}

// Renew extends the lease by compare-and-swap on its version. A
// *LeaseLostError means another owner has it: stop and write nothing.
func (l *Lease) Renew(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return err
	}
	// Once started, the statement runs to completion whatever happens to ctx:
	// a renewal cut off after the database applied it would leave this lease
	// holding a version the row no longer has, and the holder would give up a
	// claim it still holds. Past the TTL a renewal is useless anyway.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.ttl)
	defer cancel()
	rec, err := l.bridge.store.RenewClaim(rctx, store.RenewClaimParams{ResourceType: l.rec.ResourceType,
		ResourceID: l.rec.ResourceID, OwnerID: l.rec.OwnerID, ClaimVersion: l.rec.ClaimVersion, TTL: l.ttl, Now: l.bridge.now()})
	if err != nil {
		if errors.Is(err, ErrLeaseLost) {
			l.lost = err
		}
		return err
	}
	l.rec = *rec
	return nil
}

// Fenced runs fn in one transaction that first checks, with the claim row
// locked, that this lease still holds the claim. If the claim moved on, fn
// does not run, nothing is written and the *LeaseLostError is returned.
func (l *Lease) Fenced(ctx context.Context, fn func(q store.Querier) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return err
	}
	fence := store.Fence{ResourceType: l.rec.ResourceType, ResourceID: l.rec.ResourceID,
		OwnerID: l.rec.OwnerID, ClaimVersion: l.rec.ClaimVersion}
	err := l.bridge.store.InTx(ctx, func(q store.Querier) error {
		if err := q.CheckFence(ctx, fence); err != nil {
			return err
		}
		return fn(q)
	})
	if errors.Is(err, ErrLeaseLost) {
		l.lost = err
	}
	return err
}

// Release gives the claim up. Call it after the step's durable write. A
// lease lost meanwhile returns its *LeaseLostError, or ErrNotHolder if the
// loss was not noticed before; after the durable write either is harmless.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return err
	}
	rec, err := l.bridge.store.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: l.rec.ResourceType,
		ResourceID: l.rec.ResourceID, OwnerID: l.rec.OwnerID, ClaimVersion: l.rec.ClaimVersion, Now: l.bridge.now()})
	if err != nil {
		return err
	}
	l.rec, l.released = *rec, true
	return nil
}

// expired reports whether the lease has lapsed by the bridge's clock.
func (l *Lease) expired() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.rec.LeaseExpiresAt.After(l.bridge.now())
}
