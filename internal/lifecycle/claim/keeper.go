package claim

import (
	"context"
	"errors"
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
// renewal finds the lease taken; and, with an error that wraps ErrLeaseLost,
// the moment the lease lapses because renewals kept failing or never came
// back: the holder must then stop mutating shared state. stop returns once
// no renewal is running; one in flight ends at the latest when the lease
// lapses.
func (l *Lease) Keep(parent context.Context, o KeepOptions) (ctx context.Context, stop func()) {
	if o.Interval <= 0 || o.Interval > l.ttl/3 {
		o.Interval = l.ttl / 3
	}
	l.mu.Lock()
	w := l.watchLocked()
	l.mu.Unlock()
	ctx, cancel := context.WithCancelCause(parent)
	unlink := context.AfterFunc(w.ctx, func() { cancel(context.Cause(w.ctx)) })
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
			case o.OnError != nil:
				o.OnError(err)
			}
		}
	}()
	return ctx, func() {
		unlink()
		cancel(context.Canceled)
		<-done
	}
}
