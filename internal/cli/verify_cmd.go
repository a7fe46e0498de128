package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/dial"
	"github.com/azolla/azolla/workers"
)

func (a *app) verifyCmd() *cobra.Command {
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Audit the store against the lifecycle's guarantees",
		Long: `Read the configured store and check, from the database alone, the guarantees
of the claim protocol and the execution flow: one workorder per event, one
output bundle per executed workorder, one run record per gated workorder,
events processed once with a terminal reason, valid claim records, no live
claim on finished work, objective statuses backed by their verdicts, and a
pause state for every verdict; and, for the control plane's jobs, one open
attempt at most, one success per succeeded job, no live lease on a settled
job, valid job records, and the message of every running job still pending
in the transport (with control_plane.redis_url set, verify reads Redis).
Prints one line per violation, "RULE  RESOURCE  MESSAGE", then a summary;
exits 1 if there is any.

Workers write terminal state first and release their claim just after, so
run verify on a quiet system, or pass --grace to ignore claims whose last
heartbeat is more recent than that.`,
		Args: cobra.NoArgs,
	}
	jsonOut := outputFlag(cmd)
	cmd.Flags().DurationVar(&grace, "grace", 0, "count a live claim only once its last heartbeat is older than this (for a busy system)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) (err error) {
		asJSON, err := jsonOut()
		if err != nil {
			return err
		}
		if grace < 0 {
			return usageError(fmt.Errorf("--grace must not be negative, got %s", grace))
		}
		cfg, err := a.loadConfig(cmd.Flags())
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		if cfg.Store.Driver == dial.SQLite {
			// Opening would create an empty file; there is nothing to verify.
			if _, err := os.Stat(cfg.SQLitePath()); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no sqlite store at %s; run 'azolla migrate' to create it", cfg.SQLitePath())
			}
		}
		st, err := dial.Open(ctx, dial.Config{Driver: cfg.Store.Driver, DSN: cfg.Store.DSN, SQLitePath: cfg.SQLitePath()})
		if err != nil {
			return err // the backends name the store they failed to open
		}
		defer func() {
			if cerr := st.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("close store: %w", cerr)
			}
		}()

		opts := []audit.Option{audit.WithGrace(grace)}
		messages, closeMessages, err := verifyMessages(ctx, cfg, st)
		if err != nil {
			return err
		}
		defer closeMessages()
		opts = append(opts, audit.WithMessages(messages))
		rep, err := audit.Run(ctx, st, time.Time{}, opts...)
		if err != nil {
			return fmt.Errorf("verify %s store: %w", cfg.Store.Driver, err)
		}
		if asJSON {
			err = writeJSON(cmd.OutOrStdout(), rep)
		} else {
			err = writeVerifyText(cmd.OutOrStdout(), rep)
		}
		if err != nil {
			return err
		}
		if n := len(rep.Violations); n > 0 {
			return fmt.Errorf("verify found %s", verifyCount(n, "violation"))
		}
		return nil
	}
	return cmd
}

// verifyMessages is the transport verify asks about messages: Redis when
// control_plane.redis_url is set, else the database transport's messages,
// read straight from the store (nothing a transport's constructor sets up
// is needed to read them).
func verifyMessages(ctx context.Context, cfg config.Config, st store.Store) (audit.MessageStates, func(), error) {
	if cfg.ControlPlane.RedisURL == "" {
		return audit.StoreMessages{Store: st}, func() {}, nil
	}
	t, err := workers.OpenTransport(ctx, cfg.ControlPlane, st)
	if err != nil {
		return nil, nil, unavailableError(fmt.Errorf("verify: open the control plane's Redis transport: %w", err))
	}
	return t, func() { _ = t.Close() }, nil
}

// writeVerifyText prints one line per violation, what was skipped, and a
// summary. Violations quote ids and stored text, which oneLine prints safe.
func writeVerifyText(w io.Writer, rep *audit.Report) error {
	for _, v := range rep.Violations {
		if _, err := fmt.Fprintf(w, "%s  %s  %s\n", v.Rule, oneLine(v.Resource), oneLine(v.Message)); err != nil {
			return err
		}
	}
	for _, s := range rep.Skipped {
		if _, err := fmt.Fprintf(w, "verify: skipped %s\n", oneLine(s)); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "verify: %s, %s checked, %s\n",
		verifyCount(len(rep.Checked), "rule"), verifyCount(rep.Items(), "item"), verifyCount(len(rep.Violations), "violation"))
	return err
}

// verifyCount is "1 rule", "2 rules".
func verifyCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
