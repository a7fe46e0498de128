package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

func withSetup(s config.SetupConfig) func(*config.Config) {
	return func(c *config.Config) {
		c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/r", Setup: s}}
	}
}

func TestValidateSetup_NamesTheKeyOfEachProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"unknown preset", withSetup(config.SetupConfig{Preset: "java"}),
			`patch.repositories[0].setup.preset: must be one of [auto none go node python rust], got "java"`},
		{"an empty command", withSetup(config.SetupConfig{Commands: []string{" "}}),
			`patch.repositories[0].setup.commands[0]: must be a command line`},
		{"an unknown network", withSetup(config.SetupConfig{Network: "allowlist"}),
			`patch.repositories[0].setup.network: must be "host" or "none", got "allowlist"`},
		{"azolla's own variable as a secret", withSetup(config.SetupConfig{SecretEnv: []string{"AZOLLA_STORE_DSN"}}),
			`patch.repositories[0].setup.secret_env[0]: AZOLLA_STORE_DSN cannot be passed`},
		{"a key file in a directory", withSetup(config.SetupConfig{KeyFiles: []string{"web/package.json"}}),
			`patch.repositories[0].setup.key_files[0]: must name files at the repository's root`},
		{"a cache without a variable", withSetup(config.SetupConfig{Caches: []config.CacheConfig{{}}}),
			`patch.repositories[0].setup.caches[0].env: must be the variable that points at the cache`},
		{"a budget too long", withSetup(config.SetupConfig{Budget: 7 * time.Hour}),
			`patch.repositories[0].setup.budget: must be a duration up to 6h0m0s`},
		{"setup's secret passed to the agent", func(c *config.Config) {
			withSetup(config.SetupConfig{SecretEnv: []string{"NPM_TOKEN"}})(c)
			c.Patch.Command.PassEnv = []string{"OPENAI_API_KEY", "NPM_TOKEN"}
		}, `patch.command.pass_env[1]: NPM_TOKEN is a setup secret (patch.repositories[0].setup.secret_env): only setup receives it, never an agent or a gate command`},
		{"setup's secret passed to the gate", func(c *config.Config) {
			c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/r", GatePassEnv: []string{"NPM_TOKEN"},
				Setup: config.SetupConfig{SecretEnv: []string{"NPM_TOKEN"}}}}
		}, `patch.repositories[0].gate_pass_env[0]: NPM_TOKEN is a setup secret`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid()
			tt.mutate(&c)
			require.ErrorContains(t, c.Validate(), tt.want)
		})
	}
}

func TestSetup_ZeroValueIsAutoWithTheHostsNetwork(t *testing.T) {
	t.Parallel()
	c := valid()
	withSetup(config.SetupConfig{})(&c)
	require.NoError(t, c.Validate())
	p := c.SetupPolicy(0)
	require.Equal(t, sandbox.NetworkHost, p.Network)
	require.Equal(t, "patch.repositories[0].setup", p.Name)
	s := config.SetupConfig{SecretEnv: []string{"NPM_TOKEN"}, PassEnv: []string{"GOPROXY"}}
	p = s.Policy("x")
	require.Equal(t, []string{"GOPROXY", "NPM_TOKEN"}, p.PassEnv, "a setup secret is passed to setup")
	require.Equal(t, []string{"NPM_TOKEN"}, p.SecretEnv, "and redacted")
}

func TestPatchCommandPolicy_APresetsAgentReachesItsModelAndNeverHoldsItsKey(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Patch.Command.Preset = "claude-code"
	p := c.PatchCommandPolicy()
	require.Equal(t, sandbox.NetworkAllowlist, p.Network)
	require.Equal(t, []string{"api.anthropic.com"}, p.Egress)
	require.Equal(t, []sandbox.Credential{{Host: "api.anthropic.com", Header: "x-api-key", SecretEnv: "ANTHROPIC_API_KEY",
		BaseURLEnv: "ANTHROPIC_BASE_URL"}}, p.Credentials)
	require.NoError(t, c.Validate())

	c.Patch.Command.PassEnv = []string{"ANTHROPIC_API_KEY"}
	p = c.PatchCommandPolicy()
	require.Equal(t, sandbox.NetworkAllowlist, p.Network, "a key passed the old way still gets the allowlist")
	require.Empty(t, p.Credentials, "the key passed by name is the agent's; the proxy adds none")

	c.Patch.Command.PassEnv, c.Patch.Command.Network = nil, "host"
	p = c.PatchCommandPolicy()
	require.Equal(t, sandbox.NetworkHost, p.Network, "a network set is the one used")
	require.Empty(t, p.Credentials)

	c = valid()
	c.Patch.Command.Preset = "claude-code"
	c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/r", GatePassEnv: []string{"ANTHROPIC_API_KEY"}}}
	require.ErrorContains(t, c.Validate(),
		"patch.repositories[0].gate_pass_env[0]: ANTHROPIC_API_KEY is a key the egress proxy adds for patch.command.credentials[0]: no run holds it")
}
