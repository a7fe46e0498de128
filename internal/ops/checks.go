package ops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// StoreCheck pings the store's pool when it exposes one, else reads one
// claim row: either is one round trip.
func StoreCheck(st store.ClaimQuerier) Check {
	return Check{Name: "store", Check: func(ctx context.Context) error {
		if d, ok := st.(interface{ DB() *sql.DB }); ok {
			if err := d.DB().PingContext(ctx); err != nil {
				return fmt.Errorf("store unreachable: %w", err)
			}
			return nil
		}
		if _, err := st.GetClaim(ctx, "OPS_READINESS", "ping"); err != nil && !errors.Is(err, domain.ErrNotFound) {
			return fmt.Errorf("store unreachable: %w", err)
		}
		return nil
	}}
}

// TemporalCheck asks the frontend for its health.
func TemporalCheck(c client.Client) Check {
	return Check{Name: "temporal", Check: func(ctx context.Context) error {
		if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			return fmt.Errorf("temporal unreachable: %w", err)
		}
		return nil
	}}
}

// Flag is a readiness condition the process sets itself: workers started,
// not yet stopping.
type Flag struct {
	name, notYet string
	v            atomic.Int32 // 0 not yet, 1 set, 2 cleared after being set
}

// NewFlag returns an unset flag; notYet says why it is not ready yet.
func NewFlag(name, notYet string) *Flag { return &Flag{name: name, notYet: notYet} }

// Set marks the condition met.
func (f *Flag) Set() { f.v.Store(1) }

// Stop marks the process stopping: not ready again.
func (f *Flag) Stop() { f.v.Store(2) }

// Check is the flag as a readiness check.
func (f *Flag) Check() Check {
	return Check{Name: f.name, Check: func(context.Context) error {
		switch f.v.Load() {
		case 1:
			return nil
		case 2:
			return errors.New("stopping")
		}
		return errors.New(f.notYet)
	}}
}
