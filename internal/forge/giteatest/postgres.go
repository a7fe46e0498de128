package giteatest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// DefaultPostgresDSN is the PostgreSQL every azolla development machine and
// CI run has (storetest's); AZOLLA_TEST_POSTGRES_DSN overrides it. Its
// user must be allowed to create databases.
const DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// PostgresDSN is the DSN Start uses when Options.PostgresDSN is empty.
func PostgresDSN() string {
	if dsn := os.Getenv("AZOLLA_TEST_POSTGRES_DSN"); dsn != "" {
		return dsn
	}
	return DefaultPostgresDSN
}

// postgres is one database of a server, created fresh and dropped at the
// end.
type postgres struct {
	admin    *sql.DB
	host     string // host:port, as Gitea's [database] HOST wants it
	user     string
	password string
	name     string
}

// pingPostgres reports whether the server at dsn answers.
func pingPostgres(ctx context.Context, dsn string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// createDatabase creates gitea_<random> on the server at dsn.
func createDatabase(ctx context.Context, dsn string) (*postgres, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse the PostgreSQL DSN: %w", err)
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	pg := &postgres{host: net.JoinHostPort(u.Hostname(), port), user: u.User.Username(), name: "gitea_" + randomHex(6)}
	pg.password, _ = u.User.Password()
	if pg.admin, err = sql.Open("pgx", dsn); err != nil {
		return nil, fmt.Errorf("open PostgreSQL at %s: %w", u.Redacted(), err)
	}
	if _, err := pg.admin.ExecContext(ctx, "CREATE DATABASE "+pg.name+" ENCODING 'UTF8' TEMPLATE template0"); err != nil {
		_ = pg.admin.Close()
		return nil, fmt.Errorf("create database %s at %s: %w", pg.name, u.Redacted(), err)
	}
	return pg, nil
}

// drop removes the database, disconnecting whoever still uses it.
func (pg *postgres) drop() error {
	defer pg.admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := pg.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pg.name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", pg.name, err)
	}
	return nil
}
