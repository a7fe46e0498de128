// Package substrate runs the manifest's named, read-only, versioned queries
// against another azolla's substrate: a database holding azolla's tables
// (objectives, pause_states, run_records, ...), SQLite or PostgreSQL.
//
// Every query of one manifest runs in one read-only transaction
// (sql.TxOptions{ReadOnly: true}; on PostgreSQL under SET LOCAL
// statement_timeout, on SQLite under a context deadline, on a connection
// opened mode=ro with query_only), so a manifest reads one consistent state
// and can write nothing. The queries are plain SQL over the columns every
// azolla store has had since its first migration, so an older azolla's
// substrate answers too. The one exception is pull_requests, whose table
// came with the store's migration 0008: the query first asks whether the
// substrate has the table, and without it answers no rows with the
// parameter "table_absent": "true" (manifest.ParamTableAbsent), so the
// manifest is written and says that part is not kept there. Asking first,
// rather than reading "no such table" from a failed statement, keeps the
// PostgreSQL transaction usable for the queries after it.
//
// Each query returns at most Config.RowCap rows. It asks for one more: when
// there are more, the result keeps the first RowCap rows (in the query's
// order) and says so in its parameters ("truncated": "true"), so a busy
// substrate still gives a manifest, and the snapshot records that it is
// partial.
// run_spend caps the bundles it reads, then keeps those whose runs could
// cost: it may answer fewer than RowCap rows and still say "truncated".
//
// A substrate that cannot be reached (a bad DSN, a server down, a missing
// file, a database without azolla's tables, a statement that timed out) is
// an error wrapping ErrUnreachable with the reason.
package substrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/store/postgres"
	"github.com/azolla/azolla/internal/store/sqlite"
	"github.com/azolla/azolla/internal/store/sqlstore"
)

// ErrUnreachable is wrapped by every error about a substrate that cannot be
// read: connection, missing database or table, timeout.
var ErrUnreachable = errors.New("substrate unreachable")

// Drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Defaults of Config.
const (
	DefaultStatementTimeout = 5 * time.Second
	DefaultRowCap           = 500
	DefaultLookback         = 30 * 24 * time.Hour
)

// QueryVersion is the version of every query this package runs.
const QueryVersion = 1

// Config names one substrate and how to reach it.
type Config struct {
	// Name is the substrate's name, recorded in each result.
	Name string
	// Driver is DriverSQLite or DriverPostgres.
	Driver string
	// DSN is the PostgreSQL DSN (postgres:// URL or key=value).
	DSN string
	// Path is the SQLite file.
	Path string
	// StatementTimeout bounds the whole read (default 5s).
	StatementTimeout time.Duration
	// RowCap bounds each query's rows (default 500).
	RowCap int
	// Lookback is how far back DONE objectives and run records are read
	// (default 30 days).
	Lookback time.Duration
	// SLA judges overdue objectives (package deadline; nil: the defaults).
	SLA map[string]time.Duration
}

// Substrate is an open, read-only substrate.
type Substrate struct {
	cfg Config
	db  *sql.DB
	// dialect is the azolla store's own for the driver: its placeholders
	// and timestamp encoding are how the substrate's tables were written.
	dialect *sqlstore.Dialect
}

// Open opens cfg's database read-only. It does not wait for the substrate
// to answer: a substrate down now is reported by ManifestQueries (as
// ErrUnreachable), so a worker starts regardless. A config that cannot
// work (no name, unknown driver, no path or DSN, a DSN that does not parse)
// is an error.
func Open(ctx context.Context, cfg Config) (*Substrate, error) {
	if cfg.Name == "" {
		return nil, errors.New("open substrate: no name")
	}
	if cfg.StatementTimeout <= 0 {
		cfg.StatementTimeout = DefaultStatementTimeout
	}
	if cfg.RowCap <= 0 {
		cfg.RowCap = DefaultRowCap
	}
	if cfg.Lookback <= 0 {
		cfg.Lookback = DefaultLookback
	}
	var (
		db      *sql.DB
		dialect *sqlstore.Dialect
		err     error
	)
	switch cfg.Driver {
	case DriverSQLite:
		if cfg.Path == "" {
			return nil, fmt.Errorf("open substrate %s: sqlite: empty path", cfg.Name)
		}
		q := url.Values{}
		q.Set("mode", "ro")
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.StatementTimeout.Milliseconds()))
		q.Add("_pragma", "query_only(1)")
		dsn := "file:" + (&url.URL{Path: cfg.Path}).EscapedPath() + "?" + q.Encode()
		db, err = sql.Open("sqlite", dsn)
		dialect = sqlite.Dialect
		if err == nil {
			db.SetMaxOpenConns(2)
		}
	case DriverPostgres:
		if cfg.DSN == "" {
			return nil, fmt.Errorf("open substrate %s: postgres: empty DSN", cfg.Name)
		}
		if _, perr := pgconn.ParseConfig(cfg.DSN); perr != nil {
			return nil, fmt.Errorf("open substrate %s: postgres: parse DSN: %w", cfg.Name, perr)
		}
		db, err = sql.Open("pgx", cfg.DSN)
		dialect = postgres.Dialect
		if err == nil {
			db.SetMaxOpenConns(2)
			db.SetMaxIdleConns(2)
		}
	default:
		return nil, fmt.Errorf("open substrate %s: unknown driver %q (want %s or %s)", cfg.Name, cfg.Driver, DriverSQLite, DriverPostgres)
	}
	if err != nil {
		return nil, fmt.Errorf("open substrate %s: %w", cfg.Name, err)
	}
	return &Substrate{cfg: cfg, db: db, dialect: dialect}, nil
}

// Close closes the pool.
func (s *Substrate) Close() error { return s.db.Close() }

// Name is the substrate's name.
func (s *Substrate) Name() string { return s.cfg.Name }

// Ping checks the substrate answers; an error wraps ErrUnreachable.
func (s *Substrate) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StatementTimeout)
	defer cancel()
	if err := s.db.PingContext(ctx); err != nil {
		return s.unreachable("ping", err)
	}
	return nil
}

func (s *Substrate) unreachable(what string, err error) error {
	return fmt.Errorf("%w: %s (%s): %s: %v", ErrUnreachable, s.cfg.Name, s.cfg.Driver, what, err)
}

// ManifestQueries runs the manifest's seven queries (manifest.Query*) for
// scope as of now in one read-only transaction. Scope is recorded by the
// manifest input itself; v1 queries read the whole substrate whatever the
// scope. The results come in a fixed order, each with Name, Version,
// Substrate, Parameters and Rows; the same substrate read at the same now
// gives the same results (and content hashes).
func (s *Substrate) ManifestQueries(ctx context.Context, scope string, now time.Time) ([]manifest.QueryResult, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StatementTimeout)
	defer cancel()
	var out []manifest.QueryResult
	err := s.readOnly(ctx, func(tx *sql.Tx) error {
		r := &reader{s: s, tx: tx, now: now.UTC()}
		for _, q := range []func(context.Context) (manifest.QueryResult, error){
			r.objectivesByStatus, r.blockedObjectives, r.overdueObjectives, r.humanPauseStates, r.recentRunRecords,
			r.pullRequests, r.runSpend,
		} {
			res, err := q(ctx)
			if err != nil {
				return err
			}
			res.Substrate = s.cfg.Name
			out = append(out, res)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readOnly runs fn in one read-only transaction, rolled back at the end
// (nothing is ever committed).
func (s *Substrate) readOnly(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.unreachable("begin read-only transaction", err)
	}
	defer func() { _ = tx.Rollback() }()
	if s.cfg.Driver == DriverPostgres {
		ms := s.cfg.StatementTimeout.Milliseconds()
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", ms)); err != nil {
			return s.unreachable("set statement_timeout", err)
		}
	}
	return fn(tx)
}
