// Package sqlstore implements store.Store over database/sql for every SQL
// backend azolla supports. The backends (store/sqlite, store/postgres) differ
// only in what a Dialect describes: how placeholders, timestamps and unique
// violations look, how a row is locked, and their migration files. One SQL
// text serves both, written with PostgreSQL's $n placeholders.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"

	"github.com/azolla/azolla/internal/store"
)

// Dialect is what one backend contributes.
type Dialect struct {
	// Name is "sqlite" or "postgres".
	Name string
	// Rebind turns a $n query into the backend's placeholder syntax.
	Rebind func(query string) string
	// ForUpdate is appended to a SELECT that must lock its row until the end of
	// the transaction ("" where the transaction already holds the write lock).
	ForUpdate string
	// EncodeTime turns a timestamp into the value stored in a timestamp column.
	EncodeTime func(t Time) any
	// IsUniqueViolation reports a unique or primary-key constraint failure.
	IsUniqueViolation func(err error) bool
	// Migrations holds NNNN_name.sql files at its root.
	Migrations fs.FS
	// LockMigrations, if set, runs inside the migration transaction first so
	// two processes migrating at once take turns.
	LockMigrations string
}

// Store is a store.Store over one *sql.DB.
type Store struct {
	querier
	db *sql.DB
}

var _ store.Store = (*Store)(nil)

// New wraps an open database. The caller hands over db; Close closes it.
func New(db *sql.DB, d *Dialect) *Store {
	return &Store{querier: querier{conn: db, d: d}, db: db}
}

// DB exposes the pool for benchmarks and audits that need raw SQL.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect names the backend.
func (s *Store) Dialect() string { return s.d.Name }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// InTx runs fn in one transaction.
func (s *Store) InTx(ctx context.Context, fn func(q store.Querier) error) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(&querier{conn: tx, d: s.d}); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

// conn is what *sql.DB and *sql.Tx have in common.
type conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// querier implements store.Querier on a pool or a transaction.
type querier struct {
	conn conn
	d    *Dialect
}

func (q *querier) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.conn.ExecContext(ctx, q.d.Rebind(query), args...)
}

func (q *querier) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.conn.QueryContext(ctx, q.d.Rebind(query), args...)
}

func (q *querier) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return q.conn.QueryRowContext(ctx, q.d.Rebind(query), args...)
}

// t encodes a timestamp for this dialect.
func (q *querier) t(v Time) any { return q.d.EncodeTime(v) }

// rowScanner is *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

// collect scans every row of a query with scan.
func collect[T any](rows *sql.Rows, err error, scan func(rowScanner) (*T, error)) ([]*T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// notFound maps sql.ErrNoRows to a store.NotFoundError.
func notFound(err error, kind, id string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return &store.NotFoundError{Kind: kind, ID: id}
	}
	return err
}

// limit turns 0 into "no limit" for a LIMIT clause.
func limit(n int) int64 {
	if n <= 0 {
		return 1 << 62
	}
	return int64(n)
}

// nt encodes a nullable timestamp for this dialect.
func (q *querier) nt(v *Time) any {
	if v == nil {
		return nil
	}
	return q.d.EncodeTime(*v)
}

// Rebind turns a $n query into this backend's placeholder syntax, for callers
// of DB that write their own SQL.
func (s *Store) Rebind(query string) string { return s.d.Rebind(query) }

// EncodeTime turns t into what this backend stores in a timestamp column.
func (s *Store) EncodeTime(t Time) any { return s.d.EncodeTime(t) }

// insertOrGet runs an INSERT ... ON CONFLICT (natural key) DO NOTHING
// RETURNING statement. When the natural key already had a row it loads and
// returns that row with created=false; any other unique violation (the
// record's own id taken) is store.ErrAlreadyExists.
func insertOrGet[T any](q *querier, what string, inserted func() (*T, error), existing func() (*T, error)) (*T, bool, error) {
	row, err := inserted()
	switch {
	case err == nil:
		return row, true, nil
	case q.d.IsUniqueViolation(err):
		return nil, false, fmt.Errorf("%s: %w", what, store.ErrAlreadyExists)
	case !errors.Is(err, sql.ErrNoRows):
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	row, err = existing()
	if err != nil {
		return nil, false, fmt.Errorf("%s: load existing: %w", what, err)
	}
	return row, false, nil
}
