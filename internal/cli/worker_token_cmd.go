package cli

import (
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/textsafe"
)

// workerNameShape is what a worker token's NAME may be: it becomes the
// worker_id every request of that worker must carry, so it stays short and
// plain. Compiled on first use: its counted repetition is a program of about
// 60 KB that every other command would build at start.
var workerNameShape = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
})

func (a *app) workerTokenCmd() *cobra.Command {
	return groupCmd("worker-token", "Create, revoke and list remote workers' bearer tokens",
		a.workerTokenCreateCmd(), a.workerTokenRevokeCmd(), a.workerTokenListCmd())
}

// workerNameArg checks the NAME argument, args[0].
func workerNameArg(_ *cobra.Command, args []string) error {
	if name := args[0]; !workerNameShape().MatchString(name) {
		return usageError(fmt.Errorf("NAME must be 1 to 64 of A-Z a-z 0-9 . _ -, got %q", textsafe.Line(name)))
	}
	return nil
}

func (a *app) workerTokenCreateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create the token of remote worker NAME; it is printed once",
		Long: `Create a bearer token for the remote worker NAME and print it, alone, on
stdout: it is shown this once, and only its hash is stored. NAME is the
worker_id the worker's requests must carry (1 to 64 of A-Z a-z 0-9 . _ -).
A worker has one live token at a time: revoke the old one first.

Keep the token in a file only its worker can read and start the worker with
'azolla remote-worker --token-file FILE', e.g.

  (umask 077; azolla worker-token create builder-1 > builder-1.token)`,
		Args: cobra.ExactArgs(1),
	}
	a.withSession(cmd, preamble{parse: workerNameArg}, func(cmd *cobra.Command, args []string, c *call) error {
		name := args[0]
		token, hash, err := controlplane.GenerateWorkerToken()
		if err != nil {
			return err
		}
		err = c.store.CreateWorkerToken(cmd.Context(), &domain.WorkerToken{WorkerID: name, TokenHash: hash,
			CreatedAt: time.Now().UTC()})
		if errors.Is(err, domain.ErrAlreadyExists) {
			return classify(fmt.Errorf("worker %s already has a live token; revoke it first: %s worker-token revoke %s: %w",
				name, a.self(), name, domain.ErrAlreadyExists))
		}
		if err != nil {
			return fmt.Errorf("create the token of worker %s: %w", name, err)
		}
		if _, err := fmt.Fprintln(cmd.OutOrStdout(), token); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "Store this token in a file with mode 0600 and pass it with %s remote-worker --token-file FILE; it is not shown again.\n", a.self())
		return nil
	})
	return cmd
}

func (a *app) workerTokenRevokeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke the live token of remote worker NAME",
		Long: `Revoke the live token of the remote worker NAME: its next request is
refused (401). A job it holds is requeued by the reaper once its lease
lapses.`,
		Args: cobra.ExactArgs(1),
	}
	a.withSession(cmd, preamble{parse: workerNameArg}, func(cmd *cobra.Command, args []string, c *call) error {
		name := args[0]
		err := c.store.RevokeWorkerToken(cmd.Context(), name, time.Now().UTC())
		if errors.Is(err, domain.ErrNotFound) {
			return classify(fmt.Errorf("worker %s has no live token: %w", name, domain.ErrNotFound))
		}
		if err != nil {
			return fmt.Errorf("revoke the token of worker %s: %w", name, err)
		}
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "revoked the token of worker %s\n", name)
		return err
	})
	return cmd
}

// workerTokenView is what list shows of a token: never its hash.
type workerTokenView struct {
	WorkerID  string     `json:"worker_id"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

func (a *app) workerTokenListCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List remote workers' tokens, live and revoked (never their hashes)",
		Args:  cobra.NoArgs,
	}
	a.withSession(cmd, preamble{output: true}, func(cmd *cobra.Command, _ []string, c *call) error {
		tokens, err := c.store.ListWorkerTokens(cmd.Context())
		if err != nil {
			return fmt.Errorf("list worker tokens: %w", err)
		}
		views := make([]workerTokenView, 0, len(tokens))
		for _, t := range tokens {
			views = append(views, workerTokenView{WorkerID: t.WorkerID, CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt})
		}
		if c.json {
			return writeJSON(cmd.OutOrStdout(), views)
		}
		out := cmd.OutOrStdout()
		fmt.Fprintf(out, "%-24s  %-20s  %s\n", "NAME", "CREATED", "REVOKED")
		for _, v := range views {
			revoked := "-"
			if v.RevokedAt != nil {
				revoked = v.RevokedAt.Format(time.RFC3339)
			}
			// Rows may have been written straight into the database.
			fmt.Fprintf(out, "%-24s  %-20s  %s\n", textsafe.Line(v.WorkerID), v.CreatedAt.Format(time.RFC3339), revoked)
		}
		return nil
	})
	return cmd
}
