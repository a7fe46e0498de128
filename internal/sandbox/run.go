package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/proc"
)

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
