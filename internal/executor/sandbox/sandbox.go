package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/azolla/azolla/internal/executor/egress"
	"github.com/azolla/azolla/internal/executor/redact"
)

// Mode says how runs are confined.
type Mode string

const (
	// ModeAuto uses bubblewrap when it works on this host, else none.
	ModeAuto Mode = "auto"
	// ModeBwrap requires bubblewrap: a worker where it does not work
	// refuses to start.
	ModeBwrap Mode = "bwrap"
	// ModeNone runs executors unconfined: they see what the worker's user
	// sees. Their environment is still allowlisted and their limits apply.
	ModeNone Mode = "none"
)

// Modes lists the valid values, for messages.
var Modes = []Mode{ModeAuto, ModeBwrap, ModeNone}

// Options configure a Host.
type Options struct {
	// Mode is how runs are confined; "" means ModeAuto.
	Mode Mode
	// Bwrap is the bubblewrap binary; "" means bwrap from PATH.
	Bwrap string
	// Limits bound each run.
	Limits Limits
	// Hide lists paths no run may see: the data dir, the store file, the
	// configuration file, key and token files. Paths that do not exist are
	// skipped; the worker's HOME is always added.
	Hide []string
	// RunsDir holds each run's private HOME and TMPDIR while it runs. It
	// is created 0700.
	RunsDir string
	// Environ is the worker's environment, that base variables and
	// pass_env read; nil means os.Environ().
	Environ []string
	// Log hears which mode and limits were chosen; nil discards.
	Log *slog.Logger
	// Relay is the azolla binary whose egress-relay subcommand carries an
	// allowlist run's loopback to its egress proxy (package egress); ""
	// means this process's own executable.
	Relay string
	// OnEgress, when set, hears of each request an allowlist run makes
	// through its proxy: the executor, the host, whether it was refused,
	// and the bytes it carried.
	OnEgress func(executor, host string, refused bool, bytes int64)
}

// Host confines the runs of one worker process. It is safe for concurrent
// use; Close removes what it made.
type Host struct {
	mode   Mode // ModeBwrap or ModeNone, as resolved
	bwrap  string
	limits Limits
	// hide is as configured: a path that does not exist yet (a git dir
	// before the first patch) is hidden from the first run after it does.
	hide    []string
	runsDir string
	environ []string
	cgroups *cgroups
	// secrets are those of the worker's environment, by name.
	secrets *redact.Redactor
	// relay and onEgress serve allowlist runs (Options, ObserveEgress).
	relay    string
	onEgress atomic.Pointer[egressObserver]
}

// egressObserver hears of an allowlist run's requests.
type egressObserver func(executor, host string, refused bool, bytes int64)

// ObserveEgress makes fn hear of every request allowlist runs make through
// their proxies from now on (metrics built after the host).
func (h *Host) ObserveEgress(fn func(executor, host string, refused bool, bytes int64)) {
	o := egressObserver(fn)
	h.onEgress.Store(&o)
}

// New resolves o.Mode on this host, probing bubblewrap, and finds the
// cgroups it may use. It logs what it chose.
func New(o Options) (*Host, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.RunsDir == "" {
		return nil, errors.New("sandbox: no runs directory")
	}
	if err := o.Limits.check(); err != nil {
		return nil, err
	}
	environ := o.Environ
	if environ == nil {
		environ = os.Environ()
	}
	h := &Host{limits: o.Limits, runsDir: o.RunsDir, environ: slices.Clone(environ),
		secrets: redact.New(redact.FromEnviron(environ)...), relay: o.Relay}
	if o.OnEgress != nil {
		h.ObserveEgress(o.OnEgress)
	}
	if h.relay == "" {
		if self, err := os.Executable(); err == nil {
			h.relay = self
		}
	}
	if err := os.MkdirAll(o.RunsDir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: create runs directory: %w", err)
	}
	removeStaleRuns(o.RunsDir, time.Now())
	if err := closeInheritedOnExec(); err != nil {
		log.Warn("descriptors this process inherited may reach runs", "error", err)
	}
	h.hide = slices.Clone(o.Hide)
	if home, err := os.UserHomeDir(); err == nil {
		h.hide = append(h.hide, home)
	}

	mode := o.Mode
	if mode == "" {
		mode = ModeAuto
	}
	switch mode {
	case ModeNone:
		h.mode = ModeNone
		log.Warn("executors run without a sandbox (executor.sandbox: none): an agent or gate command can read and write " +
			"whatever this worker's user can, and reach the network; their environment is still an allowlist")
	case ModeBwrap, ModeAuto:
		path, err := probeBwrap(o.Bwrap)
		switch {
		case err == nil:
			h.mode, h.bwrap = ModeBwrap, path
			log.Info("executors run in a bubblewrap sandbox", "bwrap", path, "hidden", hidden(h.hide))
		case mode == ModeBwrap:
			return nil, fmt.Errorf("sandbox: bwrap is required and does not work here: %w", err)
		default:
			h.mode = ModeNone
			log.Warn("executors run without a sandbox: executor.sandbox is auto and bubblewrap does not work here; "+
				"install bubblewrap, or allow user namespaces, or set executor.sandbox: none to say this is meant",
				"reason", err.Error())
		}
	default:
		return nil, fmt.Errorf("sandbox: mode must be one of %v, got %q", Modes, mode)
	}
	h.cgroups = findCgroups(log)
	h.logLimits(log)
	return h, nil
}

// Environ is the worker's environment runs are built from (a copy).
func (h *Host) Environ() []string { return slices.Clone(h.environ) }

// Mode is the mode runs get: ModeBwrap or ModeNone.
func (h *Host) Mode() Mode { return h.mode }

// Secrets redacts the secrets of the worker's environment (by their
// names, redact.SecretName).
func (h *Host) Secrets() *redact.Redactor { return h.secrets }

// Close removes the cgroups the host made.
func (h *Host) Close() error {
	if h.cgroups != nil {
		return h.cgroups.close()
	}
	return nil
}

// hidden cleans paths, drops those that do not exist or lie inside another
// of them, and sorts them.
func hidden(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		// The path a mount would cover: a symlink's target, and nothing
		// that does not exist.
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if real, err = filepath.Abs(real); err != nil || real == "/" {
			continue
		}
		out = append(out, real)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(p string) bool {
		return slices.ContainsFunc(out, func(q string) bool { return q != p && within(q, p) })
	})
}

// within reports whether path is dir or lies inside it.
func within(dir, path string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// Executor runs the commands of one configured executor.
type Executor struct {
	h       *Host
	p       Policy
	vars    []string
	secrets *redact.Redactor
	// credentials are p's, with their keys: the egress proxy's, never a
	// run's.
	credentials []egress.Credential
	// stall is the stall timeout its callers pass (WithStallTimeout).
	stall time.Duration
}

// Executor returns the executor of p, after checking it. Variables of
// p.PassEnv that the worker lacks are logged and left out.
func (h *Host) Executor(p Policy, log *slog.Logger) (*Executor, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	vars, secrets, missing := p.env(h.environ)
	if len(missing) > 0 && log != nil {
		log.Warn("pass_env names variables this worker does not have; runs go without them", "executor", p.Name,
			"missing", missing)
	}
	if p.network() == NetworkNone && h.mode == ModeNone && log != nil {
		log.Warn("network: none needs the sandbox; without it runs reach the host's network", "executor", p.Name)
	}
	if p.network() == NetworkAllowlist && h.mode == ModeNone && log != nil {
		log.Warn("network: allowlist needs the sandbox; without it runs are pointed at the egress proxy but can "+
			"reach the host's network around it", "executor", p.Name)
	}
	creds, credSecrets, missingKeys := p.credentials(h.environ)
	secrets = append(secrets, credSecrets...)
	if len(missingKeys) > 0 && log != nil {
		log.Warn("credentials name variables this worker does not have; the proxy sends those hosts no key",
			"executor", p.Name, "missing", missingKeys)
	}
	if absent := p.absentBinds(); len(absent) > 0 && h.mode == ModeBwrap && log != nil {
		log.Warn("binds name paths that do not exist; runs go without them until they do", "executor", p.Name,
			"paths", absent)
	}
	return &Executor{h: h, p: p, vars: vars, secrets: redact.New(secrets...), credentials: creds}, nil
}

// Secrets redacts the secrets e passes to its runs.
func (e *Executor) Secrets() *redact.Redactor { return e.secrets }
