package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// Remote workers' bearer tokens. Only a token's SHA-256 is stored; the
// partial unique index worker_tokens_live keeps one live token per worker.

const workerTokenCols = `worker_id, token_hash, created_at, revoked_at`

func scanWorkerToken(r rowScanner) (*domain.WorkerToken, error) {
	var t domain.WorkerToken
	if err := r.Scan(&t.WorkerID, &t.TokenHash, timeCol(&t.CreatedAt), nullTimeCol(&t.RevokedAt)); err != nil {
		return nil, err
	}
	return &t, nil
}

// CreateWorkerToken stores a token's hash for its worker.
func (s *Store) CreateWorkerToken(ctx context.Context, t *domain.WorkerToken) error {
	t.CreatedAt = store.NowOr(t.CreatedAt)
	if t.RevokedAt != nil {
		return fmt.Errorf("create worker token for %q: a new token is live: %w", t.WorkerID, domain.ErrInvalid)
	}
	if err := schemas.Validate(schemas.WorkerToken, t); err != nil {
		return fmt.Errorf("create worker token: %w", err)
	}
	_, err := s.exec(ctx, `INSERT INTO worker_tokens (`+workerTokenCols+`) VALUES ($1, $2, $3, NULL)`,
		t.WorkerID, t.TokenHash, s.t(t.CreatedAt))
	if s.d.IsUniqueViolation(err) {
		return fmt.Errorf("create worker token for %q: the worker has a live token, or the hash is taken: %w", t.WorkerID, domain.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create worker token for %q: %w", t.WorkerID, err)
	}
	return nil
}

// GetWorkerTokenByHash returns the live token with this hash.
func (s *Store) GetWorkerTokenByHash(ctx context.Context, tokenHash string) (*domain.WorkerToken, error) {
	t, err := scanWorkerToken(s.queryRow(ctx, `SELECT `+workerTokenCols+` FROM worker_tokens
		WHERE token_hash = $1 AND revoked_at IS NULL`, tokenHash))
	if err != nil {
		// The hash is not echoed: it is as good as a name for the token.
		return nil, fmt.Errorf("get worker token: %w", notFound(err, "live worker token", "(by hash)"))
	}
	return t, nil
}

// ListWorkerTokens lists every token, live and revoked, by worker.
func (s *Store) ListWorkerTokens(ctx context.Context) ([]*domain.WorkerToken, error) {
	rows, err := s.query(ctx, `SELECT `+workerTokenCols+` FROM worker_tokens ORDER BY worker_id, created_at, token_hash`)
	out, err := collect(rows, err, scanWorkerToken)
	if err != nil {
		return nil, fmt.Errorf("list worker tokens: %w", err)
	}
	return out, nil
}

// RevokeWorkerToken revokes the worker's live token.
func (s *Store) RevokeWorkerToken(ctx context.Context, workerID string, now time.Time) error {
	res, err := s.exec(ctx, `UPDATE worker_tokens SET revoked_at = $1 WHERE worker_id = $2 AND revoked_at IS NULL`,
		s.t(store.NowOr(now)), workerID)
	if err != nil {
		return fmt.Errorf("revoke worker token of %q: %w", workerID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("revoke worker token of %q: %w", workerID, err)
	}
	if n == 0 {
		return fmt.Errorf("revoke worker token: %w", &domain.NotFoundError{Kind: "live worker token of", ID: workerID})
	}
	return nil
}
