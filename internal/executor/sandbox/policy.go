package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/executor/egress"
	"github.com/azolla/azolla/internal/executor/redact"
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
	// NetworkAllowlist is NetworkNone and a way out through azolla's
	// egress proxy to the hosts of Egress and Credentials only (package
	// egress). It needs the sandbox too.
	NetworkAllowlist Network = "allowlist"
)

// Networks lists the valid values, for messages.
var Networks = []Network{NetworkNone, NetworkAllowlist, NetworkHost}

// Credential is a key a run uses without holding it: the egress proxy adds
// it, as a header, to what the run sends to Host through its base URL.
type Credential struct {
	// Host is host or host:port.
	Host string
	// Header is the header's name; Format its value, where {secret} stands
	// for the key ("" is the key alone, "Bearer {secret}" for a bearer
	// token).
	Header, Format string
	// SecretEnv names the worker's variable that holds the key. The run
	// gets a placeholder under that name, so an agent that insists on the
	// variable starts; never the key.
	SecretEnv string
	// BaseURLEnv, when set, is the variable the run's agent takes its
	// endpoint from (ANTHROPIC_BASE_URL): it is pointed at the proxy, with
	// BasePath after the host (/v1).
	BaseURLEnv, BasePath string
	// Scheme is https (the default), or http for a local endpoint.
	Scheme string
}

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
	// Egress are the hosts a NetworkAllowlist run may reach:
	// "api.example.com", "host:port", "*.example.com".
	Egress []string
	// Credentials are the keys the egress proxy adds for a NetworkAllowlist
	// run.
	Credentials []Credential
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
		add("network", "must be one of %v, got %q", Networks, p.Network)
	}
	if (len(p.Egress) > 0 || len(p.Credentials) > 0) && p.Network != NetworkAllowlist {
		add("network", "must be %q for egress and credentials to apply, got %q", NetworkAllowlist, p.network())
	}
	for i, h := range p.Egress {
		if err := checkHost(h); err != nil {
			add(fmt.Sprintf("egress[%d]", i), "%v", err)
		}
	}
	for i, c := range p.Credentials {
		key := fmt.Sprintf("credentials[%d]", i)
		if err := checkHost(c.Host); err != nil || strings.HasPrefix(c.Host, "*.") {
			add(key+".host", "must be one host (host or host:port), got %q", c.Host)
		}
		if len(c.Header) > 64 || !headerName.MatchString(c.Header) {
			add(key+".header", "must be a header name, got %q", c.Header)
		}
		if err := CheckName(c.SecretEnv); err != nil {
			add(key+".secret_env", "%v", err)
		} else if _, inEnv := p.Env[c.SecretEnv]; inEnv || slices.Contains(p.PassEnv, c.SecretEnv) {
			add(key+".secret_env", "%s is also passed to the run (pass_env or env): the proxy adds the key so "+
				"that the run never holds it; pass it one way", c.SecretEnv)
		}
		if c.BaseURLEnv != "" {
			if err := CheckName(c.BaseURLEnv); err != nil {
				add(key+".base_url_env", "%v", err)
			}
		}
		if c.Scheme != "" && c.Scheme != "https" && c.Scheme != "http" {
			add(key+".scheme", "must be https (the default) or http, got %q", c.Scheme)
		}
		if c.Format != "" && !strings.Contains(c.Format, "{secret}") {
			add(key+".format", "must hold {secret}, where the key goes, got %q", c.Format)
		}
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

// Unbounded repetitions and a length check apart: a {0,251} would compile
// into a large program at every process's start.
var (
	headerName = regexp.MustCompile(`^[A-Za-z0-9-]+$`)
	hostName   = regexp.MustCompile(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$`)
)

// checkHost refuses an egress entry that is no host: a URL, a path, a
// blank.
func checkHost(h string) error {
	if len(h) > 260 || !hostName.MatchString(h) {
		return fmt.Errorf("must be a host name, host:port or *.domain, got %q", h)
	}
	return nil
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

// credentials are p's credentials with their keys from the worker's
// environment, the keys as secrets to redact, and the variables missing.
func (p Policy) credentials(environ []string) (out []egress.Credential, secrets []redact.Secret, missing []string) {
	for _, c := range p.Credentials {
		key, ok := lookup(environ, c.SecretEnv)
		if !ok || key == "" {
			missing = append(missing, c.SecretEnv)
			continue
		}
		format := c.Format
		if format == "" {
			format = "{secret}"
		}
		out = append(out, egress.Credential{Host: c.Host, Header: c.Header, Scheme: c.Scheme,
			Value: strings.ReplaceAll(format, "{secret}", key)})
		secrets = append(secrets, redact.Secret{Name: c.SecretEnv, Value: key})
	}
	return out, secrets, missing
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
