package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/inbox"
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/workers"
)

func (a *app) inboxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inbox",
		Short: "List everything waiting for you, most urgent first, with the command for each action",
		Long: `List everything that waits for a human: overdue objectives, blocked ones, failed
gates, objectives waiting for approval, triage proposals to review and the
latest manifest; most urgent first (by kind, then urgency, then age), each
with the exact command for its action.`,
		Args: cobra.NoArgs,
	}
	a.withSession(cmd, preamble{output: true}, func(cmd *cobra.Command, _ []string, c *call) error {
		items, err := inbox.Source{Store: c.store, Self: a.self(), SLA: c.cfg.Deadlines.SLA.Map(),
			Now: store.NowOr(time.Time{}), HasForge: func(repo string) bool {
				return c.cfg.Patch.Repository(repo).Forge.Enabled()
			}}.Items(cmd.Context())
		if err != nil {
			return classify(err)
		}
		if c.json {
			if items == nil {
				items = []inbox.Item{}
			}
			return writeJSON(cmd.OutOrStdout(), items)
		}
		if err := printInbox(cmd.OutOrStdout(), items); err != nil {
			return err
		}
		return printQueued(cmd.Context(), cmd.OutOrStdout(), c)
	})
	return cmd
}

// printQueued says which objectives' runs wait for a run slot under a
// limit (max_concurrent_runs): nothing for a human to do, unless it is to
// raise the limit, but why they do not move.
func printQueued(ctx context.Context, out io.Writer, c *call) error {
	queue, err := workers.SlotQueues(c.cfg, c.store).Queue(ctx)
	if err != nil || len(queue) == 0 {
		return err
	}
	fmt.Fprintf(out, "queued for a run slot under max_concurrent_runs: %d run(s)\n", len(queue))
	for _, w := range queue {
		wo := slots.WorkOrderOf(w.Holder)
		objective := wo
		if rec, err := c.store.GetWorkOrder(ctx, wo); err == nil {
			objective = rec.ObjectiveID
		}
		limit := "repository"
		if w.Deployment {
			limit = "deployment"
		}
		fmt.Fprintf(out, "   objective %s: queued for a run slot (%d ahead, the %s's limit)\n", textsafe.Line(objective), w.Ahead, limit)
	}
	return nil
}

// printInbox writes the items, numbered, each with its actions and their
// commands.
func printInbox(out io.Writer, items []inbox.Item) error {
	if len(items) == 0 {
		_, err := fmt.Fprintln(out, "inbox is empty: nothing waits for you")
		return err
	}
	for i, it := range items {
		// Every stored field is rendered safe: rows may have been
		// written straight into the database, past the schema.
		urg := ""
		if it.Urgency != "" {
			urg = " " + textsafe.Line(it.Urgency)
		}
		fmt.Fprintf(out, "%d. [%s%s] %s %s: %s\n", i+1, it.Kind, urg, textsafe.Line(strings.ToLower(it.SubjectType)),
			textsafe.Line(it.SubjectID), textsafe.Line(it.Title))
		if it.From != "" {
			fmt.Fprintf(out, "   from %s\n", textsafe.Line(it.From))
		}
		if it.DeadlineAt != nil {
			fmt.Fprintf(out, "   deadline %s\n", it.DeadlineAt.Format(time.RFC3339))
		}
		if l := spendLine(it.Spend, it.BudgetUSD); l != "" {
			fmt.Fprintf(out, "   spent %s\n", l)
		}
		for _, l := range it.NotTaken {
			fmt.Fprintf(out, "   %s\n", textsafe.Line(l))
		}
		for _, act := range it.Actions {
			fmt.Fprintf(out, "   - %s\n", textsafe.Line(act.Text))
			if act.Command != "" {
				fmt.Fprintf(out, "       %s\n", textsafe.Line(act.Command))
			}
		}
	}
	return nil
}

// spendLine says an item's spend against its budget, "" for none.
func spendLine(sp *domain.Spend, capUSD *float64) string {
	switch {
	case sp == nil && capUSD == nil:
		return ""
	case sp == nil:
		return "nothing yet, budget " + domain.USD(*capUSD)
	case capUSD == nil:
		return sp.String()
	}
	left := budget.Standing{Budget: capUSD, Spend: *sp}.Left()
	return fmt.Sprintf("%s, budget %s, %s left", sp, domain.USD(*capUSD), domain.USD(*left))
}
