// Package proc runs shell commands so that nothing they start outlives them.
//
// Run gives the command a session and process group of its own (so it has no
// controlling terminal to write into either) and, when it returns however it
// returns, sends SIGKILL to the whole group: to the shell, to whatever it
// left running in the background, and to grandchildren. Only a process that
// left the group on purpose (setsid) escapes the kill; Run then waits at most
// drainTimeout for the pipes such a process still holds, and returns without
// what it would have written. A sandbox (package sandbox) closes that gap:
// its processes die with it.
//
// The command's environment is exactly Spec.Env: nothing of the calling
// process's own environment is inherited.
//
// Run owns the pipes rather than letting exec.Cmd copy them, so that it learns
// the moment the shell exits, not the moment the last holder of a pipe closes
// it, and can kill the group then.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"sync"
	"syscall"
	"time"
)

// drainTimeout bounds how long Run waits for the command's pipes to close
// once its process group is gone. It plays the role of exec.Cmd.WaitDelay,
// which does not apply because Run owns the pipes.
const drainTimeout = 2 * time.Second

// Spec is one shell command to run.
type Spec struct {
	// Command is run by /bin/sh -c.
	Command string
	// Dir is the working directory; "" is the current one. It must exist.
	Dir string
	// Env is the command's whole environment, KEY=VALUE entries of which
	// the later wins. Nothing is inherited: a command run for work gets
	// what its caller chose for it, never the worker's own variables.
	Env []string
	// Wrap, when set, runs the shell: the shell's argv is appended to it,
	// as to a sandbox launcher ending in "--".
	Wrap []string
	// Shell is the argv Command is appended to; nil means /bin/sh -c. A
	// replacement must run its last argument as sh -c would.
	Shell []string
	// ExtraFiles are the process's file descriptors 3, 4, …; Run closes
	// them once the process has its copies.
	ExtraFiles []*os.File
	// Started, when set, is called with the pid of the started process
	// before Run waits for it. A launcher that holds its command until
	// told to go on (package sandbox) is set up and released from here.
	// An error from Started kills the process group, and Run returns it.
	Started func(pid int) error
	// Stdin is fed to the command; nil is empty. A command that exits
	// without reading it all is no failure.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output; nil discards it. When
	// both are the same writer one pipe serves both, so the output keeps the
	// order in which the command wrote it.
	//
	// Run reads Stdin and writes Stdout and Stderr on goroutines it waits
	// for before returning, so none of them may block indefinitely.
	Stdout, Stderr io.Writer
}

// Result says how the command ended.
type Result struct {
	// ExitCode is the shell's exit status, or -1 if a signal killed it.
	ExitCode int
	// Signal is the signal that killed the shell, or 0. It is a
	// syscall.Signal rather than a name so that callers get both the number
	// and the description ("killed by signal 15 (terminated)").
	Signal syscall.Signal
	// Duration runs from just before the start to the moment the shell
	// exited or ctx ended, whichever came first; draining the pipes is not
	// counted.
	Duration time.Duration
}

// Status describes how the shell ended, e.g. "exited 0", "exited with status
// 3" or "killed by signal 9 (killed)".
func (r Result) Status() string {
	switch {
	case r.Signal != 0:
		return fmt.Sprintf("killed by signal %d (%v)", int(r.Signal), r.Signal)
	case r.ExitCode == 0:
		return "exited 0"
	default:
		return fmt.Sprintf("exited with status %d", r.ExitCode)
	}
}

// Run runs s to completion. The command gets its own process group; when Run
// returns, however it returns, the whole group has been sent SIGKILL.
//
// A non-zero exit is not an error: Result says how the command ended. If ctx
// ends first, Run kills the group and returns an error wrapping
// context.Cause(ctx), together with a Result whose Duration says how long the
// command ran. If ctx has already ended, nothing is started. Failure to start
// is an error.
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := context.Cause(ctx); err != nil {
		return Result{}, fmt.Errorf("not started: %w", err)
	}
	p, err := start(s)
	if err != nil {
		return Result{}, fmt.Errorf("start %s: %w", p.cmd.Path, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- p.cmd.Wait() }()
	if s.Started != nil {
		if err := s.Started(p.cmd.Process.Pid); err != nil {
			p.killGroup()
			<-waited
			p.drain()
			return Result{}, fmt.Errorf("%s started: %w", p.cmd.Path, err)
		}
	}

	var waitErr error
	stopped := false
	select {
	case waitErr = <-waited:
	case <-ctx.Done():
		stopped = true
	}
	elapsed := time.Since(p.started)
	p.killGroup()
	if stopped {
		waitErr = <-waited // prompt: the shell itself has just been killed
	}
	p.drain()

	res, err := p.result(waitErr, elapsed)
	if err != nil {
		return res, fmt.Errorf("wait for /bin/sh: %w", err)
	}
	if stopped {
		return res, fmt.Errorf("stopped after %v, process group killed: %w",
			elapsed.Round(time.Millisecond), context.Cause(ctx))
	}
	return res, nil
}

// process is one started command and the parent's ends of its pipes.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	// copying counts the goroutines feeding stdin and reading the output.
	copying sync.WaitGroup
	ends    []*os.File
}

// start launches the command with pipes for the streams s wants; a nil
// stream is left to exec.Cmd, which connects it to the null device without
// a goroutine. The returned process is never nil: its cmd names what was
// started.
func start(s Spec) (_ *process, err error) {
	shell := s.Shell
	if shell == nil {
		shell = []string{"/bin/sh", "-c"}
	}
	args := slices.Concat(s.Wrap, shell, []string{s.Command})
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = s.Dir
	// Never nil, which exec.Cmd reads as "inherit"; exec keeps the last of
	// a duplicated key.
	cmd.Env = append(make([]string, 0, len(s.Env)), s.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	p := &process{cmd: cmd}

	// childEnds are closed once the child has its copies (or failed to start).
	childEnds := slices.Clone(s.ExtraFiles)
	cmd.ExtraFiles = s.ExtraFiles
	defer func() {
		closeAll(childEnds...)
		if err != nil {
			closeAll(p.ends...)
		}
	}()
	pipe := func(name string) (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("%s pipe: %w", name, err)
		}
		return r, w, nil
	}

	var feeds []func()
	if s.Stdin != nil {
		r, w, err := pipe("stdin")
		if err != nil {
			return p, err
		}
		cmd.Stdin = r
		childEnds, p.ends = append(childEnds, r), append(p.ends, w)
		feeds = append(feeds, func() {
			// EPIPE from a command that did not read its stdin is no failure.
			_, _ = io.Copy(w, s.Stdin)
			_ = w.Close()
		})
	}
	output := func(name string, dst io.Writer) (*os.File, error) {
		r, w, err := pipe(name)
		if err != nil {
			return nil, err
		}
		childEnds, p.ends = append(childEnds, w), append(p.ends, r)
		// A read error is an end: the pipe was closed by drain.
		feeds = append(feeds, func() { _, _ = io.Copy(dst, r) })
		return w, nil
	}
	if s.Stdout != nil {
		if cmd.Stdout, err = output("stdout", s.Stdout); err != nil {
			return p, err
		}
	}
	switch {
	case s.Stderr == nil:
	case s.Stdout != nil && sameWriter(s.Stdout, s.Stderr):
		cmd.Stderr = cmd.Stdout
	default:
		if cmd.Stderr, err = output("stderr", s.Stderr); err != nil {
			return p, err
		}
	}

	// The clock starts before the fork, whose cost under load is part of
	// what a caller's budget, set before Run, has to cover.
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return p, err
	}
	p.copying.Add(len(feeds))
	for _, f := range feeds {
		go func() {
			defer p.copying.Done()
			f()
		}()
	}
	return p, nil
}

// sameWriter reports whether a and b are the same writer. Comparing two
// interfaces holding the same uncomparable type panics, hence the check.
func sameWriter(a, b io.Writer) bool {
	return reflect.TypeOf(a).Comparable() && a == b
}

// killGroup sends SIGKILL to the command's process group. After the shell
// has been reaped the group id can only have been reused if the group emptied
// and a new process took that number as its own group in between, which pid
// allocation makes a non-issue.
func (p *process) killGroup() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) // ESRCH: nobody left
}

// drain waits for the copying goroutines, up to drainTimeout, then closes the
// parent's ends, which also ends any goroutine still blocked on one.
func (p *process) drain() {
	done := make(chan struct{})
	go func() { p.copying.Wait(); close(done) }()
	timer := time.NewTimer(drainTimeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	}
	closeAll(p.ends...)
	<-done
}

// result reads how the shell ended; an error means Wait itself failed.
func (p *process) result(waitErr error, elapsed time.Duration) (Result, error) {
	res := Result{Duration: elapsed}
	st := p.cmd.ProcessState
	if st == nil {
		return res, waitErr
	}
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		return res, waitErr
	}
	res.ExitCode = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal()
	}
	return res, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close() // already closed, or nothing left to flush on a pipe end
	}
}
