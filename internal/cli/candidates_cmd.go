package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
)

// checkAttempts refuses an --attempts outside 1..MaxAttempts, before
// anything is stored.
func checkAttempts(n int) error {
	if n < 1 || n > domain.MaxAttempts {
		return usageError(fmt.Errorf("--attempts %d: give a number of candidates from 1 to %d", n, domain.MaxAttempts))
	}
	return nil
}

// defaultAttempts gives an objective created on a repository that
// repository's attempts when neither the flags nor the file said how many:
// as budget_usd, the repository's default applies only to what is unsaid.
// One attempt is stored as none (the schema's absent means 1).
func defaultAttempts(o *domain.Objective, r config.RepositoryConfig, flagGiven bool) {
	if o.Attempts == nil && !flagGiven && o.Repository != "" && r.Attempts > 1 {
		n := r.Attempts
		o.Attempts = &n
	}
}

func (a *app) objectiveCandidatesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "candidates OBJECTIVE_ID",
		Short: "List the candidate patches of an objective's workorders, their gate results and which one was chosen",
		Long: `List the candidates an objective's workorders ran when it asked for several
attempts (objective create --attempts N): for each, by workorder then attempt,
its status, how its generator run ended, the gate commands it passed and the
ones it failed, its diff size, its cost, and whether it was chosen and why.
--output json prints the candidate records.`,
		Args: cobra.ExactArgs(1),
	}
	a.withSession(cmd, preamble{output: true}, func(cmd *cobra.Command, args []string, c *call) error {
		ctx := cmd.Context()
		if _, err := c.store.GetObjective(ctx, args[0]); err != nil {
			return classify(err)
		}
		wos, err := c.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: args[0]})
		if err != nil {
			return err
		}
		all := []*domain.Candidate{}
		for _, w := range wos {
			cs, err := c.store.ListCandidates(ctx, w.WorkOrderID)
			if err != nil {
				return err
			}
			all = append(all, cs...)
		}
		if c.json {
			return writeJSON(cmd.OutOrStdout(), all)
		}
		return printCandidates(cmd.OutOrStdout(), args[0], all)
	})
	return cmd
}

// loadCandidates reads the candidates of a workorder; none is an empty,
// non-nil list, so that the JSON detail says so.
func loadCandidates(ctx context.Context, q store.CandidateQuerier, workOrderID string) ([]*domain.Candidate, error) {
	cs, err := q.ListCandidates(ctx, workOrderID)
	if cs == nil {
		cs = []*domain.Candidate{}
	}
	return cs, err
}

// printCandidates writes `objective candidates`: a heading per workorder,
// a line per candidate, its failing gate commands under it.
func printCandidates(out io.Writer, objectiveID string, cs []*domain.Candidate) error {
	line := textsafe.Line
	if len(cs) == 0 {
		_, err := fmt.Fprintf(out, "objective %s has no candidates: its runs made one patch each (attempts 1)\n", line(objectiveID))
		return err
	}
	wo := ""
	for _, c := range cs {
		if c.WorkOrderID != wo {
			wo = c.WorkOrderID
			fmt.Fprintf(out, "workorder %s\n", line(wo))
		}
		fmt.Fprintf(out, "  %s\n", candidateLine(c, false))
		for _, g := range c.GateResults {
			if !g.Passed {
				fmt.Fprintf(out, "      failed  %s\n", line(strings.TrimSuffix(g.Command+": "+firstLine(g.Detail), ": ")))
			}
		}
		if c.Chosen {
			fmt.Fprintf(out, "      chosen  %s\n", line(chosenWhy(c)))
		}
	}
	return nil
}

// printCandidatesShort writes a workorder's candidates under it in `objective
// show`: one line each, then which was chosen and why.
func printCandidatesShort(out io.Writer, cs []*domain.Candidate) {
	var chosen *domain.Candidate
	for _, c := range cs {
		fmt.Fprintf(out, "  candidate %s\n", candidateLine(c, true))
		if c.Chosen {
			chosen = c
		}
	}
	if chosen != nil {
		fmt.Fprintf(out, "  chosen    #%d: %s\n", chosen.Attempt, textsafe.Line(chosenWhy(chosen)))
	} else if len(cs) > 0 {
		fmt.Fprintf(out, "  chosen    none yet\n")
	}
}

// candidateLine is one candidate's facts on one safe line: "#2  DONE
// runner OK  gates 1/2 passed (failed: go test ./...)  4 diff lines  $0.25
// CHOSEN"; the failing commands only when withFailed.
func candidateLine(c *domain.Candidate, withFailed bool) string {
	line := textsafe.Line
	parts := []string{fmt.Sprintf("#%d", c.Attempt), line(c.Status)}
	if c.RunnerStatus != "" {
		parts = append(parts, "runner "+line(c.RunnerStatus))
	}
	if n := len(c.GateResults); n > 0 {
		g := fmt.Sprintf("gates %d/%d passed", passedCommands(c), n)
		if failed := failedCommands(c); withFailed && len(failed) > 0 {
			g += " (failed: " + line(strings.Join(failed, ", ")) + ")"
		}
		parts = append(parts, g)
	} else {
		parts = append(parts, "no gate results")
	}
	if c.DiffLines != nil {
		parts = append(parts, fmt.Sprintf("%d diff lines", *c.DiffLines))
	}
	parts = append(parts, candidateCost(c))
	if c.Chosen {
		parts = append(parts, "CHOSEN")
	}
	return strings.Join(parts, "  ")
}

// passedCommands counts the gate commands a candidate passed from its
// results, which are what is shown beside it.
func passedCommands(c *domain.Candidate) int {
	n := 0
	for _, g := range c.GateResults {
		if g.Passed {
			n++
		}
	}
	return n
}

func failedCommands(c *domain.Candidate) []string {
	var out []string
	for _, g := range c.GateResults {
		if !g.Passed {
			out = append(out, g.Command)
		}
	}
	return out
}

// candidateCost is what a candidate's report says it cost, "cost unknown"
// without one. It counts the candidate as the objective's spend does
// (Spend.AddCandidate): a skipped candidate never ran, and a run of a free
// generator costs nothing.
func candidateCost(c *domain.Candidate) string {
	var sp domain.Spend
	sp.AddCandidate(c)
	switch {
	case c.Status == domain.CandidateSkipped:
		return "not run"
	case sp.Runs == 0:
		return "no cost"
	case sp.Unknown > 0:
		return "cost unknown"
	}
	return domain.USD(sp.USD)
}

func chosenWhy(c *domain.Candidate) string {
	if c.Why == "" {
		return "no reason recorded"
	}
	return c.Why
}
