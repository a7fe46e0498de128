package patchgen

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/executor/runreport"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// DefaultMaxOutput is how much of a command's stdout is kept when
// CommandOptions.MaxOutput is zero: a patch is looked for in it.
const DefaultMaxOutput = 4 << 20

// stderrTailBytes is how much of the end of stderr the notes quote.
const stderrTailBytes = 2 << 10

// inputFileName is the name of the generation input file, in a temporary
// directory of its own.
const inputFileName = "azolla-input.md"

// CommandOptions configures a Command.
type CommandOptions struct {
	// Run is a shell command line, run by /bin/sh -c in the worktree.
	Run string
	// Executor runs the command: its environment, sandbox and limits
	// (package sandbox). The AZOLLA_* variables Generate sets win over
	// anything it configures.
	Executor *sandbox.Executor
	// WorktreeDiff returns the changes made in the worktree at dir as a
	// unified diff, "" if there are none. It is required: an agent that
	// edits files instead of printing a diff would otherwise lose its work.
	WorktreeDiff func(ctx context.Context, dir string) (string, error)
	// MaxOutput caps the stdout kept to look for a diff in, and the end of
	// it kept for a preset's parser and the transcript; zero means
	// DefaultMaxOutput.
	MaxOutput int
	// Preset, when set, is the headless agent being run: its command line
	// stands in for an empty Run, and when the run writes no valid report
	// its output is read by the preset's parser. nil for none.
	Preset *runreport.Preset
}

// Command runs a shell command, typically a coding agent, in the worktree,
// through its executor (an allowlisted environment, a sandbox in which the
// worktree is the one writable place of the host's, resource limits). The
// generation input (GenerationInput, plus a paragraph allowing the agent
// to edit the worktree) is on its stdin and in the file named by
// $AZOLLA_INPUT_FILE, which lies in the run's private directory outside
// the worktree, so that it never becomes part of the patch, and is removed
// afterwards. The objective's identity is in AZOLLA_* variables.
//
// The candidate patch is what the command changed in the worktree, or if it
// changed nothing, the diff it printed on stdout. Its exit status goes in the
// notes: a failed command that left a patch still proposes it, for the
// diazotroph's validation and the gate to judge.
//
// A Command is immutable and safe for concurrent use on distinct worktrees.
type Command struct {
	run          string
	exec         *sandbox.Executor
	worktreeDiff func(ctx context.Context, dir string) (string, error)
	maxOutput    int
	// preset is kept whole, not only its command line: a run with a
	// remaining budget will want the preset's CommandLine(budget), which
	// sets the agent's own cap (see commandLine).
	preset *runreport.Preset
}

var _ Generator = (*Command)(nil)

// NewCommand returns a Command running o.Run. A missing Run or WorktreeDiff
// is reported by Generate, like every misconfiguration of a run.
func NewCommand(o CommandOptions) *Command {
	maxOutput := o.MaxOutput
	if maxOutput <= 0 {
		maxOutput = DefaultMaxOutput
	}
	var preset *runreport.Preset
	if o.Preset != nil {
		p := *o.Preset
		preset = &p
	}
	return &Command{run: o.Run, exec: o.Executor, worktreeDiff: o.WorktreeDiff, maxOutput: maxOutput, preset: preset}
}

// commandLine is the command line of the run for in: the configured one,
// or else the preset's. It is the seam for the agent's own spending cap: a
// remaining budget known for in goes to the preset's CommandLine, which
// adds the cap where the agent has one; an explicit command line is left
// as configured.
func (c *Command) commandLine(in Input) (string, error) {
	if strings.TrimSpace(c.run) != "" || c.preset == nil {
		return c.run, nil
	}
	budget := in.BudgetUSDRemaining
	if budget != nil && *budget <= 0 {
		// Less than a millionth of a dollar left, rounded to nothing:
		// there is no cap the agent could take, and the next run will
		// not start.
		budget = nil
	}
	return c.preset.CommandLine(budget)
}

// continueSession is line continuing the agent's session in.Session
// when the preset that made line can, and a note saying whether it did;
// an explicit command line is left as configured.
func (c *Command) continueSession(line, home string, in Input) (string, string) {
	if in.Session == "" || strings.TrimSpace(c.run) != "" || c.preset == nil || !c.preset.ContinuesSessions() {
		return line, ""
	}
	extra, err := c.preset.Continue(home, in.Worktree, in.Session)
	if err != nil {
		return line, fmt.Sprintf("The agent's session %q was not continued (%v): this round started a new one.",
			in.Session, err)
	}
	return line + extra, fmt.Sprintf("Continued the agent's session %s.", in.Session)
}

// Name returns CommandName.
func (*Command) Name() string { return CommandName }

// Generate runs the command for in; see Command.
func (c *Command) Generate(ctx context.Context, in Input) (Output, error) {
	fail := func(format string, args ...any) (Output, error) {
		return Output{}, fmt.Errorf("command generator: objective %s: "+format, append([]any{in.ObjectiveID}, args...)...)
	}
	line, err := c.commandLine(in)
	if err != nil {
		return fail("%w", err)
	}
	switch {
	case strings.TrimSpace(line) == "":
		return fail("no command configured")
	case c.worktreeDiff == nil:
		return fail("no WorktreeDiff configured")
	case in.Worktree == "":
		return fail("no worktree")
	case c.exec == nil:
		return fail("no executor configured")
	}
	if err := context.Cause(ctx); err != nil {
		return fail("not started: %w", err)
	}

	input := commandInput(in)
	ex, err := c.exec.With(in.Environment)
	if err != nil {
		return fail("%w", err)
	}
	run, err := ex.Begin()
	if err != nil {
		return fail("%w", err)
	}
	defer run.End() // best effort: a leftover run directory harms nothing
	if in.Home != "" {
		if err := run.UseHome(in.Home); err != nil {
			return fail("%w", err)
		}
	}
	line, sessionNote := c.continueSession(line, run.Home(), in)
	inputFile := run.Path(inputFileName)
	if inside(in.Worktree, inputFile) {
		// The input, or whatever the agent puts beside it, would become
		// part of the patch.
		return fail("the run's directory %s is inside the worktree; set executor.runs_dir elsewhere", filepath.Dir(inputFile))
	}
	if err := os.WriteFile(inputFile, []byte(input), 0o600); err != nil {
		return fail("write input file: %w", err)
	}

	reportFile, artifactDir := run.Path(runreport.FileName), run.Path(artifactDirName)
	questionFile := run.Path(runreport.QuestionFileName)
	if err := os.Mkdir(artifactDir, 0o700); err != nil {
		return fail("create the artifact directory: %w", err)
	}
	// The head is where a printed diff is looked for; the tail is what a
	// preset's parser reads when the head is cut (Codex's last usage event,
	// aider's last cost line) and what the transcript keeps.
	stdout, stdoutTail := &proc.HeadBuffer{Max: c.maxOutput}, &proc.TailBuffer{Max: c.maxOutput}
	stderr := &proc.TailBuffer{Max: max(stderrKeptBytes, stderrTailBytes)}
	ran, err := run.Exec(ctx, sandbox.Command{
		Line: line,
		Dir:  in.Worktree,
		// git's configuration and hooks are read by azolla's own git runs
		// on this worktree, outside the sandbox: a credential helper or a
		// filter written there would run with azolla's privileges.
		ReadOnly: []string{filepath.Join(in.Worktree, ".git")},
		Vars: append(vars(in, inputFile), "AZOLLA_REPORT_FILE="+reportFile,
			"AZOLLA_ARTIFACT_DIR="+artifactDir, "AZOLLA_QUESTION_FILE="+questionFile),
		Stdin:  strings.NewReader(input),
		Stdout: io.MultiWriter(stdout, stdoutTail),
		Stderr: stderr,
		// An agent that stops progressing is stopped before its budget
		// ends; the error is then a *sandbox.StallError.
		StallTimeout: c.exec.StallTimeout(),
	})
	if cause := context.Cause(ctx); cause != nil {
		// Whatever the command left is not to be proposed once the budget
		// is gone, even if it finished in the same instant; what it said
		// is kept for the transcript.
		report, _ := runreport.ReadFile(reportFile)
		out := Output{Transcript: transcript(report, artifactDir, stdoutTail, stderr)}
		return out, fmt.Errorf("command generator: objective %s: stopped after %v, process group killed: %w",
			in.ObjectiveID, roundMS(ran.Duration), cause)
	}
	if err != nil {
		// A stalled run (a *sandbox.StallError) has said what it was
		// waiting for: that is kept for the transcript.
		report, _ := runreport.ReadFile(reportFile)
		return Output{Transcript: transcript(report, artifactDir, stdoutTail, stderr)},
			fmt.Errorf("command generator: objective %s: run %q: %w", in.ObjectiveID, line, err)
	}

	patch, source, err := c.patch(ctx, in.Worktree, stdout)
	if err != nil {
		return fail("%w", err)
	}
	notes := fmt.Sprintf("command %s after %v; %s", ran.Status(), roundMS(ran.Duration), source)
	if sessionNote != "" {
		notes += "\n" + sessionNote
	}
	if s := ran.Explain(); s != "" {
		notes += "; " + s
	}
	if stderr.Total() > 0 {
		notes += "\n" + stderrNote(stderr)
	}
	if n := EgressNote(run); n != "" {
		notes += "\n" + n
	}
	report, problem := runreport.ReadFile(reportFile)
	if problem != "" {
		notes += "\n" + problem
	}
	if report == nil && c.preset != nil {
		report, problem = c.presetReport(stdout, stdoutTail, stderr)
		if problem != "" {
			notes += "\n" + problem
		}
	}
	question, problem := runreport.ReadQuestion(questionFile)
	if problem != "" {
		notes += "\n" + problem
	}
	if question == "" && report != nil {
		question = runreport.Question(report.Question)
	}
	return Output{Patch: patch, Notes: notes, Report: report, Question: question,
		Transcript: transcript(report, artifactDir, stdoutTail, stderr)}, nil
}

// EgressNote says which hosts an allowlist run was refused, and which it
// reached; "" for a run of another network, or that used none.
func EgressNote(run *sandbox.Run) string {
	refused, traffic := run.Egress()
	var parts []string
	for _, t := range traffic {
		parts = append(parts, fmt.Sprintf("%s: %d request(s), %d bytes", t.Host, t.Requests, t.Bytes))
	}
	var s string
	if len(parts) > 0 {
		s = "egress: " + strings.Join(parts, "; ")
	}
	if len(refused) > 0 {
		if s != "" {
			s += "\n"
		}
		s += "egress refused (not in the run's allowlist; add a host the run needs to its egress): " +
			strings.Join(refused, ", ")
	}
	return s
}

// stderrNote quotes the end of stderr, at most stderrTailBytes of it.
func stderrNote(stderr *proc.TailBuffer) string {
	tail := &proc.TailBuffer{Max: stderrTailBytes}
	_, _ = tail.Write(stderr.Bytes())
	header := "stderr:"
	if n := len(tail.Bytes()); int64(n) < stderr.Total() {
		header = fmt.Sprintf("stderr (last %d of %d bytes):", n, stderr.Total())
	}
	return header + "\n" + strings.TrimRight(tail.Text(), "\n")
}

// presetReport reads a report from the agent's own output with its
// preset's parser: all of it when it was kept whole, else its end. A
// parser's failure is a note, never a failed run.
func (c *Command) presetReport(head *proc.HeadBuffer, tail, stderr *proc.TailBuffer) (*domain.RunReport, string) {
	out := head.Bytes()
	switch {
	case c.preset.Output == runreport.Stderr:
		out = stderr.Bytes()
	case head.Truncated():
		out = tail.Bytes()
	}
	r, err := c.preset.Parse(out)
	if err != nil {
		return nil, fmt.Sprintf("no run report: the %s preset could not read one from the agent's %s: %v",
			c.preset.Name, c.preset.Output, err)
	}
	return &r, ""
}

// patch picks the candidate patch and says where it came from.
func (c *Command) patch(ctx context.Context, worktree string, stdout *proc.HeadBuffer) (patch, source string, err error) {
	diff, err := c.worktreeDiff(ctx, worktree)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return "", "", fmt.Errorf("read worktree changes: %w (ctx ended: %w)", err, cause)
		}
		return "", "", fmt.Errorf("read worktree changes: %w", err)
	}
	if strings.TrimSpace(diff) != "" {
		return diff, fmt.Sprintf("patch taken from the worktree changes (%d bytes)", len(diff)), nil
	}
	// The raw bytes, not Text: a diff of a file that is not UTF-8 must
	// keep that file's bytes to apply.
	var cut string
	if stdout.Truncated() {
		cut = fmt.Sprintf(", truncated to %d of %d bytes", len(stdout.Bytes()), stdout.Total())
	}
	if diff := ExtractDiff(string(stdout.Bytes())); diff != "" {
		return diff, fmt.Sprintf("worktree unchanged; patch taken from stdout (%d bytes%s)", len(diff), cut), nil
	}
	return "", fmt.Sprintf("no patch: worktree unchanged and stdout (%d bytes%s) holds no unified diff", stdout.Total(), cut), nil
}

// vars are the AZOLLA_* variables describing the work.
func vars(in Input, inputFile string) []string {
	vs := []string{
		"AZOLLA_INPUT_FILE=" + inputFile,
		"AZOLLA_OBJECTIVE_ID=" + in.ObjectiveID,
		"AZOLLA_WORK_ORDER_ID=" + in.WorkOrderID,
		"AZOLLA_BRANCH_NAME=" + in.BranchName,
		"AZOLLA_BASE_BRANCH=" + in.BaseBranch,
		"AZOLLA_COMMIT_SHA=" + in.CommitSHA,
		"AZOLLA_WORKTREE=" + in.Worktree,
	}
	if b := in.BudgetUSDRemaining; b != nil {
		vs = append(vs, "AZOLLA_BUDGET_USD_REMAINING="+strconv.FormatFloat(*b, 'f', -1, 64))
	}
	if in.Candidate > 0 {
		vs = append(vs, "AZOLLA_CANDIDATE="+strconv.Itoa(in.Candidate))
	}
	return vs
}

// inside reports whether path lies within dir; both are cleaned first.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func roundMS(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
