package patch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/environment"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// gateTail is how much of a failing gate command's output the gate reason
// quotes.
const gateTail = 2048

// maxDetail bounds the output quoted in a GateResult's Detail.
const maxDetail = 200

// errGateBudget is the cause of the gate commands' context when their budget
// expires.
var errGateBudget = errors.New("gate budget exhausted")

// Check runs the repository's gate commands, in order, in the workorder's
// workspace with the committed patch; the first that fails (or outlives the
// gate budget) fails the gate, and the reason names it and quotes the tail
// of its output. A repository without gate commands passes.
//
// Whatever the verdict, it is Unpushed unless this machine holds the push
// marker of the bundle's commit: no push_remote, a failed push, or a run on
// another machine all warn the human (the last needlessly, which is the
// safe way to be wrong).
func (p *Patch) Check(ctx context.Context, c diazotroph.Check) (diazotroph.Verdict, error) {
	v, err := p.gate(ctx, c)
	if err != nil {
		return v, err
	}
	v.Unpushed = !p.pushed(c)
	return v, nil
}

// pushed reports whether the push marker of c's workorder records the
// bundle's commit on its work branch.
func (p *Patch) pushed(c diazotroph.Check) bool {
	m, ok, err := ReadPushed(p.o.Dir, c.WorkOrder.WorkOrderID)
	return err == nil && ok && m.BranchName == c.WorkOrder.BranchName && c.Bundle.Metadata.CommitSHA != "" &&
		m.CommitSHA == c.Bundle.Metadata.CommitSHA
}

// gate is Check's verdict without the push.
func (p *Patch) gate(ctx context.Context, c diazotroph.Check) (diazotroph.Verdict, error) {
	s := p.o.Settings(c.Objective.Repository)
	if len(s.GateCommands) == 0 {
		return diazotroph.Verdict{Pass: true}, nil
	}
	dir, failed, err := p.gateWorkspace(ctx, c)
	if err != nil || failed != "" {
		return diazotroph.Verdict{Reason: failed}, err
	}
	vars := gateVars(c.Objective.ObjectiveID, c.WorkOrder.WorkOrderID, c.WorkOrder.BranchName, c.Bundle.Metadata.CommitSHA)
	g, err := p.gateCommands(ctx, s, c.Objective.Repository, c.Objective.ObjectiveID, dir, c.Snapshot.Metadata.CommitSHA,
		vars, false)
	if err != nil {
		return diazotroph.Verdict{}, err
	}
	if g.failed != "" {
		return diazotroph.Verdict{Reason: g.failed, Environment: g.fix != "", Fix: g.fix}, nil
	}
	quoted := make([]string, len(s.GateCommands))
	for i, cmd := range s.GateCommands {
		quoted[i] = strconv.Quote(cmd)
	}
	reason := "gate commands passed: " + strings.Join(quoted, ", ")
	if g.env != "" {
		reason += "; " + g.env
	}
	return diazotroph.Verdict{Pass: true, Reason: reason}, nil
}

// GateResult is how one gate command ended on a candidate.
type GateResult struct {
	Command string
	Passed  bool
	// Detail says how it ended, on one line: its status and time, and
	// when it failed, the last line of its output.
	Detail string
}

// gateVars are the AZOLLA_* variables a gate command is told about the
// work it judges.
func gateVars(objectiveID, workOrderID, branch, commitSHA string) []string {
	return []string{"AZOLLA_OBJECTIVE_ID=" + objectiveID, "AZOLLA_WORK_ORDER_ID=" + workOrderID,
		"AZOLLA_BRANCH_NAME=" + branch, "AZOLLA_COMMIT_SHA=" + commitSHA}
}

// gateRun is how a repository's gate commands went.
type gateRun struct {
	results []GateResult
	// failed is the first failure as a gate reason, naming the command and
	// quoting the tail of its output; "" when every command passed.
	failed string
	// fix, when set, says the failure is the environment's, not the
	// patch's (its setup failed, a command could not start, a run hit a
	// sandbox limit), and which setting to change.
	fix string
	// env says which environment the commands ran in.
	env string
}

// gateCommands runs the repository's gate commands in order in dir, all
// within s.GateBudget, with vars, in the repository's environment of base
// (prepared first, on this host). With all it runs every command whatever
// the ones before did (a candidate's figures); without, it stops at the
// first that fails (the gate).
func (p *Patch) gateCommands(ctx context.Context, s Settings, repository, objectiveID, dir, base string, vars []string,
	all bool) (gateRun, error) {
	if s.Gate == nil {
		return gateRun{}, fmt.Errorf("repository %s: no executor for its gate commands", repository)
	}
	env, err := p.prepareEnvironment(ctx, repository, dir, base, dir)
	var se *environment.SetupError
	if errors.As(err, &se) {
		return gateRun{failed: "environment: " + p.o.Secrets.String(se.Report()), fix: se.Fix}, nil
	}
	if err != nil {
		return gateRun{}, fmt.Errorf("prepare the environment of %s: %w", repository, err)
	}
	defer env.close()
	gate, err := s.Gate.With(env.extra())
	if err != nil {
		return gateRun{}, err
	}
	run, err := gate.Begin()
	if err != nil {
		return gateRun{}, err
	}
	defer run.End() // best effort: a leftover run directory harms nothing
	g := gateRun{env: env.note()}
	budget := s.GateBudget
	bctx, cancel := context.WithTimeoutCause(ctx, budget, errGateBudget)
	defer cancel()
	for _, cmd := range s.GateCommands {
		if !all && g.failed != "" {
			break
		}
		if ctx.Err() == nil && errors.Is(context.Cause(bctx), errGateBudget) {
			g.results = append(g.results, GateResult{Command: cmd, Detail: fmt.Sprintf("not run: the gate budget of %s ran out", budget)})
			continue
		}
		out := &proc.TailBuffer{Max: gateTail}
		// The tests may not change the repository's .git (see the command
		// generator): azolla's git runs on this workspace again.
		res, err := run.Exec(bctx, sandbox.Command{Line: cmd, Dir: dir, ReadOnly: []string{filepath.Join(dir, ".git")},
			Vars: vars, Stdout: out, Stderr: out})
		var reason, detail, fix string
		switch {
		case err != nil && ctx.Err() == nil && errors.Is(context.Cause(bctx), errGateBudget):
			reason = fmt.Sprintf("gate command %q did not finish within the gate budget of %s%s\noutput tail:\n%s",
				cmd, budget, limitNote(res), tail(out))
			detail = fmt.Sprintf("did not finish within the gate budget of %s%s", budget, limitNote(res))
		case err != nil:
			return g, fmt.Errorf("gate command %q: %w", cmd, err)
		case res.ExitCode != 0 || res.Signal != 0:
			reason = fmt.Sprintf("gate command %q %s after %s%s\noutput tail:\n%s",
				cmd, res.Status(), res.Duration.Round(time.Millisecond), limitNote(res), tail(out))
			detail = fmt.Sprintf("%s after %s%s", res.Status(), res.Duration.Round(time.Millisecond), limitNote(res))
			fix = environmentFault(res)
			if refused, _ := run.Egress(); fix == "" && len(refused) > 0 {
				fix = "the gate was refused egress to " + strings.Join(refused, ", ") + ": add the host to " +
					"gate_egress (gate_network: allowlist), or let the repository's setup fetch what the tests need"
			}
		default:
			g.results = append(g.results, GateResult{Command: cmd, Passed: true,
				Detail: fmt.Sprintf("passed after %s", res.Duration.Round(time.Millisecond))})
			continue
		}
		g.results = append(g.results, GateResult{Command: cmd, Detail: detail + "; output ends: " + lastLine(tail(out))})
		if g.failed == "" {
			g.failed, g.fix = reason, fix
			switch {
			case fix != "":
				g.failed = "environment: " + reason + "\nfix: " + fix
			case !all:
				// Whether the patch broke it, or it failed before: the
				// base commit, in the same environment, says.
				if b, ok := p.baselineFor(ctx, s, repository, objectiveID, base, env); ok {
					if said := b.says(cmd); said != "" {
						// After the line that names the command, before its
						// output.
						first, rest, _ := strings.Cut(g.failed, "\n")
						g.failed = first + "\n" + said + "\n" + rest
					}
				}
			}
		}
	}
	return g, nil
}

// environmentFault says what to change when a gate command's end is the
// environment's fault rather than the patch's: it could not start (the
// shell's 126 and 127), or it hit a sandbox limit. "" otherwise.
func environmentFault(res sandbox.Outcome) string {
	switch {
	case res.ExitCode == 127:
		return "the gate command was not found: install the tool on the worker, bind it in (gate_binds), or let the " +
			"repository's setup provide it (patch.repositories[].setup)"
	case res.ExitCode == 126:
		return "the gate command could not be executed (not executable, or a file system mounted noexec): check " +
			"gate_commands and the tool's permissions"
	case res.Limit != "":
		return "the run hit its " + res.Limit + ": raise the executor's limits (executor.max_processes, max_memory_mb, " +
			"max_file_size_mb) or make the tests lighter"
	}
	return ""
}

// gateWorkspace is where the gate commands run: the runner's workspace when
// this worker has it at the bundle's commit, else a gate workspace built
// from the bundle's content on the snapshot's commit (the runner may have
// been another machine). failed is a gate FAIL reason.
func (p *Patch) gateWorkspace(ctx context.Context, c diazotroph.Check) (dir, failed string, err error) {
	g := p.o.Git
	ws := p.Workspace(c.WorkOrder.WorkOrderID)
	if head, err := g.HeadOf(ctx, ws); err == nil && head == c.Bundle.Metadata.CommitSHA {
		if changed, err := g.WorktreeDiff(ctx, ws); err == nil && changed == "" {
			return ws, "", nil
		}
	}
	mirror, err := p.mirrors.Sync(ctx, c.Objective.Repository)
	if err != nil {
		return "", "", fmt.Errorf("fetch %s: %w", c.Objective.Repository, err)
	}
	gws := ws + gateSuffix
	if err := g.PrepareWorkspace(ctx, mirror, gws, "azolla-gate/"+c.Objective.ObjectiveID,
		c.Snapshot.Metadata.CommitSHA); err != nil {
		return "", "", fmt.Errorf("prepare gate workspace %s: %w", gws, err)
	}
	if err := g.Apply(ctx, gws, c.Bundle.Content); err != nil {
		var ae *gitops.ApplyError
		if errors.As(err, &ae) {
			return "", fmt.Sprintf("the bundle's diff does not apply to %s: %s", c.Snapshot.Metadata.CommitSHA,
				strings.TrimSpace(ae.Output)), nil
		}
		return "", "", err
	}
	return gws, "", nil
}

// limitNote says what a gate command's limits and sandbox had to do with
// how it ended, or returns "".
func limitNote(o sandbox.Outcome) string {
	if s := o.Explain(); s != "" {
		return " (" + s + ")"
	}
	return ""
}

func tail(b *proc.TailBuffer) string {
	s := strings.TrimSpace(b.Text())
	if s == "" {
		return "(no output)"
	}
	return s
}

// lastLine is the last non-blank line of s, cut to maxDetail.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return proc.CutAtRune(strings.TrimSpace(lines[len(lines)-1]), maxDetail)
}
