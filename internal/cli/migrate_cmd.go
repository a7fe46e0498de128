package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/store/dial"
)

func (a *app) migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending store migrations",
		Long: `Open the configured store and apply its pending migrations, printing each
applied version, or "store is up to date". Running it again applies nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			cfg, err := a.loadConfig(cmd.Flags())
			if err != nil {
				return err
			}
			log := cfg.Logger(a.stderr)
			ctx := cmd.Context()

			m := cfg.Masked()
			log.Debug("opening store", "driver", m.Store.Driver, "dsn", m.Store.DSN, "sqlite_path", m.SQLitePath())
			st, err := dial.Open(ctx, dial.Config{
				Driver:     cfg.Store.Driver,
				DSN:        cfg.Store.DSN,
				SQLitePath: cfg.SQLitePath(),
			})
			if err != nil {
				return err // the backends name the store they failed to open
			}
			defer func() {
				if cerr := st.Close(); cerr != nil && err == nil {
					err = fmt.Errorf("close store: %w", cerr)
				}
			}()

			applied, err := st.Migrate(ctx)
			if err != nil {
				return fmt.Errorf("%s store: %w", cfg.Store.Driver, err)
			}
			out := cmd.OutOrStdout()
			if len(applied) == 0 {
				_, err = fmt.Fprintln(out, "store is up to date")
				return err
			}
			for _, v := range applied {
				if _, err := fmt.Fprintf(out, "applied migration %d\n", v); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
