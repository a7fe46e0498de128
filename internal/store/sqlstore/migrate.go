package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

var migrationName = regexp.MustCompile(`^(\d{4})_[a-z0-9_]+\.sql$`)

type migration struct {
	version int
	name    string
	sql     string
}

func (s *Store) migrations() ([]migration, error) {
	entries, err := fs.ReadDir(s.d.Migrations, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %q does not match NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(s.d.Migrations, e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("two migrations have version %d", out[i].version)
		}
	}
	return out, nil
}

// Migrate applies every migration not yet recorded, each in its own
// transaction together with its schema_migrations row, so a crash leaves
// either all of a migration or none of it. A second run applies nothing, and
// concurrent runs take turns (the dialect's lock, or SQLite's write lock).
func (s *Store) Migrate(ctx context.Context) ([]int, error) {
	ms, err := s.migrations()
	if err != nil {
		return nil, err
	}
	var applied []int
	for _, m := range ms {
		ok, err := s.apply(ctx, m)
		if err != nil {
			return applied, err
		}
		if ok {
			applied = append(applied, m.version)
		}
	}
	return applied, nil
}

// apply runs one migration unless it is recorded already.
func (s *Store) apply(ctx context.Context, m migration) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrate %s: begin: %w", m.name, err)
	}
	defer func() { _ = tx.Rollback() }()
	if s.d.LockMigrations != "" {
		if _, err := tx.ExecContext(ctx, s.d.LockMigrations); err != nil {
			return false, fmt.Errorf("migrate %s: lock: %w", m.name, err)
		}
	}
	// Created here, under the lock: two processes racing on CREATE TABLE IF
	// NOT EXISTS can both try to create it on PostgreSQL.
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return false, fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, s.d.Rebind(`SELECT COUNT(*) FROM schema_migrations WHERE version = $1`), m.version).Scan(&n); err != nil {
		return false, fmt.Errorf("migrate %s: %w", m.name, err)
	}
	if n > 0 {
		return false, nil
	}
	if hasStatements(m.sql) {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return false, fmt.Errorf("migrate %s: %w", m.name, err)
		}
	}
	if step := dataMigrations[m.version]; step != nil {
		if err := step(ctx, tx, s.d.Rebind); err != nil {
			return false, fmt.Errorf("migrate %s: %w", m.name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.d.Rebind(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`),
		m.version, m.name, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return false, fmt.Errorf("migrate %s: record: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate %s: commit: %w", m.name, err)
	}
	return true, nil
}

// hasStatements reports whether a migration file holds more than comments
// (a migration that is all Go has a file that says so).
func hasStatements(sql string) bool {
	for _, line := range strings.Split(sql, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "--") {
			return true
		}
	}
	return false
}

// MustSub returns the migrations folder dir of an embedded file system; the
// backends embed theirs at build time, so a missing folder is a programming
// error.
func MustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
