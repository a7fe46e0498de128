package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// ContentionParams shapes a contention run: Workers goroutines each make
// Iterations attempts on one of Resources resources picked at random.
type ContentionParams struct {
	Workers, Resources, Iterations int
}

// ContentionResult counts what happened and what the timeline shows.
type ContentionResult struct {
	Attempts, Acquired, Refused, Renewed, LostRenewals, Released, Takeovers int
	// DoubleGrants counts tenures that began while an earlier holder's lease
	// on the same resource was still unexpired and unreleased.
	DoubleGrants int
	Overlaps     []string
	Elapsed      time.Duration
}

// StepClock is a logical clock: every reading is one Step after the last, so
// leases expire as the workers make calls, whatever the machine's speed.
type StepClock struct {
	Start time.Time
	Step  time.Duration
	n     atomic.Int64
}

// Now returns the next instant.
func (c *StepClock) Now() time.Time { return c.Start.Add(time.Duration(c.n.Add(1)) * c.Step) }

// Tenure is one holder's unbroken hold on a resource, as the database
// reported it.
type Tenure struct {
	Resource, Owner string
	First, Last     int64     // claim versions at acquisition and at the last renewal
	Start, End      time.Time // acquisition; release, or the last lease expiry
	Released        bool
}

// RunContention has workers acquire, renew, release and abandon claims on a
// few resources with a short lease, records every tenure as the database
// reported it, and checks that no two tenures on a resource overlap.
func RunContention(t testing.TB, s store.ClaimQuerier, p ContentionParams) ContentionResult {
	t.Helper()
	ctx := context.Background()
	clock := &StepClock{Start: T0, Step: time.Millisecond}
	const ttl = 40 * time.Millisecond // 40 clock readings
	var (
		mu       sync.Mutex
		tenures  []Tenure
		res      ContentionResult
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	began := time.Now()
	var wg sync.WaitGroup
	for w := range p.Workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			owner := fmt.Sprintf("worker-%d", w)
			var local ContentionResult
			var mine []Tenure
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				tenures = append(tenures, mine...)
				res.Attempts += local.Attempts
				res.Acquired += local.Acquired
				res.Refused += local.Refused
				res.Renewed += local.Renewed
				res.LostRenewals += local.LostRenewals
				res.Released += local.Released
			}()
			for range p.Iterations {
				id := fmt.Sprintf("res-%d", rng.IntN(p.Resources))
				local.Attempts++
				c, ok, err := s.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: domain.ResourceWorkOrder,
					ResourceID: id, OwnerID: owner, TTL: ttl, Now: clock.Now()})
				if err != nil {
					fail(err)
					return
				}
				if !ok {
					local.Refused++
					continue
				}
				local.Acquired++
				tn := Tenure{Resource: id, Owner: owner, First: c.ClaimVersion, Last: c.ClaimVersion, Start: c.HeartbeatAt, End: c.LeaseExpiresAt}
				for range rng.IntN(3) {
					if rng.IntN(4) == 0 {
						time.Sleep(time.Millisecond) // a slow holder, whose lease may lapse meanwhile
					}
					r, err := s.RenewClaim(ctx, store.RenewClaimParams{ResourceType: c.ResourceType, ResourceID: id,
						OwnerID: owner, ClaimVersion: tn.Last, TTL: ttl, Now: clock.Now()})
					if err != nil {
						if !isLeaseLost(err) {
							fail(err)
							return
						}
						local.LostRenewals++
						break
					}
					local.Renewed++
					tn.Last, tn.End = r.ClaimVersion, r.LeaseExpiresAt
				}
				if rng.IntN(4) > 0 { // three in four release; the rest abandon the lease to expire
					r, err := s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: c.ResourceType, ResourceID: id,
						OwnerID: owner, ClaimVersion: tn.Last, Now: clock.Now()})
					if err == nil {
						local.Released++
						tn.Released, tn.End = true, *r.ReleasedAt
					} else if !isNotHolder(err) {
						fail(err)
						return
					}
				}
				mine = append(mine, tn)
			}
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(began)
	if firstErr != nil {
		t.Fatalf("contention run: %v", firstErr)
	}
	res.Takeovers, res.DoubleGrants, res.Overlaps = CheckTimeline(tenures)
	return res
}

// CheckTimeline orders each resource's tenures by claim version and counts
// those that began before the previous one ended (double grants), and those
// that took over a lease its holder never released (takeovers).
func CheckTimeline(tenures []Tenure) (takeovers, doubleGrants int, overlaps []string) {
	by := map[string][]Tenure{}
	for _, tn := range tenures {
		by[tn.Resource] = append(by[tn.Resource], tn)
	}
	for id, ts := range by {
		sort.Slice(ts, func(i, j int) bool { return ts[i].First < ts[j].First })
		for i := 1; i < len(ts); i++ {
			prev, cur := ts[i-1], ts[i]
			if !prev.Released {
				takeovers++
			}
			if cur.First <= prev.Last || cur.Start.Before(prev.End) {
				doubleGrants++
				overlaps = append(overlaps, fmt.Sprintf("%s: %s held v%d-v%d until %s, %s took v%d at %s",
					id, prev.Owner, prev.First, prev.Last, prev.End.Format(time.StampMicro), cur.Owner, cur.First, cur.Start.Format(time.StampMicro)))
			}
		}
	}
	return takeovers, doubleGrants, overlaps
}

func isLeaseLost(err error) bool { return errors.Is(err, domain.ErrLeaseLost) }
func isNotHolder(err error) bool { return errors.Is(err, domain.ErrNotHolder) }
