package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
)

// objectiveLogCmd prints a round's transcript: what the agent of the
// objective's Nth workorder said (docs/patches.md#transcripts).
func (a *app) objectiveLogCmd() *cobra.Command {
	var round int
	cmd := &cobra.Command{
		Use:   "log OBJECTIVE_ID",
		Short: "Print the transcript of an objective's run: its agent's transcript and the end of its stdout and stderr",
		Long: "Print the transcript of one round of an objective: the Nth of its workorders, oldest first " +
			"(--round, default the latest). It is stored redacted and capped to executor.transcript_max, keeping " +
			"its end, and pruned with the workspace retention (patch.retention).",
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().IntVar(&round, "round", 0, "the round to print, 1 for the first (default: the latest)")
	parse := func(cmd *cobra.Command, _ []string) error {
		if cmd.Flags().Changed("round") && round < 1 {
			return usageError(fmt.Errorf("--round must be 1 or more, got %d", round))
		}
		return nil
	}
	a.withSession(cmd, preamble{parse: parse}, func(cmd *cobra.Command, args []string, c *call) error {
		return classify(printLog(cmd.Context(), cmd.OutOrStdout(), c.store, args[0], round))
	})
	return cmd
}

// errNoRound is the cause of a round the objective does not have (yet).
var errNoRound = fmt.Errorf("no such round: %w", domain.ErrNotFound)

// logStore is what objective log reads: the objective, its workorders and
// their transcripts.
type logStore interface {
	store.ObjectiveQuerier
	store.RunQuerier
	store.TranscriptQuerier
}

// printLog writes round's transcript of objective id (0: the latest round).
func printLog(ctx context.Context, out io.Writer, q logStore, id string, round int) error {
	if _, err := q.GetObjective(ctx, id); err != nil {
		return err
	}
	wos, err := q.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	if err != nil {
		return err
	}
	switch {
	case len(wos) == 0:
		return fmt.Errorf("objective %s has no round yet: it has not been scheduled: %w", id, errNoRound)
	case round > len(wos):
		return fmt.Errorf("objective %s has %d round(s); round %d is not one: %w", id, len(wos), round, errNoRound)
	case round == 0:
		round = len(wos)
	}
	w := wos[round-1]
	t, err := q.GetTranscript(ctx, w.WorkOrderID)
	if errors.Is(err, domain.ErrNotFound) {
		return fmt.Errorf("round %d of objective %s (workorder %s) has no transcript: the run has not finished, "+
			"said nothing, kept none (executor.transcript_max is 0), or it was pruned with its workspace: %w",
			round, id, w.WorkOrderID, err)
	}
	if err != nil {
		return err
	}
	text, err := t.Text()
	if err != nil {
		return err
	}
	header := fmt.Sprintf("round %d of %d, workorder %s, %d bytes", round, len(wos), w.WorkOrderID, t.Bytes)
	if t.Truncated {
		header += fmt.Sprintf(" (the last part of %d)", t.OriginalBytes)
	}
	// The transcript is what an untrusted agent printed: escaped, so
	// that it cannot drive the terminal it is printed on.
	_, err = fmt.Fprintf(out, "%s\n%s\n", textsafe.Line(header), strings.TrimRight(textsafe.Block(text), "\n"))
	return err
}
