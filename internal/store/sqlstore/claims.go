package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

const claimCols = `resource_type, resource_id, owner_id, lease_expires_at, heartbeat_at, claim_version, released_at`

func scanClaim(r rowScanner) (*domain.ClaimRecord, error) {
	var c domain.ClaimRecord
	err := r.Scan(&c.ResourceType, &c.ResourceID, &c.OwnerID, timeCol(&c.LeaseExpiresAt),
		timeCol(&c.HeartbeatAt), &c.ClaimVersion, nullTimeCol(&c.ReleasedAt))
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// The claim statements. Each writes values computed in Go (the times are
// microsecond-truncated, as stored) and returns at most the one column the
// database computes, so the record a call returns is the row it wrote
// without reading it back.
const (
	// acquireSQLite is one statement: insert the claim, or take over the
	// existing row only if its lease has expired (a released claim is expired
	// too). The WHERE on the conflict branch is what makes a live claim
	// unacquirable.
	acquireSQLite = `INSERT INTO claims (` + claimCols + `)
		VALUES ($1, $2, $3, $4, $5, 1, NULL)
		ON CONFLICT (resource_type, resource_id) DO UPDATE SET
			owner_id = excluded.owner_id, lease_expires_at = excluded.lease_expires_at,
			heartbeat_at = excluded.heartbeat_at, claim_version = claims.claim_version + 1, released_at = NULL
		WHERE claims.lease_expires_at <= excluded.heartbeat_at
		RETURNING claim_version`

	// acquirePostgres calls the function migration 0013 defines: the same
	// create-or-update-if-expired in one call, answering NULL when it
	// refuses. One statement could not do it as cheaply: PostgreSQL's ON
	// CONFLICT DO UPDATE locks the conflicting row even when its WHERE is
	// false, and that lock is a write, so every refused acquisition would
	// commit and flush WAL; a data-modifying WITH that updates an expired
	// row or inserts a missing one writes nothing on refusal, but it looks
	// the row up twice and sets up both writes each time, which cost a
	// refusal about a quarter more than a plain UPDATE. The function looks
	// the row up once and runs only the write the row calls for.
	acquirePostgres = `SELECT azolla_acquire_claim($1, $2, $3, $4, $5)`

	// renewSQL extends the lease by compare-and-swap on (owner_id,
	// claim_version); each renewal bumps the version, so a holder that missed
	// a takeover can never match again.
	renewSQL = `UPDATE claims SET lease_expires_at = $1, heartbeat_at = $2, claim_version = claim_version + 1
		WHERE resource_type = $3 AND resource_id = $4 AND owner_id = $5 AND claim_version = $6 AND released_at IS NULL`

	// releaseSQL expires the holder's lease now and bumps the version,
	// keeping heartbeat_at, which it returns.
	releaseSQL = `UPDATE claims SET lease_expires_at = $1, released_at = $1, claim_version = claim_version + 1
		WHERE resource_type = $2 AND resource_id = $3 AND owner_id = $4 AND claim_version = $5 AND released_at IS NULL
		RETURNING heartbeat_at`

	getClaimSQL = `SELECT ` + claimCols + ` FROM claims WHERE resource_type = $1 AND resource_id = $2`

	// fenceSQL checks the claim's current holder; CheckFence appends the
	// dialect's row lock. Both variants are cached.
	fenceSQL = `SELECT owner_id, claim_version, released_at FROM claims
		WHERE resource_type = $1 AND resource_id = $2`
)

// The statements stmtCache holds. Those before numPrepared are the hot
// claim queries, which it prepares; the rest it holds by their text only,
// so that a mutation test can break their guard as it breaks a claim's.
const (
	stmtAcquire stmtID = iota
	stmtRenew
	stmtRelease
	stmtGetClaim
	stmtFence
	stmtAdvanceReviewCursor // pullrequests.go
	numStmts
)

// numPrepared counts the statements stmtCache prepares.
const numPrepared = stmtAdvanceReviewCursor

// cachedStatements returns the text, in $n form, of each cached statement on
// dialect d.
func cachedStatements(d *Dialect) [numStmts]string {
	// SQLite has no data-modifying WITH, and its upsert writes nothing when it
	// refuses a live claim.
	acquire := acquireSQLite
	if d.Name == "postgres" {
		acquire = acquirePostgres
	}
	return [numStmts]string{
		stmtAcquire:  acquire,
		stmtRenew:    renewSQL,
		stmtRelease:  releaseSQL,
		stmtGetClaim: getClaimSQL,
		stmtFence:    fenceSQL + d.ForUpdate,

		stmtAdvanceReviewCursor: advanceReviewCursorSQL,
	}
}

// AcquireClaim takes the claim if nobody holds a live lease on it, in one
// call: SQLite's upsert statement or PostgreSQL's acquisition function.
func (q *querier) AcquireClaim(ctx context.Context, p store.AcquireClaimParams) (*domain.ClaimRecord, bool, error) {
	now := store.NowOr(p.Now)
	c := domain.ClaimRecord{ResourceType: p.ResourceType, ResourceID: p.ResourceID, OwnerID: p.OwnerID,
		LeaseExpiresAt: leaseEnd(now, p.TTL), HeartbeatAt: now, ClaimVersion: 1}
	if err := checkTTL("acquire", p.TTL); err != nil {
		return nil, false, err
	}
	if err := validateAcquire(&c); err != nil {
		return nil, false, err
	}
	st, err := q.statement(ctx, stmtAcquire)
	// SQLite's statement answers no row when it refuses, PostgreSQL's a NULL.
	var version sql.NullInt64
	if err == nil {
		err = st.QueryRowContext(ctx, p.ResourceType, p.ResourceID, p.OwnerID, q.t(c.LeaseExpiresAt), q.t(now)).Scan(&version)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("acquire claim on %s %s: %w", p.ResourceType, p.ResourceID, err)
	}
	if !version.Valid {
		return nil, false, nil
	}
	c.ClaimVersion = version.Int64
	return &c, true, nil
}

// RenewClaim extends the lease by compare-and-swap on its version.
func (q *querier) RenewClaim(ctx context.Context, p store.RenewClaimParams) (*domain.ClaimRecord, error) {
	now := store.NowOr(p.Now)
	c := domain.ClaimRecord{ResourceType: p.ResourceType, ResourceID: p.ResourceID, OwnerID: p.OwnerID,
		LeaseExpiresAt: leaseEnd(now, p.TTL), HeartbeatAt: now, ClaimVersion: p.ClaimVersion + 1}
	if err := checkTTL("renew", p.TTL); err != nil {
		return nil, err
	}
	if err := validateSwap("renew", &c); err != nil {
		return nil, err
	}
	st, err := q.statement(ctx, stmtRenew)
	var res sql.Result
	if err == nil {
		res, err = st.ExecContext(ctx, q.t(c.LeaseExpiresAt), q.t(now), p.ResourceType, p.ResourceID, p.OwnerID, p.ClaimVersion)
	}
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err != nil {
		return nil, fmt.Errorf("renew claim on %s %s: %w", p.ResourceType, p.ResourceID, err)
	}
	if n == 0 {
		if err := validateClaim("renew", &c); err != nil {
			return nil, err // no row has an invalid identity; say which field
		}
		return nil, q.leaseLost(ctx, store.Fence{ResourceType: p.ResourceType, ResourceID: p.ResourceID,
			OwnerID: p.OwnerID, ClaimVersion: p.ClaimVersion})
	}
	return &c, nil
}

// ReleaseClaim expires the holder's lease now and bumps the version. The row
// stays so claim_version keeps counting up for the resource's whole life.
func (q *querier) ReleaseClaim(ctx context.Context, p store.ReleaseClaimParams) (*domain.ClaimRecord, error) {
	now := store.NowOr(p.Now)
	// The kept heartbeat was valid when written; now stands in for it here.
	c := domain.ClaimRecord{ResourceType: p.ResourceType, ResourceID: p.ResourceID, OwnerID: p.OwnerID,
		LeaseExpiresAt: now, HeartbeatAt: now, ClaimVersion: p.ClaimVersion + 1, ReleasedAt: &now}
	if err := validateSwap("release", &c); err != nil {
		return nil, err
	}
	st, err := q.statement(ctx, stmtRelease)
	if err == nil {
		err = st.QueryRowContext(ctx, q.t(now), p.ResourceType, p.ResourceID, p.OwnerID, p.ClaimVersion).Scan(timeCol(&c.HeartbeatAt))
	}
	if errors.Is(err, sql.ErrNoRows) {
		if err := validateClaim("release", &c); err != nil {
			return nil, err // no row has an invalid identity; say which field
		}
		return nil, &domain.NotHolderError{ResourceType: p.ResourceType, ResourceID: p.ResourceID,
			OwnerID: p.OwnerID, ClaimVersion: p.ClaimVersion}
	}
	if err != nil {
		return nil, fmt.Errorf("release claim on %s %s: %w", p.ResourceType, p.ResourceID, err)
	}
	return &c, nil
}

// GetClaim loads one claim row.
func (q *querier) GetClaim(ctx context.Context, resourceType, resourceID string) (*domain.ClaimRecord, error) {
	st, err := q.statement(ctx, stmtGetClaim)
	var c *domain.ClaimRecord
	if err == nil {
		c, err = scanClaim(st.QueryRowContext(ctx, resourceType, resourceID))
	}
	if err != nil {
		return nil, fmt.Errorf("get claim: %w", notFound(err, "claim on "+resourceType, resourceID))
	}
	return c, nil
}

// ListClaims lists claim rows ordered by resource. Typed lists name their
// types outright, so that the primary key's prefix serves them.
func (q *querier) ListClaims(ctx context.Context, p store.ListClaimsParams) ([]*domain.ClaimRecord, error) {
	liveOnly, at := false, time.Time{}
	if p.LiveAt != nil {
		liveOnly, at = true, store.NowOr(*p.LiveAt)
	}
	types := p.ResourceTypes
	if p.ResourceType != "" {
		types = append(slices.Clone(types), p.ResourceType)
	}
	args := []any{liveOnly, q.t(at)}
	where := ""
	if len(types) > 0 {
		marks := make([]string, len(types))
		for i, t := range types {
			args = append(args, t)
			marks[i] = fmt.Sprintf("$%d", i+3)
		}
		where = "resource_type IN (" + strings.Join(marks, ", ") + ") AND "
	}
	rows, err := q.query(ctx, `SELECT `+claimCols+` FROM claims
		WHERE `+where+`(NOT $1 OR (released_at IS NULL AND lease_expires_at > $2))
		ORDER BY resource_type, resource_id`, args...)
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
	st, err := q.statement(ctx, stmtFence)
	var c domain.ClaimRecord
	if err == nil {
		err = st.QueryRowContext(ctx, f.ResourceType, f.ResourceID).Scan(&c.OwnerID, &c.ClaimVersion, nullTimeCol(&c.ReleasedAt))
	}
	if errors.Is(err, sql.ErrNoRows) {
		return &domain.LeaseLostError{ResourceType: f.ResourceType, ResourceID: f.ResourceID,
			OwnerID: f.OwnerID, ClaimVersion: f.ClaimVersion}
	}
	if err != nil {
		return fmt.Errorf("check fence on %s %s: %w", f.ResourceType, f.ResourceID, err)
	}
	if c.OwnerID != f.OwnerID || c.ClaimVersion != f.ClaimVersion || c.ReleasedAt != nil {
		return lostTo(f, &c)
	}
	return nil
}

// leaseLost builds the error for a failed swap, naming the current holder.
func (q *querier) leaseLost(ctx context.Context, f store.Fence) error {
	c, err := q.GetClaim(ctx, f.ResourceType, f.ResourceID)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return fmt.Errorf("renew claim: %w", err)
	}
	return lostTo(f, c)
}

func lostTo(f store.Fence, c *domain.ClaimRecord) *domain.LeaseLostError {
	e := &domain.LeaseLostError{ResourceType: f.ResourceType, ResourceID: f.ResourceID,
		OwnerID: f.OwnerID, ClaimVersion: f.ClaimVersion}
	if c != nil {
		e.HolderVersion = c.ClaimVersion
		if c.ReleasedAt == nil {
			e.HolderID = c.OwnerID
		}
	}
	return e
}
