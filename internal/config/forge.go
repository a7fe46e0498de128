package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/forge"
)

// ForgeConfig is where a repository's pull requests go
// (docs/pull-requests.md). Its token is used by azolla's own calls only:
// the forge's API and azolla's git push. No executor may be passed the
// variable that holds it, and its value is redacted everywhere.
type ForgeConfig struct {
	// Kind is gitea (Gitea and Forgejo), github or gitlab; "" for no forge.
	Kind string `mapstructure:"kind" json:"kind" yaml:"kind"`
	// URL is the forge's web address: https://github.com (or a GitHub
	// Enterprise host), https://gitlab.com, https://gitea.example.com.
	URL string `mapstructure:"url" json:"url" yaml:"url"`
	// Repository is owner/name (GitLab: group/…/name) on the forge.
	Repository string `mapstructure:"repository" json:"repository" yaml:"repository"`
	// TokenEnv names the worker's variable that holds the token, or
	// TokenFile the file that does; exactly one.
	TokenEnv  string `mapstructure:"token_env" json:"token_env" yaml:"token_env"`
	TokenFile string `mapstructure:"token_file" json:"token_file" yaml:"token_file"`
	// Draft opens pull requests as drafts.
	Draft bool `mapstructure:"draft" json:"draft" yaml:"draft"`
	// Labels and Reviewers are set on a pull request azolla opens.
	Labels    []string `mapstructure:"labels" json:"labels" yaml:"labels"`
	Reviewers []string `mapstructure:"reviewers" json:"reviewers" yaml:"reviewers"`
	// AutoRevise starts the next round on requested changes or a failed
	// check without waiting for `objective retry`, up to MaxRounds.
	AutoRevise bool `mapstructure:"auto_revise" json:"auto_revise" yaml:"auto_revise"`
	// MaxRounds bounds the rounds on one pull request; 0 means
	// DefaultForgeMaxRounds.
	MaxRounds int `mapstructure:"max_rounds" json:"max_rounds" yaml:"max_rounds"`
	// PollInterval is how often an open pull request is read; 0 means
	// DefaultForgePollInterval.
	PollInterval time.Duration `mapstructure:"poll_interval" json:"poll_interval" yaml:"poll_interval"`
	// WebhookSecretEnv names the worker's variable holding the secret the
	// forge signs webhook deliveries with; set, POST /forge/webhook on the
	// ops address takes them and reads a pull request at once.
	WebhookSecretEnv string `mapstructure:"webhook_secret_env" json:"webhook_secret_env" yaml:"webhook_secret_env"`
	// Trusted says whose words on the forge steer an agent
	// (docs/security.md#the-forge); by default, whoever the forge says may
	// write to the repository.
	Trusted TrustedConfig `mapstructure:"trusted" json:"trusted" yaml:"trusted"`
	// Intake says which issues become work (docs/forge.md); by default
	// none do.
	Intake IntakeConfig `mapstructure:"intake" json:"intake" yaml:"intake"`
}

// TrustedConfig is forge.trusted: who, besides or instead of the people
// the forge lets write to the repository, may steer an agent with a
// review, a comment or a command.
type TrustedConfig struct {
	// Permission is the least the forge must let a user do in the
	// repository: write (the default), maintain or admin; none trusts
	// only Users and Teams.
	Permission string `mapstructure:"permission" json:"permission" yaml:"permission"`
	// Users are trusted whatever the forge says of them.
	Users []string `mapstructure:"users" json:"users" yaml:"users"`
	// Teams' members are trusted: org/team on Gitea, Forgejo and GitHub,
	// a group's full path on GitLab.
	Teams []string `mapstructure:"teams" json:"teams" yaml:"teams"`
}

// trustedPermissions are forge.trusted.permission's values, "" meaning
// write. Read is not one: on a public repository everyone may read.
var trustedPermissions = []string{"write", "maintain", "admin", "none"}

// Policy is the trust rule forge.trusted sets (package forge applies it).
func (t TrustedConfig) Policy() forge.TrustPolicy {
	p := forge.TrustPolicy{MinPermission: forge.PermissionWrite, Users: t.Users, Teams: t.Teams}
	if t.Permission != "" {
		// validate refused any other word; an unknown one trusts no one.
		p.MinPermission, _ = forge.ParsePermission(t.Permission)
		if !slices.Contains(trustedPermissions, t.Permission) {
			p.MinPermission = forge.PermissionNone
		}
	}
	return p
}

// validate checks forge.trusted of a forge of kind.
func (t TrustedConfig) validate(key, kind string, add func(key, format string, args ...any)) {
	if t.Permission != "" && !slices.Contains(trustedPermissions, t.Permission) {
		add(key+".permission", "must be one of %v, got %q (read is not: on a public repository anyone may read)",
			trustedPermissions, t.Permission)
	}
	if t.Permission == "none" && len(t.Users) == 0 && len(t.Teams) == 0 {
		add(key+".permission", "none trusts only users and teams, and there are none: no review would ever be taken")
	}
	for i, u := range t.Users {
		if strings.TrimSpace(u) == "" || strings.ContainsAny(u, " /\t\n") {
			add(fmt.Sprintf("%s.users[%d]", key, i), "must be a user name")
		}
	}
	for i, team := range t.Teams {
		parts := strings.Split(team, "/")
		switch {
		case slices.Contains(parts, "") || strings.ContainsAny(team, " \t\n"):
			add(fmt.Sprintf("%s.teams[%d]", key, i), "must be a team, got %q", team)
		case kind != forge.KindGitLab && len(parts) != 2:
			add(fmt.Sprintf("%s.teams[%d]", key, i), "must be org/team on %s, got %q", kind, team)
		}
	}
}

// Forge defaults and bounds.
const (
	DefaultForgeMaxRounds    = 3
	DefaultForgePollInterval = time.Minute
	MinForgePollInterval     = 5 * time.Second
)

// forgeKinds are the forges azolla speaks to.
var forgeKinds = []string{"gitea", "github", "gitlab"}

// Enabled says whether the repository has a forge.
func (f ForgeConfig) Enabled() bool { return f.Kind != "" }

// Rounds is MaxRounds, or its default.
func (f ForgeConfig) Rounds() int {
	if f.MaxRounds > 0 {
		return f.MaxRounds
	}
	return DefaultForgeMaxRounds
}

// Interval is PollInterval, or its default.
func (f ForgeConfig) Interval() time.Duration {
	if f.PollInterval > 0 {
		return f.PollInterval
	}
	return DefaultForgePollInterval
}

// ErrNoForgeToken: the forge's token variable is unset or its file empty.
var ErrNoForgeToken = errors.New("no forge token")

// Token reads the forge's token from the worker's environment (getenv) or
// its file. The error names where it looked, never a value.
func (f ForgeConfig) Token(getenv func(string) string) (string, error) {
	switch {
	case f.TokenEnv != "":
		if v := strings.TrimSpace(getenv(f.TokenEnv)); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("%w: $%s is not set in the worker's environment", ErrNoForgeToken, f.TokenEnv)
	case f.TokenFile != "":
		b, err := os.ReadFile(f.TokenFile)
		if err != nil {
			return "", fmt.Errorf("%w: read token_file: %v", ErrNoForgeToken, err)
		}
		if v := strings.TrimSpace(string(b)); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("%w: token_file %s is empty", ErrNoForgeToken, f.TokenFile)
	}
	return "", fmt.Errorf("%w: set forge.token_env or forge.token_file", ErrNoForgeToken)
}

// CloneURL is the repository's HTTPS address on the forge, where azolla
// pushes the work branch when the repository sets no push_remote.
func (f ForgeConfig) CloneURL() string {
	return strings.TrimSuffix(f.URL, "/") + "/" + f.Repository + ".git"
}

// PushUser is the user name azolla's push gives with the token, as each
// forge expects a token to come over HTTPS.
func (f ForgeConfig) PushUser() string {
	switch f.Kind {
	case "github":
		return "x-access-token"
	case "gitlab":
		return "oauth2"
	}
	return "azolla"
}

// ForgeTokens are the tokens of every configured forge, named by key, for
// redaction. A token that cannot be read is left out: the forge's calls
// fail on it and say so.
func (c Config) ForgeTokens(getenv func(string) string) []redact.Secret {
	var out []redact.Secret
	for i, r := range c.Patch.Repositories {
		if !r.Forge.Enabled() {
			continue
		}
		if tok, err := r.Forge.Token(getenv); err == nil {
			out = append(out, redact.Secret{Name: fmt.Sprintf("patch.repositories[%d].forge.token", i), Value: tok})
		}
		if v := r.Forge.WebhookSecret(getenv); v != "" {
			out = append(out, redact.Secret{Name: fmt.Sprintf("patch.repositories[%d].forge.webhook_secret", i), Value: v})
		}
	}
	if v := c.Ops.IntakeSecret(getenv); v != "" {
		out = append(out, redact.Secret{Name: "ops.intake_secret", Value: v})
	}
	return out
}

// WebhookSecret is the webhook secret from the worker's environment; ""
// when none is configured or set.
func (f ForgeConfig) WebhookSecret(getenv func(string) string) string {
	if f.WebhookSecretEnv == "" {
		return ""
	}
	return strings.TrimSpace(getenv(f.WebhookSecretEnv))
}

// forgeTokenEnvs are the variables that hold forge tokens and webhook
// secrets.
func (c Config) forgeTokenEnvs() []string {
	var out []string
	for _, r := range c.Patch.Repositories {
		for _, n := range []string{r.Forge.TokenEnv, r.Forge.WebhookSecretEnv} {
			if n != "" {
				out = append(out, n)
			}
		}
	}
	if c.Ops.IntakeSecretEnv != "" {
		out = append(out, c.Ops.IntakeSecretEnv)
	}
	return out
}

// validateForge checks the forge of repository key.
func (f ForgeConfig) validate(key string, add func(key, format string, args ...any)) {
	if !f.Enabled() {
		if f.URL != "" || f.Repository != "" || f.TokenEnv != "" || f.TokenFile != "" {
			add(key+".kind", "must be set (one of %v) when the forge has other settings", forgeKinds)
		}
		return
	}
	if !slices.Contains(forgeKinds, f.Kind) {
		add(key+".kind", "must be one of %v, got %q", forgeKinds, f.Kind)
	}
	if u, err := url.Parse(f.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		add(key+".url", "must be the forge's http(s) address, e.g. https://github.com")
	} else if u.User != nil || u.RawQuery != "" {
		add(key+".url", "must hold no credentials or query: the token goes in token_env or token_file")
	}
	parts := strings.Split(f.Repository, "/")
	if len(parts) < 2 || slices.Contains(parts, "") || slices.ContainsFunc(parts, func(p string) bool {
		return p == "." || p == ".." || strings.ContainsAny(p, " \t\n?#%\\")
	}) {
		add(key+".repository", "must be owner/name on the forge, got %q", f.Repository)
	}
	switch {
	case (f.TokenEnv == "") == (f.TokenFile == ""):
		add(key+".token_env", "set exactly one of token_env and token_file")
	case f.TokenEnv != "":
		if err := sandbox.CheckName(f.TokenEnv); err != nil {
			add(key+".token_env", "%v", err)
		}
	case !strings.HasPrefix(f.TokenFile, "/"):
		add(key+".token_file", "must be an absolute path")
	}
	if f.WebhookSecretEnv != "" {
		if err := sandbox.CheckName(f.WebhookSecretEnv); err != nil {
			add(key+".webhook_secret_env", "%v", err)
		}
	}
	if f.MaxRounds < 0 {
		add(key+".max_rounds", "must be at least 1 (0 means %d), got %d", DefaultForgeMaxRounds, f.MaxRounds)
	}
	if f.PollInterval != 0 && f.PollInterval < MinForgePollInterval {
		add(key+".poll_interval", "must be at least %s, got %s", MinForgePollInterval, f.PollInterval)
	}
	for i, l := range f.Labels {
		if strings.TrimSpace(l) == "" || strings.Contains(l, ",") {
			add(fmt.Sprintf("%s.labels[%d]", key, i), "must be a label name without commas")
		}
	}
	for i, r := range f.Reviewers {
		if strings.TrimSpace(r) == "" || strings.ContainsAny(r, " /\t\n") {
			add(fmt.Sprintf("%s.reviewers[%d]", key, i), "must be a user name")
		}
	}
	f.Trusted.validate(key+".trusted", f.Kind, add)
	f.Intake.validate(key+".intake", add)
}

// validateForgeTokensStayHome refuses an executor that would be passed a
// forge's token variable.
func (c Config) validateForgeTokensStayHome(add func(key, format string, args ...any)) {
	tokens := c.forgeTokenEnvs()
	if len(tokens) == 0 {
		return
	}
	for _, p := range c.Executors() {
		for i, n := range p.PassEnv {
			if slices.Contains(tokens, n) {
				add(strings.Replace(fmt.Sprintf("%s.pass_env[%d]", p.Name, i), gateKey+".", gateKey+"_", 1),
					"%s holds a forge token or webhook secret (forge.token_env, webhook_secret_env): azolla's own, it never reaches a run", n)
			}
		}
	}
}
