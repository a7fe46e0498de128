package patch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// ErrNoSelectCommand is SelectCommand's answer for a repository without a
// select_command: Choose's winner stands.
var ErrNoSelectCommand = errors.New("the repository has no select_command")

// selectOutput bounds what is kept of a select_command's output.
const selectOutput = 4 << 10

// SelectCommand asks the repository's select_command to break an exact tie
// (Choose's tie, at least two indexes into cands) and returns the index
// into cands of the candidate it chose.
//
// The command runs on the gate's executor, sandboxed like the gate
// commands and within the gate budget, in a directory private to its run,
// where each tied candidate's patch is the file candidate-<attempt>.patch
// ($AZOLLA_CANDIDATES_DIR). $AZOLLA_CANDIDATES holds the tied attempt
// numbers, space-separated, and its stdin one line per tied candidate:
// attempt, gate commands passed, changed lines and patch file, separated
// by tabs. It answers with an attempt number on the last line of its
// stdout; a failed run or any other answer is an error naming it.
func (p *Patch) SelectCommand(ctx context.Context, req diazotroph.Request, cands []Candidate, tie []int) (int, error) {
	o, w := req.Objective, req.WorkOrder
	s := p.o.Settings(o.Repository)
	line := strings.TrimSpace(s.SelectCommand)
	if line == "" {
		return -1, ErrNoSelectCommand
	}
	fail := func(format string, args ...any) (int, error) {
		return -1, fmt.Errorf("workorder %s: select_command %q: %s", w.WorkOrderID, line, fmt.Sprintf(format, args...))
	}
	if len(tie) < 2 {
		return fail("asked to break a tie of %d candidates", len(tie))
	}
	for _, i := range tie {
		if i < 0 || i >= len(cands) || !cands[i].HasPatch() {
			return fail("asked to choose candidate index %d, which has no patch to choose", i)
		}
	}
	if s.Gate == nil {
		return fail("no executor for it (it runs on the gate's)")
	}
	run, err := s.Gate.Begin()
	if err != nil {
		return -1, fmt.Errorf("workorder %s: select_command: %w", w.WorkOrderID, err)
	}
	defer run.End() // best effort: a leftover run directory harms nothing
	var attempts []string
	var stdin strings.Builder
	for _, i := range tie {
		c := cands[i]
		file := run.Path(fmt.Sprintf("candidate-%d.patch", c.Attempt))
		if err := os.WriteFile(file, []byte(c.Patch), 0o600); err != nil {
			return -1, fmt.Errorf("workorder %s: select_command: write %s: %w", w.WorkOrderID, file, err)
		}
		attempts = append(attempts, strconv.Itoa(c.Attempt))
		fmt.Fprintf(&stdin, "%d\t%d\t%d\t%s\n", c.Attempt, c.CommandsPassed, c.DiffLines, file)
	}
	bctx, cancel := context.WithTimeoutCause(ctx, s.GateBudget, errGateBudget)
	defer cancel()
	stdout, stderr := &proc.HeadBuffer{Max: selectOutput}, &proc.TailBuffer{Max: selectOutput}
	res, err := run.Exec(bctx, sandbox.Command{Line: line, Stdin: strings.NewReader(stdin.String()),
		Stdout: stdout, Stderr: stderr,
		Vars: []string{"AZOLLA_OBJECTIVE_ID=" + o.ObjectiveID, "AZOLLA_WORK_ORDER_ID=" + w.WorkOrderID,
			"AZOLLA_COMMIT_SHA=" + req.Snapshot.Metadata.CommitSHA, "AZOLLA_CANDIDATES=" + strings.Join(attempts, " "),
			"AZOLLA_CANDIDATES_DIR=" + filepath.Dir(run.Path("x"))}})
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(context.Cause(bctx), errGateBudget):
		return fail("did not finish within the gate budget of %s%s; stderr ends: %s", s.GateBudget, limitNote(res),
			lastLine(tail(stderr)))
	case err != nil:
		return -1, fmt.Errorf("workorder %s: select_command %q: %w", w.WorkOrderID, line, err)
	case res.ExitCode != 0 || res.Signal != 0:
		return fail("%s%s; stderr ends: %s", res.Status(), limitNote(res), lastLine(tail(stderr)))
	}
	text, _, _ := stdout.Text()
	answer := lastLine(text)
	if n, err := strconv.Atoi(answer); err == nil {
		for _, i := range tie {
			if cands[i].Attempt == n {
				return i, nil
			}
		}
	}
	return fail("answered %q, which is not one of the tied attempts %s", answer, strings.Join(attempts, ", "))
}
