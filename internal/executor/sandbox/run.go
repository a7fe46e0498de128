package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/egress"
	"github.com/azolla/azolla/internal/executor/proc"
)

// Run is one run of an executor: its private directories, and the commands
// it executes there. End removes them.
type Run struct {
	e         *Executor
	dir       string
	home, tmp string
	// keptHome is a HOME of the caller's that outlives the run (UseHome),
	// "" for the private one or a configured one.
	keptHome string
	// proxy is an allowlist run's way out: on socket, which the sandbox's
	// relay reaches, or, unconfined, on address.
	proxy           *egress.Proxy
	socket, address string
	// socketDir holds socket: a short path of the system's temp dir, since
	// a socket's path is bounded; the sandbox sees the socket alone.
	socketDir string
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
	if e.p.network() == NetworkAllowlist {
		if err := r.startProxy(); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("%s: %w", e.p.Name, err)
		}
	}
	return r, nil
}

// UseHome makes dir, a directory of the caller's that outlives the run
// (where an agent keeps its sessions between the rounds of one
// objective), the run's HOME instead of its private one: created private
// to this user when missing, bound writable in the sandbox and watched
// for progress as the private one is. A configured home (Policy.Home)
// stays the run's: it outlives runs already.
func (r *Run) UseHome(dir string) error {
	if r.e.p.Home != nil {
		return nil
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%s: home %q is not an absolute path", r.e.p.Name, dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s: create home %s: %w", r.e.p.Name, dir, err)
	}
	real, err := realDir(dir)
	if err != nil {
		return fmt.Errorf("%s: home %s: %w", r.e.p.Name, dir, err)
	}
	if real == "/" {
		return fmt.Errorf("%s: the home cannot be /", r.e.p.Name)
	}
	r.home, r.keptHome = real, real
	return nil
}

// Home is the run's HOME.
func (r *Run) Home() string { return r.home }

// startProxy starts the run's egress proxy: on a socket in the run's
// directory, which the sandbox shows the run, or, unconfined, on a port of
// the host's loopback.
func (r *Run) startProxy() error {
	e := r.e
	r.proxy = &egress.Proxy{Allow: e.p.Egress, Credentials: e.credentials}
	name := e.p.Name
	r.proxy.Observe = func(host string, refused bool, bytes int64) {
		if on := e.h.onEgress.Load(); on != nil {
			(*on)(name, host, refused, bytes)
		}
	}
	var l net.Listener
	var err error
	if e.h.mode == ModeBwrap {
		if r.socketDir, err = os.MkdirTemp("", "azolla-egress-"); err != nil {
			return fmt.Errorf("start the egress proxy: %w", err)
		}
		r.socket = filepath.Join(r.socketDir, "egress.sock")
		l, err = egress.Listen(context.Background(), r.socket)
	} else {
		l, err = net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			r.address = l.Addr().String()
		}
	}
	if err != nil {
		if r.socketDir != "" {
			_ = os.RemoveAll(r.socketDir)
		}
		return fmt.Errorf("start the egress proxy: %w", err)
	}
	r.proxy.Start(l)
	return nil
}

// Egress is what an allowlist run was refused ("host:port (n)") and what
// it sent to the hosts allowed; nothing for other runs.
func (r *Run) Egress() (refused []string, traffic []egress.Traffic) {
	if r.proxy == nil {
		return nil, nil
	}
	return r.proxy.Refused(), r.proxy.Traffic()
}

// egressEnv points an allowlist run's tools at its proxy: the proxy
// variables, and each credentialed host's base URL with a placeholder for
// its key.
func (r *Run) egressEnv() []string {
	if r.proxy == nil {
		return nil
	}
	addr := egress.RelayAddress
	if r.address != "" {
		addr = r.address
	}
	proxy := "http://" + addr
	env := []string{"HTTP_PROXY=" + proxy, "HTTPS_PROXY=" + proxy, "http_proxy=" + proxy, "https_proxy=" + proxy,
		"NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1"}
	for _, c := range r.e.p.Credentials {
		env = append(env, c.SecretEnv+"="+credentialPlaceholder)
		if c.BaseURLEnv != "" {
			env = append(env, c.BaseURLEnv+"="+proxy+egress.PathPrefix+c.Host+c.BasePath)
		}
	}
	return env
}

// credentialPlaceholder stands in a run's environment for a key the proxy
// adds on the way out.
const credentialPlaceholder = "azolla-egress-proxy-adds-the-key"

// Path is where a file of the run named name goes (an input the command
// reads, a report it writes): private to the run, outside its working
// directory, visible to its commands.
func (r *Run) Path(name string) string { return filepath.Join(r.dir, "files", filepath.Base(name)) }

// End stops the run's proxy and removes its private directories.
func (r *Run) End() error {
	if r.proxy != nil {
		_ = r.proxy.Close()
	}
	if r.socketDir != "" {
		_ = os.RemoveAll(r.socketDir)
	}
	return os.RemoveAll(r.dir)
}

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
	// StallTimeout, when positive, stops the command once it has written
	// no output and changed no file for that long (see stall.go): Exec's
	// error then wraps a *StallError.
	StallTimeout time.Duration
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
		Env: slices.Concat(baseEnv(e.h.environ, r.home, r.tmp), e.vars, r.egressEnv(), c.Vars), ExtraFiles: h.files}
	spec.Shell = h.shell
	if e.h.mode == ModeBwrap {
		p := e.p
		if r.keptHome != "" {
			p.Home = &Bind{Path: r.keptHome, Writable: true}
		}
		spec.Wrap = e.h.bwrapArgs(p, dir, r.dir, c.ReadOnly, h.bwrapArgs)
		if r.socket != "" {
			// The relay is the sandbox's first process: it listens on the
			// sandbox's loopback before it starts the command.
			if e.h.relay == "" {
				return Outcome{}, fmt.Errorf("%s: network allowlist: no azolla binary to relay the run's egress", e.p.Name)
			}
			spec.Wrap = slices.Concat(spec.Wrap[:len(spec.Wrap)-1],
				[]string{"--ro-bind", e.h.relay, e.h.relay, "--bind", r.socket, r.socket, "--"})
			spec.Shell = []string{e.h.relay, egress.RelayCommand, egress.RelayAddress, r.socket, "--", "/bin/sh", "-c"}
		}
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
		if err := e.h.rlimits().apply(pid); err != nil {
			return err
		}
		if err := cg.add(pid); err != nil {
			return err
		}
		h.release()
		return nil
	}
	var res proc.Result
	if c.StallTimeout > 0 {
		res, err = r.watched(ctx, c, dir, spec)
	} else {
		res, err = proc.Run(ctx, spec)
	}
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
