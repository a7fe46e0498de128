package triage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/executor/runreport"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// Files of a command run, in the run's private directory.
const (
	inputFileName        = "triage-input.json"
	instructionsFileName = "triage-instructions.md"
)

// Bounds of what a command run leaves.
const (
	maxAnswerBytes  = 4 << 20
	stderrTailBytes = 2 << 10
)

// Command is the command route: a shell command line run through its
// executor (package sandbox: an environment built from an allowlist, so no
// secret of azolla's, a sandbox where the host has one, resource limits),
// in a directory private to the run. The input document is on its stdin
// and in the file named by $AZOLLA_INPUT_FILE, Instructions in the file
// named by $AZOLLA_INSTRUCTIONS_FILE; it prints its answer on stdout and
// may write a run report to $AZOLLA_REPORT_FILE. A run that exits non-zero
// gave no answer.
//
// A Command is immutable and safe for concurrent use.
type Command struct {
	run  string
	exec *sandbox.Executor
}

var _ Model = (*Command)(nil)

// NewCommand returns the command route running run by exec.
func NewCommand(run string, exec *sandbox.Executor) *Command { return &Command{run: run, exec: exec} }

// Route returns RouteCommand.
func (*Command) Route() string { return RouteCommand }

// Answer runs the command for in.
func (c *Command) Answer(ctx context.Context, in Input, doc string) (Answer, error) {
	switch {
	case strings.TrimSpace(c.run) == "":
		return Answer{}, errors.New("command route: no command configured (tasks.triage.command.run)")
	case c.exec == nil:
		return Answer{}, errors.New("command route: no executor configured")
	}
	run, err := c.exec.Begin()
	if err != nil {
		return Answer{}, fmt.Errorf("command route: %w", err)
	}
	defer run.End() // best effort: a leftover run directory harms nothing
	inputFile, instructionsFile, reportFile := run.Path(inputFileName), run.Path(instructionsFileName), run.Path(runreport.FileName)
	if err := os.WriteFile(inputFile, []byte(doc), 0o600); err != nil {
		return Answer{}, fmt.Errorf("command route: write the input file: %w", err)
	}
	if err := os.WriteFile(instructionsFile, []byte(Instructions+"\n"), 0o600); err != nil {
		return Answer{}, fmt.Errorf("command route: write the instructions file: %w", err)
	}
	stdout := &proc.HeadBuffer{Max: maxAnswerBytes}
	stderr := &proc.TailBuffer{Max: stderrTailBytes}
	ran, err := run.Exec(ctx, sandbox.Command{
		Line: c.run,
		Vars: []string{"AZOLLA_INPUT_FILE=" + inputFile, "AZOLLA_INSTRUCTIONS_FILE=" + instructionsFile,
			"AZOLLA_REPORT_FILE=" + reportFile},
		Stdin:  strings.NewReader(doc),
		Stdout: stdout,
		Stderr: stderr,
	})
	if err != nil {
		return Answer{}, fmt.Errorf("command route: run %q: %w", c.run, err)
	}
	note := fmt.Sprintf("command %s after %v", ran.Status(), ran.Duration.Round(time.Millisecond))
	if s := ran.Explain(); s != "" {
		note += "; " + s
	}
	a := Answer{Notes: []string{note}}
	if stderr.Total() > 0 {
		a.Notes = append(a.Notes, "stderr (its end): "+strings.Join(strings.Fields(stderr.Text()), " "))
	}
	report, problem := runreport.ReadFile(reportFile)
	a.Report = report
	if problem != "" {
		a.Notes = append(a.Notes, problem)
	}
	if ran.ExitCode != 0 {
		return a, fmt.Errorf("command route: %s: its output is not used", note)
	}
	text, truncated, _ := stdout.Text()
	if truncated {
		return a, fmt.Errorf("command route: the answer is longer than %d bytes", maxAnswerBytes)
	}
	a.Text = text
	return a, nil
}
