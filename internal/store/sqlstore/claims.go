package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

const claimCols = `resource_type, resource_id, owner_id, lease_expires_at, heartbeat_at, claim_version, released_at`

func scanClaim(r rowScanner) (*store.ClaimRecord, error) {
	var c store.ClaimRecord
	err := r.Scan(&c.ResourceType, &c.ResourceID, &c.OwnerID, timeCol{&c.LeaseExpiresAt},
		timeCol{&c.HeartbeatAt}, &c.ClaimVersion, nullTimeCol{&c.ReleasedAt})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// validateClaim checks the row a claim statement is about to write, before
// it runs. Where the database computes a field (the version on acquire, the
// kept heartbeat on release) c carries the smallest or nearest value the
// statement can produce.
func validateClaim(op string, c store.ClaimRecord) error {
	if err := schemas.Validate(schemas.ClaimRecord, &c); err != nil {
		return fmt.Errorf("%s claim: %w", op, err)
	}
	return nil
}

// validateLease checks the row an acquisition or renewal writes.
func validateLease(op, resourceType, resourceID, ownerID string, version int64, ttl time.Duration, now time.Time) error {
	if ttl <= 0 {
		return fmt.Errorf("%s claim: lease TTL must be positive, got %s", op, ttl)
	}
	return validateClaim(op, store.ClaimRecord{ResourceType: resourceType, ResourceID: resourceID, OwnerID: ownerID,
		LeaseExpiresAt: now.Add(ttl), HeartbeatAt: now, ClaimVersion: version})
}

// AcquireClaim is one statement: insert the claim, or take over the existing
// row only if its lease has expired (a released claim is expired too). The
// WHERE on the conflict branch is what makes a live claim unacquirable.
func (q *querier) AcquireClaim(ctx context.Context, p store.AcquireClaimParams) (*store.ClaimRecord, bool, error) {
	now := store.NowOr(p.Now)
	if err := validateLease("acquire", p.ResourceType, p.ResourceID, p.OwnerID, 1, p.TTL, now); err != nil {
		return nil, false, err
	}
	c, err := scanClaim(q.queryRow(ctx, `INSERT INTO claims (`+claimCols+`)
		VALUES ($1, $2, $3, $4, $5, 1, NULL)
		ON CONFLICT (resource_type, resource_id) DO UPDATE SET
			owner_id = excluded.owner_id, lease_expires_at = excluded.lease_expires_at,
			heartbeat_at = excluded.heartbeat_at, claim_version = claims.claim_version + 1, released_at = NULL
		WHERE claims.lease_expires_at <= excluded.heartbeat_at
		RETURNING `+claimCols,
		p.ResourceType, p.ResourceID, p.OwnerID, q.t(now.Add(p.TTL)), q.t(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("acquire claim on %s %s: %w", p.ResourceType, p.ResourceID, err)
	}
	return c, true, nil
}

// RenewClaim extends the lease by compare-and-swap on (owner_id,
// claim_version); each renewal bumps the version, so a holder that missed a
// takeover can never match again.
func (q *querier) RenewClaim(ctx context.Context, p store.RenewClaimParams) (*store.ClaimRecord, error) {
	now := store.NowOr(p.Now)
	if err := validateLease("renew", p.ResourceType, p.ResourceID, p.OwnerID, p.ClaimVersion+1, p.TTL, now); err != nil {
		return nil, err
	}
	c, err := scanClaim(q.queryRow(ctx, `UPDATE claims SET lease_expires_at = $1, heartbeat_at = $2, claim_version = claim_version + 1
		WHERE resource_type = $3 AND resource_id = $4 AND owner_id = $5 AND claim_version = $6 AND released_at IS NULL
		RETURNING `+claimCols,
		q.t(now.Add(p.TTL)), q.t(now), p.ResourceType, p.ResourceID, p.OwnerID, p.ClaimVersion))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, q.leaseLost(ctx, store.Fence{ResourceType: p.ResourceType, ResourceID: p.ResourceID,
			OwnerID: p.OwnerID, ClaimVersion: p.ClaimVersion})
	}
	if err != nil {
		return nil, fmt.Errorf("renew claim on %s %s: %w", p.ResourceType, p.ResourceID, err)
	}
	return c, nil
}

// ReleaseClaim expires the holder's lease now and bumps the version. The row
// stays so claim_version keeps counting up for the resource's whole life.
func (q *querier) ReleaseClaim(ctx context.Context, p store.ReleaseClaimParams) (*store.ClaimRecord, error) {
	now := store.NowOr(p.Now)
	if err := validateClaim("release", store.ClaimRecord{ResourceType: p.ResourceType, ResourceID: p.ResourceID,
		OwnerID: p.OwnerID, LeaseExpiresAt: now, HeartbeatAt: now, ClaimVersion: p.ClaimVersion + 1, ReleasedAt: &now}); err != nil {
		return nil, err
	}
	c, err := scanClaim(q.queryRow(ctx, `UPDATE claims SET lease_expires_at = $1, released_at = $1, claim_version = claim_version + 1
		WHERE resource_type = $2 AND resource_id = $3 AND owner_id = $4 AND claim_version = $5 AND released_at IS NULL
		RETURNING `+claimCols,
		q.t(now), p.ResourceType, p.ResourceID, p.OwnerID, p.ClaimVersion))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &store.NotHolderError{ResourceType: p.ResourceType, ResourceID: p.ResourceID,
			OwnerID: p.OwnerID, ClaimVersion: p.ClaimVersion}
	}
	if err != nil {
		return nil, fmt.Errorf("release claim on %s %s: %w", p.ResourceType, p.ResourceID, err)
	}
	return c, nil
}

// GetClaim loads one claim row.
func (q *querier) GetClaim(ctx context.Context, resourceType, resourceID string) (*store.ClaimRecord, error) {
	c, err := scanClaim(q.queryRow(ctx, `SELECT `+claimCols+` FROM claims WHERE resource_type = $1 AND resource_id = $2`,
		resourceType, resourceID))
	if err != nil {
		return nil, fmt.Errorf("get claim: %w", notFound(err, "claim on "+resourceType, resourceID))
	}
	return c, nil
}

// ListClaims lists claim rows ordered by resource.
func (q *querier) ListClaims(ctx context.Context, p store.ListClaimsParams) ([]*store.ClaimRecord, error) {
	liveOnly, at := false, time.Time{}
	if p.LiveAt != nil {
		liveOnly, at = true, store.NowOr(*p.LiveAt)
	}
	rows, err := q.query(ctx, `SELECT `+claimCols+` FROM claims
		WHERE ($1 = '' OR resource_type = $1) AND (NOT $2 OR (released_at IS NULL AND lease_expires_at > $3))
		ORDER BY resource_type, resource_id`, p.ResourceType, liveOnly, q.t(at))
	out, err := collect(rows, err, scanClaim)
	if err != nil {
		return nil, fmt.Errorf("list claims: %w", err)
	}
	return out, nil
}

// CheckFence locks the claim row (FOR UPDATE on PostgreSQL; SQLite
// transactions already hold the write lock) so no takeover can slip in before
// the caller's transaction commits, then checks the fence still holds.
func (q *querier) CheckFence(ctx context.Context, f store.Fence) error {
	c, err := scanClaim(q.queryRow(ctx, `SELECT `+claimCols+` FROM claims
		WHERE resource_type = $1 AND resource_id = $2`+q.d.ForUpdate, f.ResourceType, f.ResourceID))
	if errors.Is(err, sql.ErrNoRows) {
		return &store.LeaseLostError{ResourceType: f.ResourceType, ResourceID: f.ResourceID,
			OwnerID: f.OwnerID, ClaimVersion: f.ClaimVersion}
	}
	if err != nil {
		return fmt.Errorf("check fence on %s %s: %w", f.ResourceType, f.ResourceID, err)
	}
	if c.OwnerID != f.OwnerID || c.ClaimVersion != f.ClaimVersion || c.ReleasedAt != nil {
		return lostTo(f, c)
	}
	return nil
}

// leaseLost builds the error for a failed swap, naming the current holder.
func (q *querier) leaseLost(ctx context.Context, f store.Fence) error {
	c, err := q.GetClaim(ctx, f.ResourceType, f.ResourceID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("renew claim: %w", err)
	}
	return lostTo(f, c)
}

func lostTo(f store.Fence, c *store.ClaimRecord) *store.LeaseLostError {
	e := &store.LeaseLostError{ResourceType: f.ResourceType, ResourceID: f.ResourceID,
		OwnerID: f.OwnerID, ClaimVersion: f.ClaimVersion}
	if c != nil {
		e.HolderVersion = c.ClaimVersion
		if c.ReleasedAt == nil {
			e.HolderID = c.OwnerID
		}
	}
	return e
}
