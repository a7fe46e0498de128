package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
)

// gitea is a valid forge section.
func gitea() config.ForgeConfig {
	return config.ForgeConfig{Kind: "gitea", URL: "https://gitea.example.com", Repository: "team/app",
		TokenEnv: "GITEA_TOKEN"}
}

func withForge(f config.ForgeConfig) func(*config.Config) {
	return func(c *config.Config) {
		c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/r", Forge: f}}
	}
}

func TestValidateForge_NamesTheKeyOfEachProblem(t *testing.T) {
	t.Parallel()
	with := func(m func(*config.ForgeConfig)) func(*config.Config) {
		f := gitea()
		m(&f)
		return withForge(f)
	}
	tests := []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"unknown kind", with(func(f *config.ForgeConfig) { f.Kind = "bitbucket" }),
			`patch.repositories[0].forge.kind: must be one of [gitea github gitlab], got "bitbucket"`},
		{"settings without a kind", with(func(f *config.ForgeConfig) { f.Kind = "" }),
			`patch.repositories[0].forge.kind: must be set`},
		{"no URL", with(func(f *config.ForgeConfig) { f.URL = "gitea.example.com" }),
			`patch.repositories[0].forge.url: must be the forge's http(s) address`},
		{"a token in the URL", with(func(f *config.ForgeConfig) { f.URL = "https://x:tok@gitea.example.com" }),
			`patch.repositories[0].forge.url: must hold no credentials`},
		{"a repository without owner", with(func(f *config.ForgeConfig) { f.Repository = "app" }),
			`patch.repositories[0].forge.repository: must be owner/name on the forge, got "app"`},
		{"a repository leaving its owner", with(func(f *config.ForgeConfig) { f.Repository = "team/../x" }),
			`patch.repositories[0].forge.repository: must be owner/name`},
		{"no token", with(func(f *config.ForgeConfig) { f.TokenEnv = "" }),
			`patch.repositories[0].forge.token_env: set exactly one of token_env and token_file`},
		{"both tokens", with(func(f *config.ForgeConfig) { f.TokenFile = "/run/secrets/forge" }),
			`patch.repositories[0].forge.token_env: set exactly one of token_env and token_file`},
		{"azolla's own variable as the token", with(func(f *config.ForgeConfig) { f.TokenEnv = "AZOLLA_STORE_DSN" }),
			`patch.repositories[0].forge.token_env: AZOLLA_STORE_DSN cannot be passed`},
		{"a relative token file", with(func(f *config.ForgeConfig) { f.TokenEnv, f.TokenFile = "", "forge.token" }),
			`patch.repositories[0].forge.token_file: must be an absolute path`},
		{"a poll too often", with(func(f *config.ForgeConfig) { f.PollInterval = 1 }),
			`patch.repositories[0].forge.poll_interval: must be at least 5s`},
		{"a label with a comma", with(func(f *config.ForgeConfig) { f.Labels = []string{"a,b"} }),
			`patch.repositories[0].forge.labels[0]: must be a label name without commas`},
		{"the token passed to the agent", func(c *config.Config) {
			withForge(gitea())(c)
			c.Patch.Command.PassEnv = []string{"OPENAI_API_KEY", "GITEA_TOKEN"}
		}, `patch.command.pass_env[1]: GITEA_TOKEN holds a forge token or webhook secret (forge.token_env, webhook_secret_env): azolla's own, it never reaches a run`},
		{"the webhook secret passed to the agent", func(c *config.Config) {
			f := gitea()
			f.WebhookSecretEnv = "GITEA_HOOK_SECRET"
			withForge(f)(c)
			c.Patch.Command.PassEnv = []string{"GITEA_HOOK_SECRET"}
		}, `patch.command.pass_env[0]: GITEA_HOOK_SECRET holds a forge token or webhook secret`},
		{"a webhook secret variable that is azolla's", with(func(f *config.ForgeConfig) { f.WebhookSecretEnv = "AZOLLA_X" }),
			`patch.repositories[0].forge.webhook_secret_env: AZOLLA_X cannot be passed`},
		{"an intake that becomes a ticket", with(func(f *config.ForgeConfig) { f.Intake = config.IntakeConfig{Label: "azolla", As: "ticket"} }),
			`patch.repositories[0].forge.intake.as: must be objective or capture, got "ticket"`},
		{"an intake assignee with an @", with(func(f *config.ForgeConfig) { f.Intake.Assignee = "@azolla-bot" }),
			`patch.repositories[0].forge.intake.assignee: must be a user name (no @)`},
		{"an intake mention of two words", with(func(f *config.ForgeConfig) { f.Intake.Mention = "hey azolla" }),
			`patch.repositories[0].forge.intake.mention: must be one word`},
		{"approve_on_label without a label", with(func(f *config.ForgeConfig) {
			f.Intake = config.IntakeConfig{Mention: "@azolla", ApproveOnLabel: true}
		}), `patch.repositories[0].forge.intake.approve_on_label: needs a label: set forge.intake.label`},
		{"intake settings without a trigger", with(func(f *config.ForgeConfig) { f.Intake.AutoApproveWriters = true }),
			`patch.repositories[0].forge.intake: sets auto_approve_writers but no trigger: set label, assignee or mention`},
		{"the token passed to the gate", func(c *config.Config) {
			c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/r", Forge: gitea(), GatePassEnv: []string{"GITEA_TOKEN"}}}
		}, `patch.repositories[0].gate_pass_env[0]: GITEA_TOKEN holds a forge token`},
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

func TestValidateForge_AcceptsEachKind(t *testing.T) {
	t.Parallel()
	for _, f := range []config.ForgeConfig{gitea(),
		{Kind: "github", URL: "https://github.com", Repository: "team/app", TokenEnv: "GITHUB_TOKEN", Draft: true,
			Labels: []string{"azolla"}, Reviewers: []string{"alice"}},
		{Kind: "gitlab", URL: "https://gitlab.com", Repository: "group/sub/app", TokenFile: "/run/secrets/gitlab"}} {
		c := valid()
		withForge(f)(&c)
		require.NoError(t, c.Validate(), f.Kind)
	}
}

func TestForgeToken_FromTheEnvironmentOrAFileAndRedacted(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GITEA_TOKEN": "gitea-token-0123456789"}
	getenv := func(k string) string { return env[k] }
	f := gitea()
	tok, err := f.Token(getenv)
	require.NoError(t, err)
	require.Equal(t, "gitea-token-0123456789", tok)

	f.TokenEnv = "UNSET_TOKEN"
	_, err = f.Token(getenv)
	require.ErrorIs(t, err, config.ErrNoForgeToken)
	require.ErrorContains(t, err, "$UNSET_TOKEN is not set")

	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("file-token-0123456789\n"), 0o600))
	f.TokenEnv, f.TokenFile = "", file
	tok, err = f.Token(getenv)
	require.NoError(t, err)
	require.Equal(t, "file-token-0123456789", tok)

	c := valid()
	c.Patch.Repositories = []config.RepositoryConfig{{Repository: "/a", Forge: gitea()},
		{Repository: "/b", Forge: f}}
	got := c.ForgeTokens(getenv)
	require.Len(t, got, 2)
	require.Equal(t, "gitea-token-0123456789", got[0].Value)
	require.Equal(t, "file-token-0123456789", got[1].Value)
	require.Contains(t, c.HiddenPaths(), file, "no run sees the token file")
	for _, s := range c.Secrets() {
		require.NotEqual(t, "GITEA_TOKEN", s.Value, "a variable's name is no secret (%s)", s.Name)
	}
}

func TestForge_CloneURL(t *testing.T) {
	t.Parallel()
	f := gitea()
	f.URL += "/"
	require.Equal(t, "https://gitea.example.com/team/app.git", f.CloneURL())
}
