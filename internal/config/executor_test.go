package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/redact"
)

func TestValidateExecutors_NamesTheKeyOfEachProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"unknown sandbox", func(c *config.Config) { c.Executor.Sandbox = "docker" },
			`executor.sandbox: must be one of [auto bwrap none], got "docker"`},
		{"negative limit", func(c *config.Config) { c.Executor.MaxMemoryMB = -1 },
			`executor.max_memory_mb: must not be negative (0 means no limit), got -1`},
		{"too few processes", func(c *config.Config) { c.Executor.MaxProcesses = 3 },
			`executor.max_processes: must be 0 (no limit) or at least 16, got 3`},
		{"a stall timeout without its unit", func(c *config.Config) { c.Executor.StallTimeout = 600 },
			`executor.stall_timeout: must be 0 (off) or at least 1s, got 600ns`},
		{"a negative stall timeout", func(c *config.Config) { c.Executor.StallTimeout = -time.Minute },
			`executor.stall_timeout: must be 0 (off) or at least 1s, got -1m0s`},
		{"azolla's own variable passed by name", func(c *config.Config) {
			c.Patch.Command.PassEnv = []string{"AZOLLA_STORE_DSN"}
		}, `patch.command.pass_env[0]: AZOLLA_STORE_DSN cannot be passed: AZOLLA_* variables hold azolla's own configuration`},
		{"the store's PostgreSQL password by name", func(c *config.Config) {
			c.Diazotroph.Command.PassEnv = []string{"PGPASSWORD"}
		}, `diazotroph.command.pass_env[0]: PGPASSWORD cannot be passed: azolla's store connection reads it`},
		{"a gate's azolla variable", func(c *config.Config) {
			c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/r", GateEnv: map[string]string{"AZOLLA_TEMPORAL_API_KEY": "x"}}}
		}, `patch.repositories[0].gate_env.AZOLLA_TEMPORAL_API_KEY: AZOLLA_TEMPORAL_API_KEY cannot be passed`},
		{"a gate network that is not one", func(c *config.Config) {
			c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/r", GateNetwork: "lan"}}
		}, `patch.repositories[0].gate_network: must be one of [none allowlist host], got "lan"`},
		{"an env value holding azolla's secret", func(c *config.Config) {
			c.Temporal.APIKey = "tmprl-secret-value"
			c.Patch.Command.Env = map[string]string{"AGENT_ARGS": "--key tmprl-secret-value"}
		}, `patch.command.env.AGENT_ARGS: holds the value of temporal.api_key, azolla's own secret, which never reaches a run`},
		{"a relative bind", func(c *config.Config) {
			c.Patch.Command.Binds = []config.BindConfig{{Path: "cache", Mode: "rw"}}
		}, `patch.command.binds[0].path: must be an absolute path, got "cache"`},
		{"a bind mode that is not one", func(c *config.Config) {
			c.Patch.Command.Home = config.BindConfig{Path: "/home/agent", Mode: "write"}
		}, `patch.command.home.mode: must be "ro" or "rw", got "write"`},
		{"a gate bind mode", func(c *config.Config) {
			c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/r", GateBinds: []config.BindConfig{{Path: "/c", Mode: "x"}}}}
		}, `patch.repositories[0].gate_binds[0].mode: must be "ro" or "rw", got "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid()
			tt.mutate(&c)
			err := c.Validate()
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestValidateExecutors_AcceptsWhatAnAgentNeeds(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Executor.Sandbox = "bwrap"
	c.Patch.Command.PassEnv = []string{"ANTHROPIC_API_KEY", "HTTPS_PROXY"}
	c.Patch.Command.Env = map[string]string{"CLAUDE_CODE_MAX_TURNS": "30"}
	c.Patch.Command.Home = config.BindConfig{Path: "/home/agent/.claude", Mode: "rw"}
	c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/r", GateNetwork: "host",
		GatePassEnv: []string{"GOFLAGS"}, GateBinds: []config.BindConfig{{Path: "/root/go/pkg/mod"}}}}
	require.NoError(t, c.Validate())
}

func TestSecrets_FindsEverySecretOfTheConfiguration(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Store.Driver, c.Store.DSN = "postgres", "postgres://app:store-pw-1234@db:5432/azolla"
	c.Temporal.APIKey = "tmprl-key-5678"
	c.Patch.OpenAI.APIKey = "sk-openai-9012"
	c.ControlPlane.RedisURL = "redis://:redis-pw-3456@cache:6379/0"
	c.Substrates = map[string]config.SubstrateConfig{"ops": {Driver: "postgres",
		DSN: "host=db user=ops password='kv pw 7890' dbname=ops"}}
	c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/r", PushRemote: "https://bot:ghp_push_1234@example.com/r.git",
		GateEnv: map[string]string{"NPM_TOKEN": "npm-token-5678", "CI": "true"}}}
	c.Temporal.TLS.KeyFile = "/etc/azolla/client.key"
	r := redact.New(c.Secrets()...)
	for _, secret := range []string{"store-pw-1234", "tmprl-key-5678", "sk-openai-9012", "redis-pw-3456", "kv pw 7890",
		"ghp_push_1234", "npm-token-5678"} {
		_, found := r.Find("output: " + secret)
		require.True(t, found, "%s is not known as a secret", secret)
	}
	require.Equal(t, "[redacted:store.dsn]", r.String(c.Store.DSN))
	require.Equal(t, "/etc/azolla/client.key true", r.String("/etc/azolla/client.key true"),
		"where a secret lies is no secret, and neither is an ordinary env value")
}

// TestSecrets_CoversEverySecretKey walks the configuration's keys: any
// whose name says it is secret must be found by Secrets once set, so a key
// added later (a forge token) cannot be forgotten.
func TestSecrets_CoversEverySecretKey(t *testing.T) {
	t.Parallel()
	c := valid()
	var keys []string
	setSecretStrings(reflect.ValueOf(&c).Elem(), "", &keys)
	require.NotEmpty(t, keys)
	r := redact.New(c.Secrets()...)
	for _, k := range keys {
		_, found := r.Find(secretValueFor(k))
		require.True(t, found, "%s is not redacted", k)
	}
}

// setSecretStrings sets every string field whose key SecretName judges
// secret (but a *_file path or a *_env variable's name: where a secret is
// is no secret) to a value made from its key.
func setSecretStrings(v reflect.Value, prefix string, keys *[]string) {
	t := v.Type()
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("mapstructure"), ",")
		f := v.Field(i)
		key := prefix + name
		switch {
		case opts == "squash":
			setSecretStrings(f, prefix, keys)
		case f.Kind() == reflect.Struct:
			setSecretStrings(f, key+".", keys)
		case f.Kind() == reflect.String && redact.SecretName(name) && !strings.HasSuffix(name, "_file") &&
			!strings.HasSuffix(name, "_env"):
			f.SetString(secretValueFor(key))
			*keys = append(*keys, key)
		}
	}
}

func secretValueFor(key string) string { return "value-of-" + key }

func TestStallTimeout_DefaultsToTenMinutesAcceptsZeroAndRefusesUnderASecond(t *testing.T) {
	t.Parallel()
	require.Equal(t, 10*time.Minute, config.Default().Executor.StallTimeout)
	c := valid()
	c.Executor.StallTimeout = 0
	require.NoError(t, c.Validate(), "0 turns the stop off")
	c.Executor.StallTimeout = time.Second
	require.NoError(t, c.Validate())
	c.Executor.StallTimeout = 10 // a unit left out: ten nanoseconds
	require.ErrorContains(t, c.Validate(), "executor.stall_timeout")
}
