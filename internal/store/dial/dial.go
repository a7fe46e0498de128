// Package dial opens the configured store backend. It is apart from package
// store because the backends import store, and a caller that picks one by
// configuration must see them all.
package dial

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/postgres"
	"github.com/azolla/azolla/internal/store/sqlite"
)

// Backend names.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Config says which backend to open and where.
type Config struct {
	Driver     string // SQLite or Postgres
	DSN        string // PostgreSQL connection string
	SQLitePath string // SQLite database file; its directory is created
}

// Open opens the store without migrating it, creating the SQLite file's
// directory (mode 0750) if needed.
func Open(ctx context.Context, c Config) (store.Store, error) {
	switch c.Driver {
	case SQLite, "":
		if c.SQLitePath != "" {
			if err := os.MkdirAll(filepath.Dir(c.SQLitePath), 0o750); err != nil {
				return nil, fmt.Errorf("open sqlite store: create data dir: %w", err)
			}
		}
		return sqlite.Open(ctx, c.SQLitePath)
	case Postgres:
		return postgres.Open(ctx, c.DSN)
	default:
		return nil, fmt.Errorf("open store: unknown driver %q (want %q or %q)", c.Driver, SQLite, Postgres)
	}
}
