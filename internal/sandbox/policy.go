package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/redact"
)

// Network is what network a run has.
type Network string

const (
	// NetworkHost shares the worker's network: what an agent needs to
	// reach its model's API.
	NetworkHost Network = "host"
	// NetworkNone gives the run a network of its own with loopback only:
	// the default for gate commands. It needs the sandbox; without one a
	// run gets the host's network and the worker says so at start.
	NetworkNone Network = "none"
)

// Networks lists the valid values, for messages.
var Networks = []Network{NetworkNone, NetworkHost}

// Bind is a host path a run sees, at the same path.
type Bind struct {
	Path     string
	Writable bool
}

// Policy is one executor's configuration: what its runs get beyond the
// base environment and their working directory.
type Policy struct {
	// Name is the executor's configuration key, e.g. patch.command, for
	// messages.
	Name string
	// PassEnv names worker variables copied into each run.
	PassEnv []string
	// Env is set in each run.
	Env map[string]string
	// SecretEnv names variables of PassEnv or Env that are secret although
	// their names do not say so (redact.SecretName judges the others).
	SecretEnv []string
	// Network is the run's network; "" means NetworkHost.
	Network Network
	// Home, when set, is the run's HOME instead of a private one (an
	// agent's login and settings live there).
	Home *Bind
	// Binds are further host paths the run sees (caches such as GOMODCACHE).
	Binds []Bind
}

// Check reports every problem of p, each prefixed by the key it is about
// (p.Name + ".pass_env" ...). It only looks at p itself.
func (p Policy) Check() error {
	var errs []error
	add := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: "+format, append([]any{p.Name, key}, args...)...))
	}
	for i, n := range p.PassEnv {
		if err := CheckName(n); err != nil {
			add(fmt.Sprintf("pass_env[%d]", i), "%v", err)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(p.Env)) {
		if err := CheckName(n); err != nil {
			add("env."+n, "%v", err)
		}
		if slices.Contains(p.PassEnv, n) {
			add("env."+n, "is also in pass_env: keep one")
		}
	}
	for i, n := range p.SecretEnv {
		if _, inEnv := p.Env[n]; !inEnv && !slices.Contains(p.PassEnv, n) {
			add(fmt.Sprintf("secret_env[%d]", i), "%s is neither in pass_env nor in env", n)
		}
	}
	if p.Network != "" && !slices.Contains(Networks, p.Network) {
		add("network", "must be %q or %q, got %q", NetworkNone, NetworkHost, p.Network)
	}
	if p.Home != nil {
		if err := checkPath(p.Home.Path); err != nil {
			add("home.path", "%v", err)
		}
	}
	for i, b := range p.Binds {
		if err := checkPath(b.Path); err != nil {
			add(fmt.Sprintf("binds[%d].path", i), "%v", err)
		}
	}
	return errors.Join(errs...)
}

// checkPath refuses a bind path that is not absolute and clean, or is the
// root itself.
func checkPath(p string) error {
	switch {
	case !filepath.IsAbs(p):
		return fmt.Errorf("must be an absolute path, got %q", p)
	case filepath.Clean(p) != p:
		return fmt.Errorf("must be a clean path (%q), got %q", filepath.Clean(p), p)
	case p == "/":
		return errors.New("cannot be / itself")
	case strings.ContainsAny(p, "\x00\n"):
		return fmt.Errorf("holds a NUL or newline: %q", p)
	}
	return nil
}

// absentBinds are the bound paths (home included) that do not exist: a
// sandbox skips them.
func (p Policy) absentBinds() []string {
	binds := slices.Clone(p.Binds)
	if p.Home != nil {
		binds = append(binds, *p.Home)
	}
	var out []string
	for _, b := range binds {
		if _, err := os.Stat(b.Path); err != nil {
			out = append(out, b.Path)
		}
	}
	return out
}

// network is p's network, NetworkHost when unset.
func (p Policy) network() Network {
	if p.Network == "" {
		return NetworkHost
	}
	return p.Network
}

// env returns the variables p adds to a run, from the worker's
// environment, and the secrets among them.
func (p Policy) env(environ []string) (vars []string, secrets []redact.Secret, missing []string) {
	secret := func(name string) bool { return redact.SecretName(name) || slices.Contains(p.SecretEnv, name) }
	for _, n := range p.PassEnv {
		v, ok := lookup(environ, n)
		if !ok {
			missing = append(missing, n)
			continue
		}
		vars = append(vars, n+"="+v)
		if secret(n) {
			secrets = append(secrets, redact.Secret{Name: n, Value: v})
		}
	}
	for _, n := range slices.Sorted(maps.Keys(p.Env)) {
		vars = append(vars, n+"="+p.Env[n])
		if secret(n) {
			secrets = append(secrets, redact.Secret{Name: n, Value: p.Env[n]})
		}
	}
	return vars, secrets, missing
}
