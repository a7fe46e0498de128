package claim

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// KeepOptions tune a keeper.
type KeepOptions struct {
	// Interval between renewals; zero or anything above TTL/3 means TTL/3, so
	// two renewals can fail before the lease lapses.
	Interval time.Duration
	// OnRenew, if set, is called after each successful renewal (e.g. to
	// record an activity heartbeat).
	OnRenew func()
	// OnError, if set, sees renewal errors that did not lose the lease.
	OnError func(error)
}

// Keep renews the lease in the background until stop is called. The returned
// context is cancelled, with the *LeaseLostError as its cause, the moment a
// renewal finds the lease taken, or when the lease lapses because renewals
// kept failing: the holder must then stop mutating shared state.
func (l *Lease) Keep(parent context.Context, o KeepOptions) (ctx context.Context, stop func()) {
	if o.Interval <= 0 || o.Interval > l.ttl/3 {
		o.Interval = l.ttl / 3
	}
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(o.Interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := l.Renew(ctx)
			switch {
			case err == nil:
				if o.OnRenew != nil {
					o.OnRenew()
				}
			case errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrReleased):
				cancel(err)
				return
			case ctx.Err() != nil:
				return
			default:
				if o.OnError != nil {
					o.OnError(err)
				}
				if l.expired() {
					rec := l.Record()
					cancel(fmt.Errorf("%w: %s %s lapsed at %s while renewals failed: %v", ErrLeaseLost,
						rec.ResourceType, rec.ResourceID, rec.LeaseExpiresAt.Format(time.RFC3339Nano), err))
					return
				}
			}
		}
	}()
	return ctx, func() {
		cancel(context.Canceled)
		<-done
	}
}
