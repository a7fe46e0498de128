package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
)

func valid() config.Config {
	return config.DefaultFor(envOf(map[string]string{"HOME": "/home/u"}))
}

func TestValidateNamesTheKeyOfEachProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*config.Config)
		want   []string // substrings of the error, in order of appearance
	}{
		{"unknown driver", func(c *config.Config) { c.Store.Driver = "mysql" },
			[]string{`store.driver: must be "sqlite" or "postgres", got "mysql"`}},
		{"postgres without dsn", func(c *config.Config) { c.Store.Driver = "postgres" },
			[]string{`store.dsn: required when store.driver is "postgres"`}},
		{"postgres with non-url dsn", func(c *config.Config) { c.Store.Driver, c.Store.DSN = "postgres", "localhost" },
			[]string{`store.dsn: must be a postgres:// URL or a key=value connection string`}},
		{"postgres with wrong scheme", func(c *config.Config) { c.Store.Driver, c.Store.DSN = "postgres", "mysql://u:p@h/db" },
			[]string{`store.dsn: URL scheme must be postgres or postgresql, got "mysql"`}},
		{"postgres with sqlite path", func(c *config.Config) {
			c.Store.Driver, c.Store.DSN, c.Store.SQLitePath = "postgres", "postgres://h/db", "/x.db"
		}, []string{`store.sqlite_path: is set but store.driver is "postgres"`}},
		{"dsn with sqlite driver", func(c *config.Config) { c.Store.DSN = "postgres://h/db" },
			[]string{`store.dsn: is set but store.driver is "sqlite"`}},
		{"lease too short", func(c *config.Config) { c.Claim.LeaseTTL = 500 * time.Millisecond },
			[]string{`claim.lease_ttl: must be a duration between 1s and 10m0s`, `got 500ms`}},
		{"lease too long", func(c *config.Config) { c.Claim.LeaseTTL = 11 * time.Minute },
			[]string{`claim.lease_ttl:`, `got 11m0s`}},
		{"bad level", func(c *config.Config) { c.Log.Level = "verbose" },
			[]string{`log.level: must be one of debug, info, warn, error, got "verbose"`}},
		{"bad format", func(c *config.Config) { c.Log.Format = "xml" },
			[]string{`log.format: must be one of text, json, got "xml"`}},
		{"no data dir", func(c *config.Config) { c.DataDir = "" },
			[]string{`data_dir: must be set`}},
		{"every problem at once", func(c *config.Config) {
			c.Store.Driver, c.Claim.LeaseTTL, c.Log.Format = "mysql", 0, "xml"
		}, []string{"store.driver:", "claim.lease_ttl:", "log.format:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid()
			tt.mutate(&c)
			err := c.Validate()
			require.Error(t, err)
			msg := err.Error()
			for _, w := range tt.want {
				i := strings.Index(msg, w)
				require.GreaterOrEqual(t, i, 0, "want %q in %q", w, msg)
				msg = msg[i+len(w):]
			}
		})
	}
}

func TestValidateAcceptsBoundariesAndPostgresForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*config.Config)
	}{
		{"lease 1s", func(c *config.Config) { c.Claim.LeaseTTL = time.Second }},
		{"lease 10m", func(c *config.Config) { c.Claim.LeaseTTL = 10 * time.Minute }},
		{"postgres url", func(c *config.Config) {
			c.Store.Driver, c.Store.DSN = "postgres", "postgres://u:p@db:5432/azolla?sslmode=disable"
		}},
		{"postgresql url", func(c *config.Config) { c.Store.Driver, c.Store.DSN = "postgres", "postgresql://db/azolla" }},
		{"key=value dsn", func(c *config.Config) { c.Store.Driver, c.Store.DSN = "postgres", "host=db user=u password=p" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid()
			tt.mutate(&c)
			require.NoError(t, c.Validate())
		})
	}
}

func TestValidateNeverEchoesTheDSN(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Store.Driver, c.Store.DSN = "postgres", "postgres://u:s3cret/x@db:5432/azolla"
	err := c.Validate()
	require.ErrorContains(t, err, "store.dsn: is not a valid URL")
	require.NotContains(t, err.Error(), "s3cret")
}
