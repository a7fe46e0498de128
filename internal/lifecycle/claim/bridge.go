package claim

import (
	"context"
	"errors"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// Errors of the protocol, shared with the store that detects them.
var (
	ErrLeaseLost = domain.ErrLeaseLost
	ErrNotHolder = domain.ErrNotHolder
	// ErrReleased: the lease was released by its holder and cannot be used.
	ErrReleased = errors.New("lease already released")
)

// LeaseLostError names the claim that was lost and who holds it now.
type LeaseLostError = domain.LeaseLostError

// Store is what a Bridge needs of the store: the claims, and a
// transaction to fence a holder's writes in.
type Store interface {
	store.ClaimQuerier
	store.Transactor
}

// Bridge hands out leases on the store's claims table.
type Bridge struct {
	store    Store
	now      func() time.Time
	observer Observer
}

// Option configures a Bridge.
type Option func(*Bridge)

// WithClock injects the clock every claim timestamp is taken from.
func WithClock(now func() time.Time) Option { return func(b *Bridge) { b.now = now } }

// NewBridge returns a bridge over s.
func NewBridge(s Store, opts ...Option) *Bridge {
	b := &Bridge{store: s, now: time.Now}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Acquire tries to take the claim on one resource for ttl. It returns
// acquired=false, and no error, while another owner holds a live claim: the
// caller skips the resource and keeps polling.
func (b *Bridge) Acquire(ctx context.Context, resourceType, resourceID, ownerID string, ttl time.Duration) (*Lease, bool, error) {
	rec, outcome, err := b.acquire(ctx, b.store, resourceType, resourceID, ownerID, ttl)
	if err != nil {
		return nil, false, err
	}
	b.observe(resourceType, outcome)
	if outcome == Refused {
		return nil, false, nil
	}
	return &Lease{bridge: b, ttl: ttl, rec: *rec}, true, nil
}

// acquire asks q for the claim and says what came of it. Telling a
// takeover from a plain acquisition costs a read of the row first, made
// only for an observer (WithObserver); without one a takeover is told as
// Acquired.
func (b *Bridge) acquire(ctx context.Context, q store.ClaimQuerier, resourceType, resourceID, ownerID string,
	ttl time.Duration) (*domain.ClaimRecord, Outcome, error) {
	var lapsed bool
	if b.observer != nil {
		prev, err := q.GetClaim(ctx, resourceType, resourceID)
		lapsed = err == nil && prev.ReleasedAt == nil
	}
	rec, ok, err := q.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: resourceType,
		ResourceID: resourceID, OwnerID: ownerID, TTL: ttl, Now: b.now()})
	switch {
	case err != nil:
		return nil, "", err
	case !ok:
		return nil, Refused, nil
	case lapsed:
		return rec, TakenOver, nil
	}
	return rec, Acquired, nil
}

// observe tells the observer, if any, an acquisition's outcome.
func (b *Bridge) observe(resourceType string, outcome Outcome) {
	if b.observer != nil {
		b.observer.ObserveAcquire(resourceType, outcome)
	}
}

// Adopt returns the lease rec names, handed over by the process that
// acquired it (a run slot taken by one step and held by the next). Nothing
// is asked of the store: the first renewal or fenced write tells whether
// rec still holds, and a lease that lapsed meanwhile is lost.
func (b *Bridge) Adopt(rec domain.ClaimRecord, ttl time.Duration) *Lease {
	return &Lease{bridge: b, ttl: ttl, rec: rec}
}

// errRefusedWithin rolls back Within's transaction when the claim is held.
var errRefusedWithin = errors.New("claim held by another owner")

// Within holds the claim for one transaction: it acquires the claim, runs
// fn and releases the claim, all in one store transaction, so a step whose
// work is a few statements commits once instead of three times (acquire,
// fenced write, release). The claim is taken and released at the same
// commit: no other owner ever sees it held, and one that acquires while
// the transaction runs waits on the claim row and then finds it released,
// or is refused. Like Acquire it returns acquired=false, and no error,
// while another owner holds a live lease: fn has not run and nothing is
// written. An error from fn rolls everything back, the claim included.
//
// Use it only for work that needs nothing outside the transaction while
// it holds the claim (no repository read, no command): a step whose work
// can outlast a lease acquires, keeps and releases its lease separately.
func (b *Bridge) Within(ctx context.Context, resourceType, resourceID, ownerID string, ttl time.Duration,
	fn func(q store.Querier) error) (acquired bool, err error) {
	var outcome Outcome
	err = b.store.InTx(ctx, func(q store.Querier) error {
		var rec *domain.ClaimRecord
		var err error
		if rec, outcome, err = b.acquire(ctx, q, resourceType, resourceID, ownerID, ttl); err != nil {
			return err
		}
		if outcome == Refused {
			return errRefusedWithin
		}
		if err := fn(q); err != nil {
			return err
		}
		_, err = q.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: resourceType, ResourceID: resourceID,
			OwnerID: ownerID, ClaimVersion: rec.ClaimVersion, Now: b.now()})
		return err
	})
	// An acquisition rolled back with fn's failure did not happen.
	if err == nil || outcome == Refused {
		b.observe(resourceType, outcome)
	}
	if errors.Is(err, errRefusedWithin) {
		return false, nil
	}
	return err == nil, err
}
