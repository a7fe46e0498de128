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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/azolla/azolla/internal/domain"
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
	// DriverCachesStatements says the driver prepares each statement once per
	// connection and reuses it by its text, so the store's hot statements run
	// as text instead of through a *sql.Stmt of its own.
	DriverCachesStatements bool
}

// Store is a store.Store over one *sql.DB.
type Store struct {
	querier
	db    *sql.DB
	stmts *stmtCache
}

var _ store.Store = (*Store)(nil)

// New wraps an open database. The caller hands over db; Close closes it.
func New(db *sql.DB, d *Dialect) *Store {
	stmts := newStmtCache(db, d)
	return &Store{querier: querier{conn: db, d: d, stmts: stmts}, db: db, stmts: stmts}
}

// DB exposes the pool for benchmarks and audits that need raw SQL.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect names the backend.
func (s *Store) Dialect() string { return s.d.Name }

// Close closes the cached statements, then the database.
func (s *Store) Close() error {
	return errors.Join(s.stmts.close(), s.db.Close())
}

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
	if err = fn(&querier{conn: tx, d: s.d, stmts: s.stmts, tx: tx}); err != nil {
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
	conn  conn
	d     *Dialect
	stmts *stmtCache
	tx    *sql.Tx // set when conn is a transaction
}

// stmt is the part of *sql.Stmt the claim queries use; textStmt runs the
// same statement by its text.
type stmt interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, args ...any) *sql.Row
}

// textStmt runs one statement's text on q's pool or transaction.
type textStmt struct {
	conn  conn
	query string // in the backend's placeholder syntax
}

func (t textStmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return t.conn.ExecContext(ctx, t.query, args...)
}

func (t textStmt) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return t.conn.QueryRowContext(ctx, t.query, args...)
}

// statement returns statement id: the cached prepared statement, bound to
// q's transaction if it has one (that copy is closed with the transaction;
// the cached statement stays), or its text where the driver caches prepared
// statements itself. On PostgreSQL a *sql.Stmt only adds database/sql's own
// per-connection bookkeeping to pgx's cache: the renewal statement ran about
// 3% slower through one than by its text, in an interleaved A/B.
//
// A transaction never prepares into the cache: preparing takes a connection
// from the pool, and transactions that each hold one and wait for another
// would deadlock a small pool. Before the cache is filled a transaction
// prepares the statement on its own connection, for this call only.
func (q *querier) statement(ctx context.Context, id stmtID) (stmt, error) {
	if q.d.DriverCachesStatements || id >= numPrepared {
		return textStmt{conn: q.conn, query: q.stmts.text[id]}, nil
	}
	if q.tx == nil {
		return q.stmts.get(ctx, id)
	}
	if st := q.stmts.loaded(id); st != nil {
		return q.tx.StmtContext(ctx, st), nil
	}
	st, err := q.tx.PrepareContext(ctx, q.stmts.text[id])
	if err != nil {
		return nil, fmt.Errorf("prepare statement: %w", err)
	}
	return st, nil
}

// stmtID names one of the statements a stmtCache holds.
type stmtID int

// stmtCache holds the prepared statements of the hot claim queries
// (cachedStatements), and the text of a few others that run by their text
// (those from numPrepared on). They are prepared together the first time one is
// needed outside a transaction, not when the store opens, so a store that has
// not been migrated yet still opens, and a failed preparation is tried again
// on the next call. database/sql prepares each again on every pooled
// connection it runs on. After a migration changes a table SQLite
// re-prepares a statement by itself, and no cached statement returns a
// column a migration could retype under it.
//
// It serves dialects whose driver does not cache statements itself (SQLite,
// which parses every statement it is handed as text); on PostgreSQL only its
// texts are used.
type stmtCache struct {
	db    *sql.DB
	text  [numStmts]string // in the backend's placeholder syntax
	ready atomic.Pointer[[numPrepared]*sql.Stmt]

	mu     sync.Mutex // serializes preparing and closing
	closed bool
}

func newStmtCache(db *sql.DB, d *Dialect) *stmtCache {
	c := &stmtCache{db: db}
	for i, text := range cachedStatements(d) {
		c.text[i] = d.Rebind(text)
	}
	return c
}

// loaded returns the cached statement, or nil before the cache is filled
// or for a statement it does not prepare.
func (c *stmtCache) loaded(id stmtID) *sql.Stmt {
	if all := c.ready.Load(); all != nil && id < numPrepared {
		return all[id]
	}
	return nil
}

// get returns the cached statement, filling the cache first if need be.
func (c *stmtCache) get(ctx context.Context, id stmtID) (*sql.Stmt, error) {
	if st := c.loaded(id); st != nil {
		return st, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("prepare statement: store is closed")
	}
	if all := c.ready.Load(); all != nil {
		return all[id], nil
	}
	var all [numPrepared]*sql.Stmt
	for i, text := range c.text[:numPrepared] {
		// A statement outlives ctx: it serves every later call.
		st, err := c.db.PrepareContext(context.WithoutCancel(ctx), text)
		if err != nil {
			for _, st := range all[:i] {
				_ = st.Close()
			}
			return nil, fmt.Errorf("prepare statement: %w", err)
		}
		all[i] = st
	}
	c.ready.Store(&all)
	return all[id], nil
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	all := c.ready.Swap(nil)
	if all == nil {
		return nil
	}
	var errs []error
	for _, st := range all {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
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
		return &domain.NotFoundError{Kind: kind, ID: id}
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
		return nil, false, fmt.Errorf("%s: %w", what, domain.ErrAlreadyExists)
	case !errors.Is(err, sql.ErrNoRows):
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	row, err = existing()
	if err != nil {
		return nil, false, fmt.Errorf("%s: load existing: %w", what, err)
	}
	return row, false, nil
}

// atomically runs fn so that an error leaves nothing of it behind: in a
// transaction of its own when q has none, else under a savepoint of q's
// transaction, so the caller's transaction stays usable (PostgreSQL aborts
// a transaction at its first failed statement) whatever it does with the
// error.
func (q *querier) atomically(ctx context.Context, fn func(q *querier) error) error {
	if q.tx == nil {
		db, ok := q.conn.(*sql.DB)
		if !ok {
			return fmt.Errorf("begin transaction: unexpected connection %T", q.conn)
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		if err := fn(&querier{conn: tx, d: q.d, stmts: q.stmts, tx: tx}); err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit transaction: %w", err)
		}
		return nil
	}
	if _, err := q.tx.ExecContext(ctx, "SAVEPOINT azolla_atomically"); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if err := fn(q); err != nil {
		_, rerr := q.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT azolla_atomically")
		if rerr == nil {
			_, rerr = q.tx.ExecContext(ctx, "RELEASE SAVEPOINT azolla_atomically")
		}
		if rerr != nil {
			return errors.Join(err, fmt.Errorf("roll back to savepoint: %w", rerr))
		}
		return err
	}
	if _, err := q.tx.ExecContext(ctx, "RELEASE SAVEPOINT azolla_atomically"); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// filters builds the WHERE clause of a list query whose filters are
// optional. A filter left empty is left out of the SQL rather than written
// as "$n is empty OR col = $n": the planner, which plans a statement
// before it knows $n, cannot use an index through that OR, so every such
// call read the whole table. Each combination of filters is a statement
// text of its own, which pgx prepares once per connection.
type filters struct {
	conds []string
	args  []any
}

// eq adds col = v unless v is empty.
func (f *filters) eq(col, v string) {
	if v != "" {
		f.conds = append(f.conds, col+" = "+f.arg(v))
	}
}

// where adds a condition that always applies; its placeholders are the
// args added with it, numbered by f.arg.
func (f *filters) where(cond string) { f.conds = append(f.conds, cond) }

// arg adds an argument and returns its placeholder.
func (f *filters) arg(v any) string {
	f.args = append(f.args, v)
	return "$" + strconv.Itoa(len(f.args))
}

// clause is " WHERE …" with every condition, or "" when there are none.
func (f *filters) clause() string {
	if len(f.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.conds, " AND ")
}
