package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/azolla/azolla/internal/proc"
	"github.com/azolla/azolla/internal/redact"
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
		secrets: redact.New(redact.FromEnviron(environ)...)}
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

// closeInheritedOnExec marks every descriptor of this process from 3 up
// close-on-exec. Go opens its own so; one inherited from whatever started
// the worker (a supervisor's pipe or socket) would otherwise be open in
// every run.
func closeInheritedOnExec() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	entries, rerr := os.ReadDir("/proc/self/fd")
	if rerr != nil {
		return fmt.Errorf("close_range: %w; /proc/self/fd: %w", err, rerr)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
	return nil
}

// staleRunAge is when a run's directory is surely a crashed worker's: no
// run lasts longer than the longest budget, 24 hours.
const staleRunAge = 48 * time.Hour

// removeStaleRuns removes run directories a crashed worker left in dir.
func removeStaleRuns(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() && strings.HasPrefix(e.Name(), "run-") &&
			now.Sub(info.ModTime()) > staleRunAge {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
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
	return &Executor{h: h, p: p, vars: vars, secrets: redact.New(secrets...)}, nil
}

// Secrets redacts the secrets e passes to its runs.
func (e *Executor) Secrets() *redact.Redactor { return e.secrets }

// Run is one run of an executor: its private directories, and the commands
// it executes there. End removes them.
type Run struct {
	e         *Executor
	dir       string
	home, tmp string
}

// Begin makes a run's private directories.
func (e *Executor) Begin() (*Run, error) {
	dir, err := os.MkdirTemp(e.h.runsDir, "run-")
	if err == nil {
		dir, err = realDir(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: create the run's directory: %w", e.p.Name, err)
	}
	r := &Run{e: e, dir: dir, home: filepath.Join(dir, "home"), tmp: filepath.Join(dir, "tmp")}
	for _, d := range []string{r.home, r.tmp, filepath.Join(dir, "files")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("%s: create the run's directory: %w", e.p.Name, err)
		}
	}
	if e.p.Home != nil {
		r.home = e.p.Home.Path
	}
	return r, nil
}

// Path is where a file of the run named name goes (an input the command
// reads, a report it writes): private to the run, outside its working
// directory, visible to its commands.
func (r *Run) Path(name string) string { return filepath.Join(r.dir, "files", filepath.Base(name)) }

// End removes the run's private directories.
func (r *Run) End() error { return os.RemoveAll(r.dir) }

// Command is one command of a run.
type Command struct {
	// Line is run by /bin/sh -c.
	Line string
	// Dir is the working directory, the one writable place of the host's
	// besides the run's own; it must exist. "" is a directory private to
	// the run.
	Dir string
	// ReadOnly are paths inside Dir the command may read but not change:
	// a repository's .git, whose configuration and hooks azolla's own git
	// runs read after the command, outside the sandbox. Without a sandbox
	// they are writable like the rest.
	ReadOnly []string
	// Vars are the run's AZOLLA_* descriptors; they win over everything.
	Vars           []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Outcome is how a command ended.
type Outcome struct {
	proc.Result
	// Limit names the resource limit the run hit, "" if none did.
	Limit string
	// Hint says what a sandbox may have to do with how the command ended
	// (a command not found where the worker would have found it), "".
	Hint string
}

// Explain is the sentence a run's notes add about its limits and its
// sandbox, "" when there is nothing to say.
func (o Outcome) Explain() string {
	var parts []string
	if o.Limit != "" {
		parts = append(parts, "the run hit its "+o.Limit)
	}
	if o.Hint != "" {
		parts = append(parts, o.Hint)
	}
	return strings.Join(parts, "; ")
}

// notFoundHint explains exit status 127 in a sandbox.
const notFoundHint = "exit status 127 is the shell's \"command not found\": in the sandbox the worker's HOME, " +
	"the data dir and /tmp are hidden, so a tool installed there needs a bind (binds: [{path: ...}])"

// Exec runs c within the run's confinement and limits; see proc.Run for
// what is an error.
func (r *Run) Exec(ctx context.Context, c Command) (Outcome, error) {
	e := r.e
	if err := checkVars(c.Vars); err != nil {
		return Outcome{}, err
	}
	if c.Dir == "" {
		c.Dir = filepath.Join(r.dir, "work")
		if err := os.MkdirAll(c.Dir, 0o700); err != nil {
			return Outcome{}, fmt.Errorf("%s: create the run's working directory: %w", e.p.Name, err)
		}
	}
	dir, err := realDir(c.Dir)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: working directory: %w", e.p.Name, err)
	}
	if dir == "/" {
		// It would be writable, and with it the whole file system.
		return Outcome{}, fmt.Errorf("%s: the working directory cannot be /", e.p.Name)
	}
	h, err := newHold(e.h.mode)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", e.p.Name, err)
	}
	defer h.close()
	spec := proc.Spec{Command: c.Line, Dir: dir, Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr,
		Env: slices.Concat(baseEnv(e.h.environ, r.home, r.tmp), e.vars, c.Vars), ExtraFiles: h.files}
	spec.Shell = h.shell
	if e.h.mode == ModeBwrap {
		spec.Wrap = e.h.bwrapArgs(e.p, dir, r.dir, c.ReadOnly, h.bwrapArgs)
	}
	cg, err := e.h.cgroups.forRun(e.h.limits)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", e.p.Name, err)
	}
	spec.Started = func(started int) error {
		pid, err := h.target(started)
		if err != nil {
			return err
		}
		if err := e.h.limits.apply(pid); err != nil {
			return err
		}
		if err := cg.add(pid); err != nil {
			return err
		}
		h.release()
		return nil
	}
	res, err := proc.Run(ctx, spec)
	out := Outcome{Result: res, Limit: cg.finish()}
	if out.Limit == "" {
		out.Limit = e.h.limits.hitBy(res)
	}
	if e.h.mode == ModeBwrap && res.ExitCode == 127 {
		out.Hint = notFoundHint
	}
	return out, err
}

// realDir is dir absolute and without symlinks, as a mount sees it.
func realDir(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return filepath.Abs(real)
}
