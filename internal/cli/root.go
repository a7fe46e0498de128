package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/store"
)

// app is one invocation's world: where output goes and how the environment
// is read. Tests inject both, so commands never touch the process's own.
type app struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// started is set once cobra has accepted the command line; errors before
	// that are usage errors.
	started bool
	// startDev runs `azolla dev`'s embedded server; nil in a binary without.
	startDev StartDevServer
	// wrapStore, when set, wraps every store a command opens.
	wrapStore func(store.Store) store.Store
	// name is how the user invoked azolla, for the commands it prints.
	name string
	// configFile is the configuration file loadConfig read, "" for none:
	// executors never see it.
	configFile string
}

// self is the command to print in hints, as the user invoked it.
func (a *app) self() string {
	if a.name == "" {
		return "azolla"
	}
	return a.name
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "azolla",
		Short: "Run autonomous work through a durable lifecycle",
		Long: `azolla runs autonomous work through a durable lifecycle of objectives,
events, workorders and claims.

Configuration comes from, highest precedence first: flags, AZOLLA_*
environment variables (AZOLLA_STORE_DSN for store.dsn), the config file
azolla.yaml (--config, else ./azolla.yaml, else <data_dir>/azolla.yaml)
and built-in defaults. See 'azolla config show'.`,
		SilenceErrors: true, // run prints them, one line
		SilenceUsage:  true, // run adds usage to usage errors only
		PersistentPreRun: func(*cobra.Command, []string) {
			a.started = true
		},
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	addConfigFlags(root.PersistentFlags())

	root.AddCommand(
		a.configCmd(),
		a.schemaCmd(),
		a.migrateCmd(),
		a.objectiveCmd(),
		a.captureCmd(),
		a.manifestCmd(),
		a.trackCmd(),
		a.inboxCmd(),
		a.prCmd(),
		a.schedulesCmd(),
		a.temporalCmd(),
		a.workerCmd(),
		a.workerTokenCmd(),
		a.remoteWorkerCmd(),
		a.controlPlaneCmd(),
		a.devCmd(),
		a.verifyCmd(),
		a.gcCmd(),
		a.versionCmd(),
	)
	return root
}

// groupCmd is a command that only holds subcommands. Unlike cobra's default
// (help and exit 0), an unknown subcommand is a usage error.
func groupCmd(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(subs...)
	return c
}
