package storetest

import (
	"context"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// ClockSkewEnv names the skew (a Go duration, "-400ms") of the clock an
// azolla process built with the azollahistory tag stamps its claim
// operations with.
const ClockSkewEnv = "AZOLLA_TEST_CLOCK_SKEW"

// Skewed is s as a process whose clock is off by skew uses it: every
// claim operation carries the time it was asked at shifted by skew, as a
// worker on a machine whose clock drifted stamps them. The store judges
// expiry by that time, so such a worker sees other leases lapse early
// (ahead) or late (behind), and its own last that much longer or shorter.
// Wrap a recording store (FullStore) with it, so that the history has
// the times the store judged by.
func Skewed(s store.Store, skew time.Duration) store.Store { return &skewed{Store: s, skew: skew} }

type skewed struct {
	store.Store
	skew time.Duration
}

// shift is the time of a claim operation on the skewed clock.
func shift(at time.Time, skew time.Duration) time.Time {
	if at.IsZero() {
		at = time.Now()
	}
	return at.Add(skew)
}

func (s *skewed) AcquireClaim(ctx context.Context, p store.AcquireClaimParams) (*domain.ClaimRecord, bool, error) {
	p.Now = shift(p.Now, s.skew)
	return s.Store.AcquireClaim(ctx, p)
}

func (s *skewed) RenewClaim(ctx context.Context, p store.RenewClaimParams) (*domain.ClaimRecord, error) {
	p.Now = shift(p.Now, s.skew)
	return s.Store.RenewClaim(ctx, p)
}

func (s *skewed) ReleaseClaim(ctx context.Context, p store.ReleaseClaimParams) (*domain.ClaimRecord, error) {
	p.Now = shift(p.Now, s.skew)
	return s.Store.ReleaseClaim(ctx, p)
}

func (s *skewed) InTx(ctx context.Context, fn func(q store.Querier) error) error {
	return s.Store.InTx(ctx, func(q store.Querier) error { return fn(&skewedQuerier{Querier: q, skew: s.skew}) })
}

// skewedQuerier is a transaction's querier on the skewed clock.
type skewedQuerier struct {
	store.Querier
	skew time.Duration
}

func (s *skewedQuerier) AcquireClaim(ctx context.Context, p store.AcquireClaimParams) (*domain.ClaimRecord, bool, error) {
	p.Now = shift(p.Now, s.skew)
	return s.Querier.AcquireClaim(ctx, p)
}

func (s *skewedQuerier) RenewClaim(ctx context.Context, p store.RenewClaimParams) (*domain.ClaimRecord, error) {
	p.Now = shift(p.Now, s.skew)
	return s.Querier.RenewClaim(ctx, p)
}

func (s *skewedQuerier) ReleaseClaim(ctx context.Context, p store.ReleaseClaimParams) (*domain.ClaimRecord, error) {
	p.Now = shift(p.Now, s.skew)
	return s.Querier.ReleaseClaim(ctx, p)
}
