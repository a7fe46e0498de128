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
		{"poll interval not under the lease", func(c *config.Config) { c.Claim.LeaseTTL = 5 * time.Second },
			[]string{`lifecycle.poll_interval: must be shorter than claim.lease_ttl (5s), the poller's leadership lease that each pass renews, got 5s`}},
		{"temporal TLS disabled and a CA", func(c *config.Config) {
			c.Temporal.TLS.Disabled, c.Temporal.TLS.CAFile = true, "/ca.pem"
		}, []string{`temporal.tls.disabled: cannot be combined with temporal.tls.enabled, cert_file`}},
		{"temporal client certificate without its key", func(c *config.Config) { c.Temporal.TLS.CertFile = "/c.pem" },
			[]string{`temporal.tls: cert_file and key_file must be set together`}},
		{"bad level", func(c *config.Config) { c.Log.Level = "verbose" },
			[]string{`log.level: must be one of debug, info, warn, error, got "verbose"`}},
		{"bad format", func(c *config.Config) { c.Log.Format = "xml" },
			[]string{`log.format: must be one of text, json, got "xml"`}},
		{"no data dir", func(c *config.Config) { c.DataDir = "" },
			[]string{`data_dir: must be set`}},
		{"unknown generator", func(c *config.Config) { c.Patch.Generator = "gpt" },
			[]string{`patch.generator: must be one of static, command, openai, got "gpt"`}},
		{"command generator without a command", func(c *config.Config) { c.Patch.Generator = "command" },
			[]string{`patch.command.run: must be a command line when patch.generator is "command"`}},
		{"openai generator without a model", func(c *config.Config) { c.Patch.Generator = "openai" },
			[]string{`patch.openai.model: must be set when patch.generator is "openai"`}},
		{"openai base url not http", func(c *config.Config) { c.Patch.OpenAI.BaseURL = "ftp://x" },
			[]string{`patch.openai.base_url: must be an http(s) URL`}},
		{"openai token parameter unknown", func(c *config.Config) { c.Patch.OpenAI.TokenParam = "max_output_tokens" },
			[]string{`patch.openai.token_param: must be max_completion_tokens or max_tokens, got "max_output_tokens"`}},
		{"openai concurrency zero", func(c *config.Config) { c.Patch.OpenAI.MaxConcurrency = 0 },
			[]string{`patch.openai.max_concurrency: must be positive, got 0`}},
		{"author without email", func(c *config.Config) { c.Patch.Author.Email = "nobody" },
			[]string{`patch.author: needs a name and an email address`}},
		{"author with a newline", func(c *config.Config) { c.Patch.Author.Name = "a\nb" },
			[]string{`patch.author:`}},
		{"patch limit", func(c *config.Config) { c.Patch.MaxPatchBytes = 0 },
			[]string{`patch.max_patch_bytes: must be positive, got 0`}},
		{"no retention", func(c *config.Config) { c.Patch.Retention = 0 },
			[]string{`patch.retention: must be a positive duration (e.g. 168h for a week), got 0s`}},
		{"negative retention", func(c *config.Config) { c.Patch.Retention = -time.Hour },
			[]string{`patch.retention: must be a positive duration`, `got -1h0m0s`}},
		{"gc interval too short", func(c *config.Config) { c.Patch.GCInterval = time.Second },
			[]string{`patch.gc_interval: must be a duration of at least 1m0s, got 1s`}},
		{"repository settings", func(c *config.Config) {
			c.Patch.Repositories = []config.RepositoryConfig{
				{Repository: "/srv/a", GateCommands: []string{"go test ./...", " "}, GateBudget: 7 * time.Hour,
					SelectCommand: "\t"},
				{Repository: "/srv/a", PushRemote: "--upload-pack=x"},
				{},
			}
		}, []string{`patch.repositories[0].gate_commands[1]: must be a command line`,
			`patch.repositories[0].select_command: must be a command line, or left out`,
			`patch.repositories[0].gate_budget: must be a duration between 1s and 6h0m0s, got 7h0m0s`,
			`patch.repositories[1].repository: is listed twice`,
			`patch.repositories[1].push_remote: must be a URL or an absolute path`,
			`patch.repositories[2].repository: must be set`}},
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
		{"lease 1s", func(c *config.Config) { c.Claim.LeaseTTL, c.Lifecycle.PollInterval = time.Second, 999*time.Millisecond }},
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

func TestPatchRepositoryFindsSettingsByExactName(t *testing.T) {
	t.Parallel()
	p := valid().Patch
	p.Repositories = []config.RepositoryConfig{{Repository: "/srv/a", GateCommands: []string{"make test"}},
		{Repository: "/srv/b", GateBudget: time.Minute, PushRemote: "/srv/b.git"}}
	a := p.Repository("/srv/a")
	require.Equal(t, []string{"make test"}, a.GateCommands)
	require.Equal(t, config.DefaultGateBudget, a.GateBudget, "an unset budget takes the default")
	require.Equal(t, time.Minute, p.Repository("/srv/b").GateBudget)
	require.Equal(t, "/srv/b.git", p.Repository("/srv/b").PushRemote)
	other := p.Repository("/srv/a/")
	require.Empty(t, other.GateCommands, "names match exactly")
	require.Empty(t, other.PushRemote, "push is off unless configured")
}

func TestValidateControlPlane(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*config.ControlPlaneConfig)
		want   string
	}{
		{"address without port", func(c *config.ControlPlaneConfig) { c.Address = "localhost" }, `control_plane.address: must be host:port`},
		{"cert without key", func(c *config.ControlPlaneConfig) { c.CertFile = "/c.pem" }, `control_plane.cert_file: cert_file and key_file must be set together`},
		{"client CA without HTTPS", func(c *config.ControlPlaneConfig) { c.ClientCAFile = "/ca.pem" },
			`control_plane.client_ca_file: requires client certificates over HTTPS: set cert_file and key_file too`},
		{"redis url scheme", func(c *config.ControlPlaneConfig) { c.RedisURL = "http://h:6379" }, `control_plane.redis_url: must be a redis:// or rediss:// URL`},
		{"heartbeat over half the lease", func(c *config.ControlPlaneConfig) { c.HeartbeatInterval = 31 * time.Second }, `control_plane.heartbeat_interval: must be positive and at most half`},
		{"no attempts", func(c *config.ControlPlaneConfig) { c.MaxAttempts = 0 }, `control_plane.max_attempts: must be at least 1, got 0`},
		{"wait over the cap", func(c *config.ControlPlaneConfig) { c.MaxWait = time.Minute }, `control_plane.max_wait: must be a duration up to 30s, got 1m0s`},
		{"unknown remote type", func(c *config.ControlPlaneConfig) { c.RemoteDiazotrophs = []string{"patch"} }, `control_plane.remote_diazotrophs[0]: must be a diazotroph type`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid()
			tt.mutate(&c.ControlPlane)
			err := c.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
	c := valid()
	c.ControlPlane.RemoteDiazotrophs = []string{"PATCH_DIAZOTROPH"}
	c.ControlPlane.RedisURL = "redis://:secret@127.0.0.1:6379/0"
	require.NoError(t, c.Validate())
	require.NotContains(t, c.Masked().ControlPlane.RedisURL, "secret")
}
