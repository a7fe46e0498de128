package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/textsafe"
)

func (a *app) prCmd() *cobra.Command {
	return groupCmd("pr", "Follow objectives' pull requests (docs/pull-requests.md)", a.prSyncCmd())
}

func (a *app) prSyncCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sync OBJECTIVE_ID",
		Short: "Read an objective's pull request now rather than at the next poll",
		Long: `Wake the objective's lifecycle so that it reads its pull request at once:
merged, the objective is confirmed; closed, it pauses; a review asking for
changes or a failed check is taken into the next round (with
forge.auto_revise) or reported as waiting for 'objective retry'. A
lifecycle that is not running is started again and follows the pull
request from where the store says it is.`,
		Args: cobra.ExactArgs(1),
	}
	a.withSession(cmd, preamble{objective: true}, func(cmd *cobra.Command, _ []string, c *call) error {
		o := c.objective
		out, id := cmd.OutOrStdout(), textsafe.Line(o.ObjectiveID)
		pr, err := c.store.GetPullRequest(cmd.Context(), o.ObjectiveID)
		if errors.Is(err, domain.ErrNotFound) {
			return usageError(fmt.Errorf("objective %s has no pull request (one is opened after a gate PASS on a repository with a forge)", id))
		}
		if err != nil {
			return err
		}
		if pr.State != domain.PullRequestOpen {
			_, err = fmt.Fprintf(out, "pull request %s of %s is %s: nothing to follow\n", textsafe.Line(pr.URL), id, pr.State)
			return err
		}
		if err := c.starter.Start(cmd.Context(), o); err != nil {
			return unavailableError(err)
		}
		_, err = fmt.Fprintf(out, "lifecycle of %s reads %s now (round %d; 'azolla objective show %s' says what it found)\n",
			id, textsafe.Line(pr.URL), pr.Rounds, id)
		return err
	})
	return cmd
}
