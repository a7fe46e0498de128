package forgetest

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Sleeper stands in for an implementation's wait on a rate limit: it
// records each wait asked of it and returns at once, so a test sees the
// delays a forge asked for without spending them.
type Sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d; it fails only when ctx is done.
func (s *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

// Slept is every wait asked so far, in order.
func (s *Sleeper) Slept() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.waits)
}
