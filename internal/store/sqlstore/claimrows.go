package sqlstore

import (
	"sync"
	"time"
)

// claimRowTrust is how long a store takes a claim row it saw to be there
// still.
const claimRowTrust = 5 * time.Second

// claimRows remembers which claim rows a store saw lately, so that acquiring
// one of them again sends only the takeover UPDATE, which costs the
// database less than the whole create-or-update-if-expired statement
// (docs/benchmarks.md, B3). The repeated case is the contended one: workers
// and standby leaders trying the same few claims.
//
// The UPDATE alone cannot create a row, so a row deleted meanwhile (pruned
// with its finished work, or by hand) is refused until the memory of it
// lapses, claimRowTrust at most after it was last seen. A refusal is what an
// acquirer that lost a race hears anyway, and the protocol allows it: the
// caller skips the resource and polls again. An acquisition the UPDATE
// refuses does not renew the memory, since it did not see the row.
//
// A nil *claimRows remembers nothing, so every acquisition runs the whole
// statement.
type claimRows struct {
	limit int
	mu    sync.Mutex
	seen  map[claimKey]time.Time // when the row was last seen, on the monotonic clock
}

// claimKey is a claim row's primary key.
type claimKey struct{ resourceType, resourceID string }

func newClaimRows() *claimRows { return &claimRows{limit: 4096} }

// known reports whether the row was seen within claimRowTrust.
func (r *claimRows) known(k claimKey) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	at, ok := r.seen[k]
	r.mu.Unlock()
	return ok && time.Since(at) < claimRowTrust
}

// saw records that the row is there now. It forgets every row when full.
func (r *claimRows) saw(k claimKey) {
	if r == nil {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil || len(r.seen) >= r.limit {
		r.seen = make(map[claimKey]time.Time, r.limit)
	}
	r.seen[k] = now
}
