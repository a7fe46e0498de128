package cli

import (
	"github.com/spf13/cobra"

	"github.com/azolla/azolla/workers"
)

func (a *app) workerCmd() *cobra.Command {
	var noPoller bool
	var identity string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run lifecycle workers (and the poller) against a Temporal cluster",
		Long: `Run the objective lifecycle's workflow and activity workers on the task
queue temporal.task_queue of the cluster at temporal.address, namespace
temporal.namespace, with TLS (temporal.tls.*) and an API key
(temporal.api_key, better AZOLLA_TEMPORAL_API_KEY) when configured. The
poller, which starts lifecycles for work written to the store while
Temporal was unreachable, runs too unless --no-poller: one per store is
active, the others stand by and take over when it stops. Run as many
workers as you like; Ctrl-C stops one cleanly, letting its running
activities finish within claim.lease_ttl.

The worker refuses to start on a namespace that does not exist or lacks
one of azolla's search attributes: 'azolla temporal setup' creates them.`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&noPoller, "no-poller", false, "do not run the poller in this process")
	// The poller's old name, kept for scripts written before the rename.
	cmd.Flags().BoolVar(&noPoller, "no-bridge", false, "do not run the poller in this process")
	_ = cmd.Flags().MarkDeprecated("no-bridge", "use --no-poller")
	cmd.Flags().StringVar(&identity, "identity", "", "worker identity in Temporal and in claims (default pid@host)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		s, identity, err := a.openProcess(cmd, identity)
		if err != nil {
			return err
		}
		defer s.close()
		if err := checkSearchAttributes(cmd.Context(), s.client.OperatorService(), s.cfg.Temporal.Namespace, a.self(), s.log); err != nil {
			return err
		}
		s.log.Info("worker running", "temporal", s.cfg.Temporal.Address, "namespace", s.cfg.Temporal.Namespace,
			"task_queue", s.cfg.Temporal.TaskQueue, "store", s.cfg.Store.Driver, "identity", identity)
		return workers.Run(cmd.Context(), workers.Options{Config: s.cfg, Client: s.client, Store: s.store,
			Log: s.log, Identity: identity, NoPoller: noPoller})
	}
	return cmd
}
