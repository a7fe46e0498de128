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
	"io/fs"
	"net/url"
	"strings"

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
	Migrations: mustSub(migrations, "migrations"),
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
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)"} {
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
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	return sqlstore.New(db, Dialect), nil
}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
