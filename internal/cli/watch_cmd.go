package cli

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// restingSteps are where a lifecycle waits for a human (or has ended).
var restingSteps = []string{workflows.StepDone, workflows.StepRejected, workflows.StepAwaitingRetry,
	workflows.StepAwaitingAnswer, workflows.StepAwaitingUnblock, workflows.StepMissing}

func (a *app) objectiveWatchCmd() *cobra.Command {
	var interval, timeout time.Duration
	cmd := &cobra.Command{
		Use:   "watch OBJECTIVE_ID",
		Short: "Follow an objective through its stages until it pauses, then print the pause state",
		Long: `Print each stage of the objective's lifecycle as it reaches it (awaiting
approval, scheduling, running, gating, ...) until the lifecycle pauses for a
human or ends, then print the pause state and its prioritized actions.
Exits 0 when the objective is DONE, 6 when it paused otherwise (gate failed,
blocked, rejected), 1 on --timeout.`,
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().DurationVar(&interval, "interval", 500*time.Millisecond, "how often to poll the lifecycle")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: never)")
	parse := func(*cobra.Command, []string) error {
		if interval <= 0 {
			return usageError(fmt.Errorf("--interval must be positive, got %s", interval))
		}
		return nil
	}
	a.withSession(cmd, preamble{output: true, parse: parse, objective: true}, func(cmd *cobra.Command, args []string, c *call) error {
		id := args[0]
		ctx := cmd.Context()
		var deadline <-chan time.Time
		if timeout > 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		}
		out := cmd.OutOrStdout()
		last := ""
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			st, err := c.starter.State(ctx, id)
			if err != nil && !errors.Is(err, starter.ErrNoLifecycle) {
				return classify(err)
			}
			if err == nil {
				if step := st.Step + "/" + string(st.Status); step != last {
					last = step
					if !c.json {
						// The state comes from whatever answers the query on that
						// workflow id: printed safe like any stored text.
						fmt.Fprintf(out, "%s  %-17s %s\n", time.Now().Format("15:04:05"), textsafe.Line(st.Step), textsafe.Line(string(st.Status)))
					}
				}
				if slices.Contains(restingSteps, st.Step) {
					return a.finishWatch(cmd, st, c.json)
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-deadline:
				return fmt.Errorf("watch %s: still %s after %s", id, last, timeout)
			case <-tick.C:
			}
		}
	})
	return cmd
}

// finishWatch prints the pause state the lifecycle came to rest on.
func (a *app) finishWatch(cmd *cobra.Command, st workflows.State, asJSON bool) error {
	out := cmd.OutOrStdout()
	if asJSON {
		if err := writeJSON(out, st); err != nil {
			return err
		}
	} else if st.LastPause != nil {
		printPause(out, st.LastPause, a.self())
	}
	if st.Step == workflows.StepDone {
		return nil
	}
	return &exitError{code: exitPaused, err: fmt.Errorf("objective %s paused: %s (%s)", st.ObjectiveID, st.Step, st.Status)}
}
