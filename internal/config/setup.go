package config

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/environment"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// SetupConfig is a repository's setup phase (docs/repositories.md): what
// prepares the environment its agent and gate commands run in. The zero
// value works for most repositories: the preset auto detects from the base
// commit fills the caches, with the host's network.
type SetupConfig struct {
	// Preset is auto (the default), none, go, node, python or rust.
	Preset string `mapstructure:"preset" json:"preset" yaml:"preset"`
	// Commands replace the preset's setup commands.
	Commands []string `mapstructure:"commands" json:"commands" yaml:"commands"`
	// Network is host (the default: setup downloads) or none.
	Network string `mapstructure:"network" json:"network" yaml:"network"`
	// PassEnv names the worker's variables setup reads (a proxy); Env sets
	// variables, and is part of what the environment is.
	PassEnv []string          `mapstructure:"pass_env" json:"pass_env" yaml:"pass_env"`
	Env     map[string]string `mapstructure:"env" json:"env" yaml:"env"`
	// SecretEnv names the worker's variables only setup receives (a
	// registry's credentials): redacted everywhere, and never given to an
	// agent or a gate command, whose pass_env may not name them.
	SecretEnv []string `mapstructure:"secret_env" json:"secret_env" yaml:"secret_env"`
	// Binds are host paths setup sees (a local mirror of a package index).
	Binds []BindConfig `mapstructure:"binds" json:"binds" yaml:"binds"`
	// Caches are further directories setup fills, each pointed at by its
	// env variable in setup and in runs.
	Caches []CacheConfig `mapstructure:"caches" json:"caches" yaml:"caches"`
	// KeyFiles are further files at the repository's root the environment
	// depends on (globs allowed).
	KeyFiles []string `mapstructure:"key_files" json:"key_files" yaml:"key_files"`
	// FromRepository runs the repository's .azolla/setup.sh, read from the
	// base commit, after the preset's commands: only for repositories
	// whose writers you trust with the worker's network and setup secrets.
	FromRepository bool `mapstructure:"from_repository" json:"from_repository" yaml:"from_repository"`
	// Budget bounds one setup; 0: environment.DefaultBudget.
	Budget time.Duration `mapstructure:"budget" json:"budget" yaml:"budget"`
	// CacheMaxMB caps this repository's environments on each host; 0:
	// environment.DefaultMaxBytes.
	CacheMaxMB int64 `mapstructure:"cache_max_mb" json:"cache_max_mb" yaml:"cache_max_mb"`
}

// CacheConfig is one further directory setup fills.
type CacheConfig struct {
	// Env is the variable pointing at it.
	Env string `mapstructure:"env" json:"env" yaml:"env"`
	// Writable gives each run a copy of its own it may write to; without
	// it runs see it read-only.
	Writable bool `mapstructure:"writable" json:"writable" yaml:"writable"`
}

// MaxSetupBudget bounds setup.budget.
const MaxSetupBudget = 6 * time.Hour

// Environment is the setup as package environment takes it.
func (s SetupConfig) Environment() environment.Config {
	c := environment.Config{Preset: s.Preset, Commands: s.Commands, KeyFiles: s.KeyFiles,
		FromRepository: s.FromRepository, Env: s.Env}
	for _, k := range s.Caches {
		c.Caches = append(c.Caches, environment.Cache{Name: "custom-" + strings.ToLower(k.Env), Env: k.Env,
			Writable: k.Writable})
	}
	return c
}

// MaxBytes is the cache cap in bytes, 0 for the default.
func (s SetupConfig) MaxBytes() int64 { return s.CacheMaxMB << 20 }

// Policy is setup's sandbox policy, as the executor at key name: the
// host's network unless set, and secret_env passed as secrets.
func (s SetupConfig) Policy(name string) sandbox.Policy {
	r := RunConfig{PassEnv: slices.Concat(s.PassEnv, s.SecretEnv), SecretEnv: s.SecretEnv, Network: s.Network,
		Binds: s.Binds}
	return r.Policy(name, sandbox.NetworkHost)
}

// SetupPolicy is the setup policy of patch.repositories[i].
func (c Config) SetupPolicy(i int) sandbox.Policy {
	return c.Patch.Repositories[i].Setup.Policy(fmt.Sprintf("patch.repositories[%d].setup", i))
}

// DefaultSetupPolicy is setup's policy for a repository without settings
// of its own.
func DefaultSetupPolicy() sandbox.Policy { return SetupConfig{}.Policy("setup") }

var cacheEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validate checks the setup of repository key.
func (s SetupConfig) validate(key string, add func(key, format string, args ...any)) {
	if s.Preset != "" && !slices.Contains(environment.Names(), s.Preset) {
		add(key+".preset", "must be one of %v, got %q", environment.Names(), s.Preset)
	}
	for i, c := range s.Commands {
		if strings.TrimSpace(c) == "" {
			add(fmt.Sprintf("%s.commands[%d]", key, i), "must be a command line")
		}
	}
	if s.Network != "" && s.Network != NetworkHost && s.Network != NetworkNone {
		add(key+".network", "must be %q or %q, got %q", NetworkHost, NetworkNone, s.Network)
	}
	for i, n := range s.SecretEnv {
		if err := sandbox.CheckName(n); err != nil {
			add(fmt.Sprintf("%s.secret_env[%d]", key, i), "%v", err)
		}
		if slices.Contains(s.PassEnv, n) {
			add(fmt.Sprintf("%s.secret_env[%d]", key, i), "%s is also in pass_env: a secret goes in secret_env alone", n)
		}
	}
	for i, c := range s.Caches {
		k := fmt.Sprintf("%s.caches[%d].env", key, i)
		if err := sandbox.CheckName(c.Env); err != nil || !cacheEnvName.MatchString(c.Env) {
			add(k, "must be the variable that points at the cache, e.g. TOOLS_DIR, got %q", c.Env)
		}
	}
	for i, f := range s.KeyFiles {
		if _, err := path.Match(f, ""); err != nil || f == "" || strings.Contains(f, "/") || f == "." || f == ".." {
			add(fmt.Sprintf("%s.key_files[%d]", key, i), "must name files at the repository's root (a glob such as "+
				"requirements*.txt), got %q", f)
		}
	}
	if s.Budget < 0 || s.Budget > MaxSetupBudget {
		add(key+".budget", "must be a duration up to %s (0: %s), got %s", MaxSetupBudget, environment.DefaultBudget, s.Budget)
	}
	if s.CacheMaxMB < 0 {
		add(key+".cache_max_mb", "must be a size in MiB (0: %d), got %d", environment.DefaultMaxBytes>>20, s.CacheMaxMB)
	}
	if err := s.Policy(key).Check(); err != nil {
		for _, e := range unjoin(err) {
			add(key, "%v", e)
		}
	}
}

// validateSetupSecretsStayInSetup refuses an agent or a gate command that
// would be passed a variable a setup holds as its secret, and any executor
// passed a key the egress proxy adds for an agent (credentials).
func (c Config) validateSetupSecretsStayInSetup(add func(key, format string, args ...any)) {
	setup, proxied := map[string]string{}, map[string]string{}
	for i, r := range c.Patch.Repositories {
		for _, n := range r.Setup.SecretEnv {
			setup[n] = fmt.Sprintf("patch.repositories[%d].setup.secret_env", i)
		}
	}
	executors := c.Executors()
	for _, p := range executors {
		for i, k := range p.Credentials {
			proxied[k.SecretEnv] = fmt.Sprintf("%s.credentials[%d]", p.Name, i)
		}
	}
	for _, p := range executors {
		isSetup := strings.HasSuffix(p.Name, ".setup")
		for i, n := range p.PassEnv {
			key := strings.Replace(fmt.Sprintf("%s.pass_env[%d]", p.Name, i), gateKey+".", gateKey+"_", 1)
			if owner, ok := setup[n]; ok && !isSetup {
				add(key, "%s is a setup secret (%s): only setup receives it, never an agent or a gate command", n, owner)
			}
			if owner, ok := proxied[n]; ok && !strings.HasPrefix(owner, p.Name+".") {
				add(key, "%s is a key the egress proxy adds for %s: no run holds it", n, owner)
			}
		}
	}
}
