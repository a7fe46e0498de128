package sqlstore

import (
	"fmt"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/schemas"
)

// Every claim write is checked against claim_record.schema.json before it
// runs. A full check marshals the record and walks the schema, which costs
// more than the claim statement itself, so the hot path checks only what the
// call can change:
//
//   - The lease times and the version are computed here, on every call.
//     leaseFieldsValid checks them in Go, the way the schema's timestamp and
//     claim_version rules would (TestLeaseFieldsAgreeWithSchema holds the two
//     together). Whenever it cannot vouch for them, the full schema decides.
//   - A renewal or release is a compare-and-swap that matches only a row
//     with exactly its resource_type, resource_id and owner_id, and writes
//     none of them: the row, identity included, was checked when it was
//     acquired. So a swap checks the times and the version only. When it
//     matched no row, and so wrote nothing, the whole record is checked
//     before saying so, so that a caller who passed an invalid identity
//     hears which field is wrong rather than that it does not hold a claim.
//   - An acquisition writes its identity. The schema constrains each
//     property on its own (TestClaimSchemaIsPerProperty holds it to that), so
//     an identity that passed once passes again: an acquisition runs the
//     full check unless its identity is one knownIdentities remembers
//     passing. Polling workers retry the same few resources under the same
//     owner, which is exactly the repeated case.
//
// The schema stays the only source of an error message: a record the fast
// path refuses is checked in full, and the schema says what is wrong.

// checkTTL refuses a lease that would be over before it began.
func checkTTL(op string, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("%s claim: lease TTL must be positive, got %s", op, ttl)
	}
	return nil
}

// leaseEnd is when a lease of ttl taken at now lapses, at the microsecond
// precision both backends store, so the row holds exactly this value.
func leaseEnd(now time.Time, ttl time.Duration) time.Time {
	return now.Add(ttl).Truncate(time.Microsecond)
}

// validateClaim checks the whole record against the schema.
func validateClaim(op string, c *domain.ClaimRecord) error {
	if err := schemas.Validate(schemas.ClaimRecord, c); err != nil {
		return fmt.Errorf("%s claim: %w", op, err)
	}
	return nil
}

// validateAcquire checks the record an acquisition writes.
func validateAcquire(c *domain.ClaimRecord) error {
	id := claimIdentity{c.ResourceType, c.ResourceID, c.OwnerID}
	if leaseFieldsValid(c) && knownIdentities.has(id) {
		return nil
	}
	if err := validateClaim("acquire", c); err != nil {
		return err
	}
	knownIdentities.add(id)
	return nil
}

// claimIdentity is the part of a claim row only an acquisition writes.
type claimIdentity struct{ resourceType, resourceID, ownerID string }

// knownIdentities remembers identities that passed the schema in full. It
// forgets them all when full, which costs one full check per identity.
var knownIdentities = identityMemo{limit: 4096}

type identityMemo struct {
	limit int
	mu    sync.Mutex
	m     map[claimIdentity]struct{}
}

func (im *identityMemo) has(id claimIdentity) bool {
	im.mu.Lock()
	defer im.mu.Unlock()
	_, ok := im.m[id]
	return ok
}

func (im *identityMemo) add(id claimIdentity) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.m == nil || len(im.m) >= im.limit {
		im.m = make(map[claimIdentity]struct{}, im.limit)
	}
	im.m[id] = struct{}{}
}

// validateSwap checks the fields a renewal or release writes: the times and
// the version.
func validateSwap(op string, c *domain.ClaimRecord) error {
	if leaseFieldsValid(c) {
		return nil
	}
	return validateClaim(op, c)
}

// leaseFieldsValid reports whether c's timestamps and version certainly
// satisfy the schema. A timestamp must encode as RFC 3339 in UTC with a
// trailing Z and a four-digit year: encoding/json writes a time.Time in the
// UTC location that way for the years 0 to 9999 (and refuses the others).
// The version must be a non-negative integer.
func leaseFieldsValid(c *domain.ClaimRecord) bool {
	if c.ClaimVersion < 0 || !timestampValid(c.LeaseExpiresAt) || !timestampValid(c.HeartbeatAt) {
		return false
	}
	return c.ReleasedAt == nil || timestampValid(*c.ReleasedAt)
}

func timestampValid(t time.Time) bool {
	y := t.Year()
	return t.Location() == time.UTC && y >= 0 && y <= 9999
}
