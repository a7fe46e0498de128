package diazotroph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/azolla/azolla/internal/store"
)

// CommandType is the diazotroph_type served by Command.
const CommandType = "COMMAND_DIAZOTROPH"

// drainTimeout bounds how long Execute waits for the command's pipes to close
// once its process group is gone. Only a process that left the group (setsid)
// can hold them longer; Execute then closes its own ends and returns without
// whatever that process would still have written. It plays the role of
// exec.Cmd.WaitDelay, which does not apply because Execute owns the pipes.
const drainTimeout = 2 * time.Second

// CommandOptions configures a Command.
type CommandOptions struct {
	// Run is a shell command line, run by /bin/sh -c.
	Run string
	// Dir is the working directory, created (0o755) if missing; "" runs the
	// command in the worker's own working directory.
	Dir string
	// Env holds extra KEY=VALUE entries on top of the worker's environment.
	// The AZOLLA_* variables Execute sets win over them.
	Env []string
}

// Command is COMMAND_DIAZOTROPH: it runs a configured shell command with the
// snapshot's prompt on stdin and the workorder's identity in AZOLLA_*
// variables, and its stdout becomes the bundle's content.
//
// The command runs in its own process group, and Execute kills the whole
// group (SIGKILL) when it returns, however it returns: nothing the command
// started outlives the run unless it left the group itself. Only a run that
// cannot be attributed to the command is an error: a misconfiguration, a
// failure to start, or ctx ending first. A non-zero exit is a RunnerOK result
// whose notes give the status; the gate judges it.
//
// A Command is immutable and safe for concurrent Execute calls.
type Command struct {
	run string
	dir string
	env []string
}

var _ Diazotroph = (*Command)(nil)

// NewCommand returns a Command running o.Run.
func NewCommand(o CommandOptions) *Command {
	return &Command{run: o.Run, dir: o.Dir, env: slices.Clone(o.Env)}
}

// Type returns CommandType.
func (c *Command) Type() string { return CommandType }

// ending says why the wait for the command stopped.
type ending int

const (
	exited ending = iota
	budgetExpired
	stopped
)

// Execute runs the command for req; see Command.
func (c *Command) Execute(ctx context.Context, req Request) (Result, error) {
	wo := req.WorkOrder.WorkOrderID
	if strings.TrimSpace(c.run) == "" {
		return Result{}, fmt.Errorf("%s: workorder %s: no command configured", CommandType, wo)
	}
	if req.Budget <= 0 {
		return Result{}, fmt.Errorf("%s: workorder %s: no budget (%v)", CommandType, wo, req.Budget)
	}
	if err := context.Cause(ctx); err != nil {
		return Result{}, fmt.Errorf("%s: workorder %s: not started: %w", CommandType, wo, err)
	}
	if c.dir != "" {
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return Result{}, fmt.Errorf("%s: workorder %s: create working directory: %w", CommandType, wo, err)
		}
	}

	p, err := c.start(req)
	if err != nil {
		return Result{}, fmt.Errorf("%s: workorder %s: start %q: %w", CommandType, wo, c.run, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- p.cmd.Wait() }()

	budget := time.NewTimer(req.Budget)
	defer budget.Stop()
	var waitErr error
	end := exited
	select {
	case waitErr = <-waited:
	case <-budget.C:
		end = budgetExpired
	case <-ctx.Done():
		end = stopped
	}
	elapsed := time.Since(p.started)
	p.killGroup()
	if end != exited {
		waitErr = <-waited // prompt: the shell itself has just been killed
	}
	p.drain()

	// Once the lease is lost no result may be persisted, even one that raced
	// the cancellation to completion.
	if err := context.Cause(ctx); err != nil {
		return Result{}, fmt.Errorf("%s: workorder %s: stopped after %v, process group killed: %w",
			CommandType, wo, roundMS(elapsed), err)
	}

	res := Result{
		Title:        title(req),
		Metadata:     store.BundleMetadata{BranchName: req.WorkOrder.BranchName},
		RunnerStatus: store.RunnerOK,
	}
	if end == budgetExpired {
		res.RunnerStatus = store.RunnerBudgetExhausted
		res.Notes = fmt.Sprintf("budget %v exhausted after %v: process group killed, partial output discarded (%d bytes)",
			req.Budget, roundMS(elapsed), p.stdout.total) + p.stderr.note()
		return res, nil
	}

	status, err := exitStatus(waitErr)
	if err != nil {
		return Result{}, fmt.Errorf("%s: workorder %s: wait for command: %w", CommandType, wo, err)
	}
	content, contentNote := p.stdout.content()
	res.Content = content
	res.Notes = fmt.Sprintf("command %s after %v", status, roundMS(elapsed)) + contentNote + p.stderr.note()
	return res, nil
}

// process is one started command and the parent's ends of its pipes.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	stdout  *headBuffer
	stderr  *tailBuffer
	// copying counts the goroutines feeding stdin and reading stdout/stderr.
	copying sync.WaitGroup
	ends    []*os.File
}

// start launches the command. Execute creates the pipes itself, so that
// exec.Cmd.Wait returns as soon as the shell exits rather than when the last
// holder of a pipe does, and the group can be killed at that moment.
func (c *Command) start(req Request) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}

	cmd := exec.Command("/bin/sh", "-c", c.run)
	cmd.Dir = c.dir
	cmd.Env = c.environ(req)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &process{cmd: cmd, stdout: &headBuffer{}, stderr: &tailBuffer{}, ends: []*os.File{inW, outR, errR}}
	err = cmd.Start()
	p.started = time.Now()
	closeAll(inR, outW, errW) // the child has its copies
	if err != nil {
		closeAll(p.ends...)
		return nil, err
	}

	p.copying.Add(3)
	go func() {
		defer p.copying.Done()
		// A command need not read its stdin: EPIPE here is no failure.
		_, _ = io.WriteString(inW, req.Snapshot.FullPromptText)
		_ = inW.Close()
	}()
	go p.copy(p.stdout, outR)
	go p.copy(p.stderr, errR)
	return p, nil
}

func (p *process) copy(w io.Writer, r *os.File) {
	defer p.copying.Done()
	_, _ = io.Copy(w, r) // the buffers never fail; a read error is an end
}

// killGroup sends SIGKILL to the command's process group. After the shell
// has been reaped the group id can only have been reused if the group emptied
// and a new process took that number as its own group in between, which pid
// allocation makes a non-issue.
func (p *process) killGroup() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) // ESRCH: nobody left
}

// drain waits for the pipe goroutines, up to drainTimeout, then closes the
// parent's ends, which also ends any goroutine still blocked on one.
func (p *process) drain() {
	done := make(chan struct{})
	go func() { p.copying.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainTimeout):
	}
	closeAll(p.ends...)
	<-done
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close() // already closed, or nothing left to flush on a pipe end
	}
}

// environ is the worker's environment, then Env, then the AZOLLA_* variables;
// exec keeps the last value of a duplicated key.
func (c *Command) environ(req Request) []string {
	wo, meta := req.WorkOrder, req.Snapshot.Metadata
	return slices.Concat(os.Environ(), c.env, []string{
		"AZOLLA_OBJECTIVE_ID=" + wo.ObjectiveID,
		"AZOLLA_WORK_ORDER_ID=" + wo.WorkOrderID,
		"AZOLLA_EVENT_ID=" + wo.EventID,
		"AZOLLA_CONTEXT_SNAPSHOT_ID=" + wo.ContextSnapshotID,
		"AZOLLA_BRANCH_NAME=" + wo.BranchName,
		"AZOLLA_BUDGET_MS=" + strconv.FormatInt(req.Budget.Milliseconds(), 10),
		"AZOLLA_BASE_BRANCH=" + meta.BaseBranch,
		"AZOLLA_COMMIT_SHA=" + meta.CommitSHA,
	})
}

// exitStatus describes how the shell ended; an error means Wait itself failed.
func exitStatus(waitErr error) (string, error) {
	if waitErr == nil {
		return "exited 0", nil
	}
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) {
		return "", waitErr
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal()), nil
	}
	return fmt.Sprintf("exited with status %d", ee.ExitCode()), nil
}

func roundMS(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
