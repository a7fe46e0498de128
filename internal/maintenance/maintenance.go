// Package maintenance is the home of azolla's periodic services (the
// retention pruners beneath it; the control plane's reaper, the poller and
// the remote worker's pruner embed its Loop too). It gives each one shape: a pass,
// which tests call directly (RunOnce), run at once and then every interval
// by Start until Stop; and, for a service that one instance per store must
// run at a time, a leadership held through the claim protocol.
//
// A leader renews its claim before every pass and keeps it during the
// pass; the pass's context ends the moment the lease is lost (another
// instance may be passing already). A standby tries to acquire the claim
// before each of its passes, so it takes over within one interval of the
// leader's lease lapsing, or at its next pass when the leader stops and
// resigns.
//
//	        acquire ok                     renew fails (lost, released)
//	standby ───────────▶ leader ───────────────────────────────────────▶ standby
//	   ▲                   │ pass: Keep renews; ctx ends when the lease is lost
//	   └────── Stop: release (the standby leads at its next pass) ◀──┘
package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/lifecycle/claim"
)

// Loop runs a pass periodically. C is what a pass reports (its counts).
// Fill it in and use it by pointer; it must not be copied after first use.
type Loop[C any] struct {
	// Name says what the loop is in logs ("poller", "reaper").
	Name string
	// Interval is the time between passes of Start.
	Interval time.Duration
	// Pass does the loop's work once.
	Pass func(ctx context.Context) (C, error)
	// Leadership, when set, runs passes only while this instance leads.
	Leadership *Leadership
	// Passed, when set, sees every pass, a standby's included (led false),
	// for logs and metrics.
	Passed func(c C, led bool, err error)
	// Log gets the loop's own lines; nil discards them.
	Log *slog.Logger

	stop     func()
	done     chan struct{}
	once     sync.Once
	wakeOnce sync.Once
	wake     chan struct{}
}

// Wake asks for a pass now, without waiting for the interval: a webhook
// delivery says there is news. Wakes while a pass runs fold into one
// pass after it; one given before Start runs after Start's first pass.
// It never blocks.
func (l *Loop[C]) Wake() {
	select {
	case l.wakes() <- struct{}{}:
	default:
	}
}

func (l *Loop[C]) wakes() chan struct{} {
	l.wakeOnce.Do(func() { l.wake = make(chan struct{}, 1) })
	return l.wake
}

// RunOnce is one pass: when the loop has a leadership, only if this
// instance leads it (led says whether it did). Losing the leadership
// mid-pass ends the pass with an error wrapping claim.ErrLeaseLost.
func (l *Loop[C]) RunOnce(ctx context.Context) (c C, led bool, err error) {
	if l.Passed != nil {
		defer func() { l.Passed(c, led, err) }()
	}
	if l.Leadership == nil {
		c, err = l.Pass(ctx)
		return c, true, err
	}
	lease, err := l.Leadership.lead(ctx)
	if err != nil || lease == nil {
		return c, false, err
	}
	ctx, keep := lease.Keep(ctx, claim.KeepOptions{OnError: func(err error) {
		l.log().Warn("renew the "+l.Name+"'s leadership", "error", err)
	}})
	defer keep()
	c, err = l.Pass(ctx)
	if err != nil {
		err = l.Leadership.ended(ctx, err)
	}
	return c, true, err
}

// Start runs a pass now and then every Interval in the background, until
// Stop or ctx is done. A failed pass is logged; the next one runs anyway.
func (l *Loop[C]) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	l.stop, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(l.Interval)
		defer t.Stop()
		for {
			if _, _, err := l.RunOnce(ctx); err != nil && ctx.Err() == nil {
				l.log().Warn(l.Name+" pass failed", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-l.wakes():
			}
		}
	}()
}

// Stop ends the passes, waits for the one in flight and resigns the
// leadership, so a standby takes over at its next pass rather than a
// lease later. It may be called more than once, and without Start.
func (l *Loop[C]) Stop() {
	l.once.Do(func() {
		if l.stop != nil {
			l.stop()
			<-l.done
		}
		if l.Leadership != nil {
			l.Leadership.resign()
		}
	})
}

func (l *Loop[C]) log() *slog.Logger {
	if l.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Log
}

// Leadership is one claim that at most one instance holds at a time: the
// claim of ResourceType/ResourceID, held by Owner for TTL at a time.
type Leadership struct {
	Name         string
	Claims       *claim.Bridge
	ResourceType string
	ResourceID   string
	Owner        string
	TTL          time.Duration
	Log          *slog.Logger

	mu      sync.Mutex
	lease   *claim.Lease // while this instance leads
	standby bool         // told the log that another instance leads
}

// Leads reports whether this instance held the leadership after its last
// pass.
func (ld *Leadership) Leads() bool {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.lease != nil
}

// lead renews the leadership, or tries to take it; a nil lease means
// another instance leads.
func (ld *Leadership) lead(ctx context.Context) (*claim.Lease, error) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	if ld.lease != nil {
		err := ld.lease.Renew(ctx)
		switch {
		case err == nil:
			return ld.lease, nil
		case errors.Is(err, claim.ErrLeaseLost), errors.Is(err, claim.ErrReleased):
			ld.log().Warn(ld.Name+" lost its leadership", "owner", ld.Owner, "error", err)
			ld.lease = nil
		default:
			return nil, fmt.Errorf("renew the %s's leadership: %w", ld.Name, err)
		}
	}
	lease, ok, err := ld.Claims.Acquire(ctx, ld.ResourceType, ld.ResourceID, ld.Owner, ld.TTL)
	if err != nil {
		return nil, fmt.Errorf("acquire the %s's leadership: %w", ld.Name, err)
	}
	if !ok {
		if !ld.standby {
			ld.log().Info(ld.Name+" stands by: another instance leads", "owner", ld.Owner)
			ld.standby = true
		}
		return nil, nil
	}
	ld.lease, ld.standby = lease, false
	ld.log().Info(ld.Name+" leads", "owner", ld.Owner)
	return lease, nil
}

// ended says why a pass ended early, dropping a leadership found lost.
func (ld *Leadership) ended(ctx context.Context, err error) error {
	cause := context.Cause(ctx)
	if !errors.Is(cause, claim.ErrLeaseLost) {
		return err
	}
	ld.mu.Lock()
	ld.lease = nil
	ld.mu.Unlock()
	ld.log().Warn(ld.Name+" lost its leadership mid-pass", "owner", ld.Owner, "error", cause)
	return fmt.Errorf("%s pass: %w", ld.Name, cause)
}

// resign releases the leadership if this instance holds it.
func (ld *Leadership) resign() {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	if ld.lease == nil {
		return
	}
	// The service's context is done by now; a release that cannot finish
	// soon only means the standby waits for the lease to lapse.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ld.lease.Release(ctx); err != nil {
		ld.log().Warn("release the "+ld.Name+"'s leadership", "owner", ld.Owner, "error", err)
	}
	ld.lease = nil
}

func (ld *Leadership) log() *slog.Logger {
	if ld.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return ld.Log
}
