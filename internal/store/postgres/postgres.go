// Package postgres is azolla's production store backend: PostgreSQL through
// pgx v5 (its database/sql adapter).
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/azolla/azolla/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLockKey is the advisory lock two migrating processes take turns on.
const migrationLockKey = 0x617a6f6c6c61 // "azolla"

// Dialect is PostgreSQL's contribution to sqlstore.
var Dialect = &sqlstore.Dialect{
	Name:       "postgres",
	Rebind:     func(q string) string { return q },
	ForUpdate:  " FOR UPDATE",
	EncodeTime: func(t sqlstore.Time) any { return t.UTC() },
	IsUniqueViolation: func(err error) bool {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && pe.Code == "23505"
	},
	Migrations:     sqlstore.MustSub(migrations, "migrations"),
	LockMigrations: fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrationLockKey),
	// pgx prepares each statement once per connection and keeps it by text.
	DriverCachesStatements: true,
}

// Open connects to the database at dsn (a postgres:// URL or key=value
// string) and checks it answers.
func Open(ctx context.Context, dsn string) (*sqlstore.Store, error) {
	if dsn == "" {
		return nil, errors.New("open postgres store: empty DSN (set store.dsn)")
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: parse DSN: %w", err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres store %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	// Keep as many idle connections as may be open: with database/sql's
	// default of 2, a burst of work opens and closes a connection (a TCP and
	// authentication round trip each) for nearly every statement above two
	// at a time.
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open postgres store %s:%d/%s: %w", cfg.Host, cfg.Port, cfg.Database, err)
	}
	return sqlstore.New(db, Dialect), nil
}

var _ = stdlib.GetDefaultDriver // registers the "pgx" database/sql driver
