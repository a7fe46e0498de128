package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/ops"
	"github.com/azolla/azolla/internal/ops/metrics"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workers"
	"github.com/azolla/azolla/workers/intake"
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
workers as you like; Ctrl-C or SIGTERM stops one cleanly: it stops
polling and lets its running activities finish within claim.lease_ttl,
then exits 0 (a second signal exits at once).

On ops.address (default 127.0.0.1:7360; "" for none) it serves GET
/healthz, /readyz (store, Temporal and workers; 503 with a JSON body
naming what is not ready) and /metrics (Prometheus: azolla_* and the
Temporal SDK's temporal_*).

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
		box, err := workers.NewSandbox(s.cfg, s.log, a.configFile)
		if err != nil {
			return configError(err)
		}
		defer box.Close()
		if err := checkSearchAttributes(cmd.Context(), s.client.OperatorService(), s.cfg.Temporal.Namespace, a.self(), s.log); err != nil {
			return err
		}
		ctx := cmd.Context()
		defer exitOnSecondSignal(s.log)()
		p, err := newProcessOps(s)
		if err != nil {
			return err
		}
		defer p.close()
		started := ops.NewFlag("workers", "workers not started")
		_, stopOps, err := serveOps(ctx, s.cfg.Ops, withForgeEndpoints(ops.Handler(p.reg, []ops.Check{
			ops.StoreCheck(s.store), ops.TemporalCheck(p.client), started.Check()}), s, p), s.log)
		if err != nil {
			return err
		}
		defer stopOps()
		s.log.Info("worker running", "temporal", s.cfg.Temporal.Address, "namespace", s.cfg.Temporal.Namespace,
			"task_queue", s.cfg.Temporal.TaskQueue, "store", s.cfg.Store.Driver, "identity", identity)
		return workers.Run(ctx, workers.Options{Config: s.cfg, Client: p.client, Store: s.store,
			Log: s.log, Identity: identity, NoPoller: noPoller, Metrics: p.metrics,
			OnStarted: started.Set, OnStopping: started.Stop, Sandbox: box, IntakeWakeup: p.intake})
	}
	return cmd
}

// processOps is what a long-running process exposes to operators: its
// registry, azolla's counters, and a client whose workers report the SDK's
// metrics there.
type processOps struct {
	reg     *prometheus.Registry
	metrics *metrics.Metrics
	client  client.Client
	closers []io.Closer
	// intake is woken by the forge webhook once the workers run it.
	intake *workers.IntakeWakeup
}

// newProcessOps builds the registry of s's process and a client sharing
// s.client's connection that reports the Temporal SDK's metrics on it.
func newProcessOps(s *session) (*processOps, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	p := &processOps{reg: reg, metrics: metrics.New(reg), intake: &workers.IntakeWakeup{}}
	if d, ok := s.store.(metrics.DBer); ok {
		reg.MustRegister(metrics.NewStoreCollector(d.DB(), 0))
	}
	h, closer := metrics.TemporalHandler(reg)
	p.closers = append(p.closers, closer)
	opts, err := starter.ClientOptions(s.cfg.Temporal, s.log)
	if err != nil {
		p.close()
		return nil, err
	}
	opts.MetricsHandler = h
	c, err := client.NewClientFromExisting(s.client, opts)
	if err != nil {
		p.close()
		return nil, unavailableError(fmt.Errorf("temporal client with metrics: %w", err))
	}
	p.client = c
	return p, nil
}

func (p *processOps) close() {
	if p.client != nil {
		p.client.Close()
	}
	for _, c := range p.closers {
		_ = c.Close()
	}
}

// serveOps serves h on addr until ctx is done and says where it listens
// ("" for nowhere). On the default address a port already taken (a second
// worker on the host) is logged and skipped; on one set explicitly it is an
// error.
func serveOps(ctx context.Context, oc config.OpsConfig, h http.Handler, log *slog.Logger) (bound string, stop func(), err error) {
	addr := oc.Address
	if addr == "" {
		return "", func() {}, nil
	}
	limits, paths := ops.DefaultLimits, []string{ops.PathHealth, ops.PathReady, ops.PathMetrics}
	if oc.Pprof {
		h, limits, paths = ops.WithProfiles(h), ops.ProfileLimits, append(paths, ops.PathProfiles)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if addr == config.DefaultOpsAddress {
			log.Warn("ops endpoints not served: the default ops.address is taken; set ops.address per worker",
				"address", addr, "error", err)
			return "", func() {}, nil
		}
		return "", nil, fmt.Errorf("ops: listen on %s (ops.address): %w", addr, err)
	}
	srv := ops.NewServer(h, log, limits)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("ops endpoints stopped", "error", err)
		}
	}()
	log.Info("ops endpoints serving", "address", ln.Addr().String(), "paths", paths)
	return ln.Addr().String(), func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}

// forceExitCode is the exit code of a process stopped by a second signal
// while it was stopping gracefully.
const forceExitCode = 130

// exitOnSecondSignal: the first SIGINT or SIGTERM stops the process
// gracefully (it ends the command's context, see main); a second exits at
// once, without waiting for the grace period. Signals are watched from the
// call on, so a second one close behind the first is not lost. The
// returned stop ends the watch.
func exitOnSecondSignal(log *slog.Logger) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer signal.Stop(ch)
		for seen := 0; ; {
			select {
			case <-done:
				return
			case sig := <-ch:
				if seen++; seen == 2 {
					log.Warn("second signal: exiting now, without waiting for running work", "signal", sig.String())
					os.Exit(forceExitCode)
				}
			}
		}
	}()
	return func() { close(done) }
}

// withForgeEndpoints adds to an ops handler the forges' webhook endpoint,
// when a repository's forge has a webhook secret
// (docs/pull-requests.md#webhooks), and POST /intake, when
// ops.intake_secret_env is set (docs/forge.md#other-trackers).
func withForgeEndpoints(h http.Handler, s *session, p *processOps) http.Handler {
	hooks := false
	for _, r := range s.cfg.Patch.Repositories {
		hooks = hooks || r.Forge.WebhookSecretEnv != ""
	}
	posts := s.cfg.Ops.IntakeSecretEnv != ""
	if !hooks && !posts {
		return h
	}
	st := &starter.Starter{Client: p.client, Store: s.store, TaskQueue: s.cfg.Temporal.TaskQueue}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	if hooks {
		mux.Handle("POST "+workers.PathForgeWebhook, workers.ForgeWebhook(s.cfg, os.Getenv, s.store, st.Start, p.intake, s.log))
	}
	if posts {
		repos := make([]string, 0, len(s.cfg.Patch.Repositories))
		for _, r := range s.cfg.Patch.Repositories {
			repos = append(repos, r.Repository)
		}
		mux.Handle("POST "+intake.PathIntake, intake.PostHandler(intake.PostOptions{Store: s.store,
			Secret: func() string { return s.cfg.Ops.IntakeSecret(os.Getenv) }, Repositories: repos,
			Defaults: func(repository string) (float64, int) {
				r := s.cfg.Patch.Repository(repository)
				return r.BudgetUSD, r.Attempts
			},
			Start: st.Start, Observer: p.metrics, Log: s.log}))
	}
	return mux
}
