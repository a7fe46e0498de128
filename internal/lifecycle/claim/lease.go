package claim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// Lease is one held claim. Its methods are safe for concurrent use; renewals
// and fenced writes are serialized so a write always checks the version the
// latest renewal produced.
type Lease struct {
	bridge *Bridge
	ttl    time.Duration

	mu       sync.Mutex
	rec      domain.ClaimRecord
	lost     error // set once the lease is known lost
	released bool
	watch    *lapseWatch // from the first renewal or keeper on
}

// Record returns the claim row as of the last successful operation.
func (l *Lease) Record() domain.ClaimRecord {
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
//
// Once started, the statement runs whatever happens to ctx: a renewal cut
// off after the database applied it would leave this lease holding a version
// the row no longer has, and the holder would give up a claim it still
// holds. It runs on the lease's own context instead, which ends when the
// lease lapses: past that a renewal is useless, and a database that never
// answers must not hold the lease, or its keeper, forever. A lapsed lease is
// lost for good; its holder acquires the claim again.
func (l *Lease) Renew(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return err
	}
	w, now := l.watchLocked(), l.bridge.now()
	if !l.rec.LeaseExpiresAt.After(now) {
		w.check() // lapsed by the bridge's clock, before the timer said so
	}
	if w.ctx.Err() != nil {
		return l.loseLocked(context.Cause(w.ctx))
	}
	rec, err := l.bridge.store.RenewClaim(w.ctx, store.RenewClaimParams{ResourceType: l.rec.ResourceType,
		ResourceID: l.rec.ResourceID, OwnerID: l.rec.OwnerID, ClaimVersion: l.rec.ClaimVersion, TTL: l.ttl, Now: now})
	switch {
	case errors.Is(err, ErrLeaseLost):
		return l.loseLocked(err)
	case err != nil && w.ctx.Err() != nil:
		return l.loseLocked(context.Cause(w.ctx)) // cut off at the lapse
	case err != nil:
		return err
	}
	w.expires.Store(rec.LeaseExpiresAt.UnixMicro())
	if w.ctx.Err() != nil {
		// The lapse was called before the new expiry was seen: the holder may
		// have stopped already, so the renewal is not taken.
		return l.loseLocked(context.Cause(w.ctx))
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
		l.loseLocked(err)
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
	if l.watch != nil {
		l.watch.stop(fmt.Errorf("%s %s: %w", rec.ResourceType, rec.ResourceID, ErrReleased))
	}
	return nil
}

// loseLocked records that the lease is lost and ends its lapse watch, so a
// keeper's holder hears of it at once. It returns err.
func (l *Lease) loseLocked(err error) error {
	l.lost = err
	if l.watch != nil {
		l.watch.stop(err)
	}
	return err
}

// watchLocked returns the lease's lapse watch, starting it on first use: a
// lease nobody renews or keeps needs none.
func (l *Lease) watchLocked() *lapseWatch {
	if l.watch != nil {
		return l.watch
	}
	w := &lapseWatch{now: l.bridge.now, what: l.rec.ResourceType + " " + l.rec.ResourceID}
	w.ctx, w.end = context.WithCancelCause(context.Background())
	w.expires.Store(l.rec.LeaseExpiresAt.UnixMicro())
	l.watch = w
	if err := l.usableLocked(); err != nil {
		w.stop(err)
	} else {
		w.check()
	}
	return w
}

// lapseWatch ends its context when the lease lapses: when the bridge's clock
// passes lease_expires_at with no renewal having moved it on. Renewals run
// under that context, and a keeper cancels its holder with it. Its timer
// fires once a TTL or so, not once a renewal: a renewal only stores the new
// expiry, and the timer, finding it ahead, waits again.
type lapseWatch struct {
	ctx     context.Context
	end     context.CancelCauseFunc
	expires atomic.Int64 // lease_expires_at in Unix microseconds, as stored
	now     func() time.Time
	what    string // resource type and id, for the error

	mu    sync.Mutex
	timer *time.Timer // set on first wait
}

// check ends the watch if the lease has lapsed, or waits until it would.
func (w *lapseWatch) check() {
	expires := time.UnixMicro(w.expires.Load())
	left := expires.Sub(w.now())
	if left <= 0 {
		w.stop(fmt.Errorf("%w: %s lapsed at %s without a renewal", ErrLeaseLost, w.what,
			expires.UTC().Format(time.RFC3339Nano)))
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() != nil {
		return
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(left, w.check)
	} else {
		w.timer.Reset(left)
	}
}

// stop ends the watch with cause (the first cause is kept) and its timer.
func (w *lapseWatch) stop(cause error) {
	w.end(cause)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
}
