// Package storetest holds the conformance suite every store backend must
// pass (Exercise) and the test backends themselves. It is imported by tests
// and benchmarks only.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/azolla/azolla/internal/store/postgres"
	"github.com/azolla/azolla/internal/store/sqlite"
	"github.com/azolla/azolla/internal/store/sqlstore"
)

// DefaultPostgresDSN is the PostgreSQL every azolla development machine and CI
// run has; AZOLLA_TEST_POSTGRES_DSN overrides it.
const DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Backend is a way to open a fresh, migrated store for one test.
type Backend struct {
	Name string
	Open func(t testing.TB) *sqlstore.Store
}

// Backends lists every backend the suite runs on.
func Backends() []Backend {
	return []Backend{{Name: "sqlite", Open: NewSQLite}, {Name: "postgres", Open: NewPostgres}}
}

// NewSQLite opens a migrated SQLite store in a temp dir, closed at cleanup.
func NewSQLite(t testing.TB) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "azolla.db"))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate sqlite: %v", err)
	}
	return s
}

// NewPostgres opens a migrated PostgreSQL store in a schema of its own,
// dropped at cleanup. When the server is unreachable the test fails under
// CI=true and is skipped elsewhere, saying why.
func NewPostgres(t testing.TB) *sqlstore.Store {
	t.Helper()
	s := NewPostgresUnmigrated(t)
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return s
}

// NewPostgresDSN is NewPostgres with the DSN scoped to its schema, for an
// azolla process of the test's to open the same store.
func NewPostgresDSN(t testing.TB) (*sqlstore.Store, string) {
	t.Helper()
	s, dsn := openPostgresSchema(t)
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return s, dsn
}

// openTries bounds the opens NewPostgresThrough tries.
const openTries = 4

// NewPostgresThrough is NewPostgres reached through a proxy: through is
// given the server's host:port and returns the proxy's. Its connections
// give up dialling after two seconds. direct is the same store reached
// straight, for a test's own reads once the faults are over (a pooled
// connection the proxy broke fails its next query). dsn is the store's
// DSN through the proxy, for another process to open it with.
func NewPostgresThrough(t testing.TB, through func(upstream string) string) (s, direct *sqlstore.Store, dsn string) {
	t.Helper()
	direct, upstream := NewPostgresDSN(t)
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatalf("parse postgres DSN: %v", err)
	}
	u.Host = through(u.Host)
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	// The short connect timeout bounds a connection held silent by a
	// partition; on a loaded machine a first connect can take longer, so
	// the open (before any fault) is tried a few times.
	for try := 1; ; try++ {
		if s, err = postgres.Open(context.Background(), u.String()); err == nil {
			break
		}
		if try == openTries {
			t.Fatalf("open postgres store through a proxy (%d tries): %v", try, err)
		}
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, direct, u.String()
}

// NewPostgresUnmigrated is NewPostgres before migrations: an empty schema.
func NewPostgresUnmigrated(t testing.TB) *sqlstore.Store {
	t.Helper()
	s, _ := openPostgresSchema(t)
	return s
}

// openPostgresSchema creates an empty schema and returns a store and DSN
// scoped to it.
func openPostgresSchema(t testing.TB) (*sqlstore.Store, string) {
	t.Helper()
	ctx := context.Background()
	dsn := PostgresDSN(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	schema := "azolla_test_" + randomHex(6)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse postgres DSN: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, u.String()
}

// PostgresDSN returns the test server's DSN once it answers; see NewPostgres
// for what happens when it does not.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("AZOLLA_TEST_POSTGRES_DSN")
	if dsn == "" {
		dsn = DefaultPostgresDSN
	}
	db, err := sql.Open("pgx", dsn)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
		_ = db.Close()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL at %s is required under CI=true and is unreachable: %v", redact(dsn), err)
		}
		t.Skipf("PostgreSQL at %s is unreachable (%v); start it or set AZOLLA_TEST_POSTGRES_DSN", redact(dsn), err)
	}
	return dsn
}

func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil {
		return u.Redacted()
	}
	return dsn
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
