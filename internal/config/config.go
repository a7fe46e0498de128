// Package config is azolla's typed configuration: its defaults, validation,
// secret masking and the logger it describes. Loading (files, environment,
// flags) belongs to the command line; this package never reads a source.
package config

import (
	"os"
	"path/filepath"
	"time"
)

// Config is the whole configuration. The mapstructure keys are the keys of
// azolla.yaml and, upper-cased with "." -> "_" and an AZOLLA_ prefix, of the
// environment.
type Config struct {
	// DataDir holds azolla's local state (the SQLite database by default).
	DataDir string      `mapstructure:"data_dir" json:"data_dir" yaml:"data_dir"`
	Store   StoreConfig `mapstructure:"store" json:"store" yaml:"store"`
	Claim   ClaimConfig `mapstructure:"claim" json:"claim" yaml:"claim"`
	Log     LogConfig   `mapstructure:"log" json:"log" yaml:"log"`
}

// StoreConfig selects and addresses the store backend.
type StoreConfig struct {
	// Driver is DriverSQLite or DriverPostgres.
	Driver string `mapstructure:"driver" json:"driver" yaml:"driver"`
	// DSN is the PostgreSQL connection string, a postgres:// URL or libpq
	// key=value form. It carries the password: print it only via Masked.
	DSN string `mapstructure:"dsn" json:"dsn" yaml:"dsn"`
	// SQLitePath overrides <data_dir>/azolla.db; see Config.SQLitePath.
	SQLitePath string `mapstructure:"sqlite_path" json:"sqlite_path" yaml:"sqlite_path"`
}

// ClaimConfig tunes the claim/lease protocol.
type ClaimConfig struct {
	// LeaseTTL is how long a claim lives without renewal. 30s-120s suits most
	// workers: shorter churns renewals, longer delays recovery from a crash.
	LeaseTTL time.Duration `mapstructure:"lease_ttl" json:"lease_ttl" yaml:"lease_ttl"`
}

// LogConfig shapes the process logger; see Config.Logger.
type LogConfig struct {
	Level  string `mapstructure:"level" json:"level" yaml:"level"`
	Format string `mapstructure:"format" json:"format" yaml:"format"`
}

// Store drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Lease TTL bounds enforced by Validate.
const (
	MinLeaseTTL = time.Second
	MaxLeaseTTL = 10 * time.Minute
)

// sqliteFile is the database's name inside the data dir.
const sqliteFile = "azolla.db"

// Default returns the defaults, with the data dir taken from the process
// environment.
func Default() Config { return DefaultFor(os.Getenv) }

// DefaultFor is Default with the environment read through getenv, so callers
// that inject their environment get matching defaults.
func DefaultFor(getenv func(string) string) Config {
	return Config{
		DataDir: DefaultDataDir(getenv),
		Store:   StoreConfig{Driver: DriverSQLite},
		Claim:   ClaimConfig{LeaseTTL: 60 * time.Second},
		Log:     LogConfig{Level: "info", Format: "text"},
	}
}

// DefaultDataDir follows the XDG base directory spec: $XDG_DATA_HOME/azolla,
// else $HOME/.local/share/azolla; "" when neither is usable, which Validate
// reports.
func DefaultDataDir(getenv func(string) string) string {
	// The spec says a relative XDG_DATA_HOME is invalid and must be ignored.
	if xdg := getenv("XDG_DATA_HOME"); xdg != "" && filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "azolla")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "share", "azolla")
	}
	return ""
}

// SQLitePath is the SQLite database file: store.sqlite_path when set (a
// relative path is relative to the working directory), else
// <data_dir>/azolla.db.
func (c Config) SQLitePath() string {
	if c.Store.SQLitePath != "" {
		return c.Store.SQLitePath
	}
	return filepath.Join(c.DataDir, sqliteFile)
}
