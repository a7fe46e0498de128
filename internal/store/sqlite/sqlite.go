// Package sqlite is azolla's embedded store backend: a single SQLite file in
// WAL mode through the pure-Go modernc.org/sqlite driver, so `azolla dev`
// needs nothing installed.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/azolla/azolla/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Dialect is SQLite's contribution to sqlstore.
var Dialect = &sqlstore.Dialect{
	Name: "sqlite",
	// ?NNN is SQLite's numbered placeholder: $3 and ?3 bind the same argument.
	Rebind:     func(q string) string { return strings.ReplaceAll(q, "$", "?") },
	ForUpdate:  "",
	EncodeTime: func(t sqlstore.Time) any { return t.UTC().Format(sqlstore.TimeLayout) },
	IsUniqueViolation: func(err error) bool {
		var se *sqlite.Error
		if !errors.As(err, &se) {
			return false
		}
		c := se.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	},
	Migrations: sqlstore.MustSub(migrations, "migrations"),
}

// Open opens (creating if needed) the database file at path. Every
// transaction begins IMMEDIATE, taking the write lock up front, so two writers
// never deadlock upgrading a read lock, and a claim row read inside a
// transaction cannot change before it commits. busy_timeout makes other
// connections, and other processes such as the CLI, wait instead of failing.
func Open(ctx context.Context, path string) (*sqlstore.Store, error) {
	if path == "" {
		return nil, errors.New("open sqlite store: empty path")
	}
	q := url.Values{}
	for _, p := range []string{fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()), "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	// SQLite has one writer at a time; a small pool keeps readers concurrent
	// without a crowd of writers queueing on the busy timeout.
	db.SetMaxOpenConns(4)
	if err := ping(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	return sqlstore.New(db, Dialect), nil
}

// busyTimeout matches the busy_timeout pragma above.
const busyTimeout = 10 * time.Second

// ping opens the first connection. Switching a new file to WAL takes an
// exclusive lock that the busy timeout does not wait for, so processes
// opening one new file at once can be told SQLITE_BUSY here; that clears as
// soon as one of them has switched it, so retry within the busy timeout.
func ping(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(busyTimeout)
	for {
		err := db.PingContext(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}
