package cli

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/workflows"
)

// answerName is the command that answers an agent's question: a retry
// whose comment is the answer (docs/patches.md#questions).
const answerName = "answer"

// decisionCmd sends one human decision to an objective's lifecycle as an
// update, so a decision the lifecycle cannot take is refused with its
// reason (exit 4) instead of being dropped. name is the decision's kind,
// or answerName.
func (a *app) decisionCmd(name, short string) *cobra.Command {
	var d workflows.Decision
	kind := name
	cmd := &cobra.Command{
		Use:   name + " OBJECTIVE_ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&d.By, "by", "", "who decides (default $USER)")
	if name == answerName {
		kind, d.Answer = workflows.Retry, true
		cmd.Use, cmd.Args = name+" OBJECTIVE_ID ANSWER...", cobra.MinimumNArgs(2)
		cmd.Long = `Answer the question the objective's agent asked (its QUESTION pause, first in
the inbox). The answer starts the next round, which resumes the partial work
the asking round left and is told its question and your answer. An objective
with no question waiting refuses it: objective retry --comment gives a round
words of yours.`
	} else {
		cmd.Flags().StringVar(&d.Comment, "comment", "", "why")
	}
	if kind == workflows.Retry {
		cmd.Flags().BoolVar(&d.Fresh, "fresh", false,
			"start the round from the snapshot's commit, not from the partial work the round before left")
	}
	parse := func(_ *cobra.Command, args []string) error {
		if d.By == "" {
			d.By = a.getenv("USER")
		}
		if d.Answer {
			d.Comment = strings.TrimSpace(strings.Join(args[1:], " "))
			if d.Comment == "" {
				return usageError(fmt.Errorf("the answer is empty"))
			}
		}
		return nil
	}
	a.withSession(cmd, preamble{output: true, parse: parse, objective: true}, func(cmd *cobra.Command, args []string, c *call) error {
		if kind == workflows.Retry || kind == workflows.Unblock {
			// The lifecycle refuses it too; said here without the
			// round trip, and in words that say what to do.
			if _, err := budget.Left(cmd.Context(), c.store, c.objective); err != nil {
				return classify(err)
			}
		}
		// A retry on a pull request's review takes its waiting feedback:
		// say which, before it is taken.
		var feedback string
		if kind == workflows.Retry && !d.Answer {
			if st, err := c.starter.State(cmd.Context(), args[0]); err == nil && st.Step == workflows.StepAwaitingReview {
				feedback = "the review and checks of " + st.PullRequest + ": " +
					cmp.Or(st.PullRequestWaiting, "nothing new beyond --comment")
			}
		}
		res, err := c.starter.Decide(cmd.Context(), args[0], kind, d)
		if err != nil {
			return classify(err)
		}
		if feedback != "" && !c.json {
			fmt.Fprintf(cmd.OutOrStdout(), "next round on %s\n", textsafe.Line(feedback))
		}
		if c.json {
			return writeJSON(cmd.OutOrStdout(), res)
		}
		out := cmd.OutOrStdout()
		// The id was found in the store and the answer comes from the
		// lifecycle; both are printed safe like any stored text.
		id := textsafe.Line(args[0])
		switch {
		case res.EventID != "":
			_, err = fmt.Fprintf(out, "%s %s: emitted %s\nfollow it with: %s objective watch %s\n", name, id, textsafe.Line(res.EventID), a.self(), id)
		case res.Pause != nil:
			_, err = fmt.Fprintf(out, "%s %s: %s\n", name, id, textsafe.Line(res.Pause.Reason))
		default:
			_, err = fmt.Fprintf(out, "%s %s: done\n", name, id)
		}
		return err
	})
	return cmd
}

func (a *app) objectiveResumeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resume OBJECTIVE_ID",
		Short: "Start an objective's lifecycle again (after it failed or was terminated)",
		Long: `Start the objective's lifecycle, or wake it if it runs. The lifecycle reads
the objective's state from the store and carries on from there. The poller
does this on its own for lifecycles that never started; a failed or
terminated one waits for this command.`,
		Args: cobra.ExactArgs(1),
	}
	a.withSession(cmd, preamble{output: true, objective: true}, func(cmd *cobra.Command, _ []string, c *call) error {
		o := c.objective
		if err := c.starter.Start(cmd.Context(), o); err != nil {
			return unavailableError(err)
		}
		if c.json {
			return writeJSON(cmd.OutOrStdout(), o)
		}
		_, err := fmt.Fprintf(cmd.OutOrStdout(), "lifecycle of %s running (status %s)\n", textsafe.Line(o.ObjectiveID), textsafe.Line(string(o.Status)))
		return err
	})
	return cmd
}
