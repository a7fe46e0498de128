package diazotroph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/executor/runreport"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// CommandType is the diazotroph_type served by Command.
const CommandType = "COMMAND_DIAZOTROPH"

// CommandOptions configures a Command.
type CommandOptions struct {
	// Run is a shell command line, run by /bin/sh -c.
	Run string
	// Dir is the working directory, created (0o755) if missing; "" runs the
	// command in a directory private to each run.
	Dir string
	// Executor runs the command: its environment, sandbox and limits
	// (package sandbox). The AZOLLA_* variables Execute sets win over
	// anything it configures.
	Executor *sandbox.Executor
}

// Command is COMMAND_DIAZOTROPH: it runs a configured shell command with the
// snapshot's prompt on stdin and the workorder's identity in AZOLLA_*
// variables, and its stdout becomes the bundle's content.
//
// The command runs through its executor (package sandbox: an allowlisted
// environment, a sandbox where the host has one, resource limits) in its
// own process group, and Execute kills the whole group (SIGKILL) when it
// returns, however it returns: nothing the command started outlives the
// run (see package proc, which does the process handling). Only a run that
// cannot be attributed to the command is an error: a misconfiguration, a
// failure to start, or ctx ending first. A non-zero exit is a RunnerOK result
// whose notes give the status; the gate judges it. A run that wrote no
// output and changed no file for its executor's stall timeout is stopped
// and is a RunnerStalled result.
//
// A Command is immutable and safe for concurrent Execute calls.
type Command struct {
	run  string
	dir  string
	exec *sandbox.Executor
}

var _ Diazotroph = (*Command)(nil)

// NewCommand returns a Command running o.Run.
func NewCommand(o CommandOptions) *Command {
	return &Command{run: o.Run, dir: o.Dir, exec: o.Executor}
}

// Type returns CommandType.
func (c *Command) Type() string { return CommandType }

// errBudgetExhausted is the cause of the budget context's end, which tells
// an expired budget (a result) from the caller's ctx ending (an error).
var errBudgetExhausted = errors.New("budget exhausted")

// Execute runs the command for req; see Command.
func (c *Command) Execute(ctx context.Context, req Request) (Result, error) {
	wo := req.WorkOrder.WorkOrderID
	if strings.TrimSpace(c.run) == "" {
		return Result{}, fmt.Errorf("%s: workorder %s: no command configured", CommandType, wo)
	}
	if req.Budget <= 0 {
		return Result{}, fmt.Errorf("%s: workorder %s: no budget (%v)", CommandType, wo, req.Budget)
	}
	if c.exec == nil {
		return Result{}, fmt.Errorf("%s: workorder %s: no executor configured", CommandType, wo)
	}
	if err := context.Cause(ctx); err != nil {
		return Result{}, fmt.Errorf("%s: workorder %s: not started: %w", CommandType, wo, err)
	}
	if c.dir != "" {
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return Result{}, fmt.Errorf("%s: workorder %s: create working directory: %w", CommandType, wo, err)
		}
	}

	run, err := c.exec.Begin()
	if err != nil {
		return Result{}, fmt.Errorf("%s: workorder %s: %w", CommandType, wo, err)
	}
	defer run.End() // best effort: a leftover run directory harms nothing

	budgetCtx, cancel := context.WithTimeoutCause(ctx, req.Budget, errBudgetExhausted)
	defer cancel()
	stdout := &proc.HeadBuffer{Max: MaxContentBytes}
	stderr := &proc.TailBuffer{Max: stderrTailBytes}
	reportFile := run.Path(runreport.FileName)
	ran, err := run.Exec(budgetCtx, sandbox.Command{
		Line:   c.run,
		Dir:    c.dir,
		Vars:   append(vars(req), "AZOLLA_REPORT_FILE="+reportFile),
		Stdin:  strings.NewReader(req.Snapshot.FullPromptText),
		Stdout: stdout,
		Stderr: stderr,
		// A run that stops progressing is stopped before its budget ends.
		StallTimeout: c.exec.StallTimeout(),
	})
	// Once the lease is lost no result may be persisted, even one that raced
	// the cancellation to completion.
	if cause := context.Cause(ctx); cause != nil {
		return Result{}, fmt.Errorf("%s: workorder %s: stopped after %v, process group killed: %w",
			CommandType, wo, roundMS(ran.Duration), cause)
	}
	// What the run spent counts however it ended.
	report, problem := runreport.ReadFile(reportFile)
	if problem != "" {
		problem = "\n" + problem
	}
	res := Result{
		Title:        title(req),
		Metadata:     domain.BundleMetadata{BranchName: req.WorkOrder.BranchName, RunReport: report},
		RunnerStatus: domain.RunnerOK,
	}
	var stalled *sandbox.StallError
	switch {
	case errors.Is(err, errBudgetExhausted):
		res.RunnerStatus = domain.RunnerBudgetExhausted
		res.Notes = fmt.Sprintf("budget %v exhausted after %v: process group killed, partial output discarded (%d bytes)",
			req.Budget, roundMS(ran.Duration), stdout.Total()) + limitNote(ran) + stderrNote(stderr) + problem
		return res, nil
	case errors.As(err, &stalled):
		res.RunnerStatus = domain.RunnerStalled
		res.Notes = fmt.Sprintf("stalled: no output and no file changed for %v (executor.stall_timeout); stopped after %v: "+
			"process group killed, partial output discarded (%d bytes)", stalled.Timeout, roundMS(ran.Duration),
			stdout.Total()) + limitNote(ran) + stderrNote(stderr) + problem
		return res, nil
	case err != nil:
		return Result{}, fmt.Errorf("%s: workorder %s: run %q: %w", CommandType, wo, c.run, err)
	}
	content, contentNote := stdoutContent(stdout)
	res.Content = content
	res.Notes = fmt.Sprintf("command %s after %v", ran.Status(), roundMS(ran.Duration)) + limitNote(ran) + contentNote +
		stderrNote(stderr) + problem
	return res, nil
}

// vars are the AZOLLA_* variables describing the work.
func vars(req Request) []string {
	wo, meta := req.WorkOrder, req.Snapshot.Metadata
	return []string{
		"AZOLLA_OBJECTIVE_ID=" + wo.ObjectiveID,
		"AZOLLA_WORK_ORDER_ID=" + wo.WorkOrderID,
		"AZOLLA_EVENT_ID=" + wo.EventID,
		"AZOLLA_CONTEXT_SNAPSHOT_ID=" + wo.ContextSnapshotID,
		"AZOLLA_BRANCH_NAME=" + wo.BranchName,
		"AZOLLA_BUDGET_MS=" + strconv.FormatInt(req.Budget.Milliseconds(), 10),
		"AZOLLA_BASE_BRANCH=" + meta.BaseBranch,
		"AZOLLA_COMMIT_SHA=" + meta.CommitSHA,
	}
}

func roundMS(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
