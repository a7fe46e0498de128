package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/ops"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/workers"
	"github.com/azolla/azolla/workflows"
)

// DevServer is the embedded Temporal server (and Web UI) of `azolla dev`.
// The command line gets it injected so that only the binary links the
// server, not the command tests.
type DevServer interface {
	FrontendAddress() string
	UIURL() string
	Stop() error
}

// DevServerOptions are what `azolla dev` asks of its server.
type DevServerOptions struct {
	Host             string
	GRPCPort, UIPort int
	DBPath           string
	Ephemeral        bool
	Namespace        string
	// SearchAttributes are the custom search attributes to register, by
	// name, with their types.
	SearchAttributes map[string]enumspb.IndexedValueType
	Log              *slog.Logger
}

// StartDevServer starts a DevServer; nil means this binary has none. It
// returns once the namespace serves the search attributes, so that a
// lifecycle start is accepted from then on: `azolla dev` announces itself
// and starts its workers and poller only after it has returned.
type StartDevServer func(ctx context.Context, o DevServerOptions) (DevServer, error)

// demoObjectiveID is the objective `azolla dev --demo` creates.
const demoObjectiveID = "demo"

func (a *app) devCmd() *cobra.Command {
	var demo, verbose bool
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run everything in one process: Temporal dev server, Web UI, store and workers",
		Long: `Run an embedded Temporal server (state in <data_dir>/temporal.db, or in
memory with --ephemeral) with its Web UI, the SQLite store, the lifecycle
workers and the poller, in one process. Ctrl-C stops it all.
With --demo it also creates a demo objective that waits for approval, and
the task-management demo: two captures for triage, a manifest request and
an objective past its due date.

The terminal shows the banner, warnings and errors; the whole log (at
log.level) goes to <data_dir>/dev.log, and --verbose prints it here too.
On ops.address (default 127.0.0.1:7360) it serves /healthz, /readyz and
/metrics as 'azolla worker' does.`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.Bool("ephemeral", false, "keep Temporal's state in memory (dev.ephemeral)")
	fl.Int("grpc-port", 0, "Temporal frontend port (dev.grpc_port, default 7233)")
	fl.Int("ui-port", 0, "Web UI port (dev.ui_port, default 8233)")
	fl.BoolVar(&demo, "demo", false, "create a demo objective awaiting approval and the task-management demo")
	fl.BoolVarP(&verbose, "verbose", "v", false, "print the whole log (log.level) to the terminal, not only warnings and errors")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if a.startDev == nil {
			return configError(errors.New("this azolla binary is the lean build, without the embedded Temporal server " +
				"that azolla dev runs: build bin/azolla with `make build` (or `go build -tags devserver ./cmd/azolla`)"))
		}
		cfg, err := a.loadConfig(cmd.Flags())
		if err != nil {
			return err
		}
		if fl.Changed("ephemeral") {
			cfg.Dev.Ephemeral, _ = fl.GetBool("ephemeral")
		}
		for flag, dst := range map[string]*int{"grpc-port": &cfg.Dev.GRPCPort, "ui-port": &cfg.Dev.UIPort} {
			if fl.Changed(flag) {
				*dst, _ = fl.GetInt(flag)
			}
		}
		if err := cfg.Validate(); err != nil {
			return configError(fmt.Errorf("invalid configuration: %w", err))
		}
		log, closeLog, err := devLogger(cfg, a.stderr, verbose)
		if err != nil {
			return err
		}
		defer closeLog()
		ctx := cmd.Context()
		// Before the server starts: a sandbox that cannot be had stops
		// azolla dev at once.
		box, err := workers.NewSandbox(cfg, log, a.configFile)
		if err != nil {
			return configError(err)
		}
		defer box.Close()

		srv, err := a.startDev(ctx, DevServerOptions{Host: cfg.Dev.Host, GRPCPort: cfg.Dev.GRPCPort,
			UIPort: cfg.Dev.UIPort, DBPath: cfg.TemporalDBPath(), Ephemeral: cfg.Dev.Ephemeral,
			Namespace: cfg.Temporal.Namespace, SearchAttributes: wantedSearchAttributes(), Log: log})
		if err != nil {
			return fmt.Errorf("start the embedded Temporal server: %w", err)
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				log.Warn("stop the embedded Temporal server", "error", err)
			}
		}()
		cfg.Temporal.Address = srv.FrontendAddress()
		s, err := a.sessionFor(cmd, cfg, false)
		if err != nil {
			return err
		}
		defer s.close()
		s.log = log
		// The workers log through the SDK: it gets the process's logger.
		if err := a.dialTemporalLogging(cmd, s, log); err != nil {
			return err
		}
		p, err := newProcessOps(s)
		if err != nil {
			return err
		}
		defer p.close()
		started := ops.NewFlag("workers", "workers not started")
		opsAddr, stopOps, err := serveOps(ctx, cfg.Ops, withForgeEndpoints(ops.Handler(p.reg, []ops.Check{
			ops.StoreCheck(s.store), ops.TemporalCheck(p.client), started.Check()}), s, p), log)
		if err != nil {
			return err
		}
		defer stopOps()

		identity := activities.DefaultIdentity()
		cp, err := a.startDevControlPlane(ctx, s, p, identity)
		if err != nil {
			return err
		}
		defer cp.stop()

		a.printDevBanner(cmd, cfg, srv, cp, opsAddr, verbose)
		if demo {
			if err := a.createDemo(cmd, s); err != nil {
				return err
			}
			if err := a.createTaskDemo(ctx, s); err != nil {
				return err
			}
			a.announceTaskDemo(cmd, s)
		}
		return workers.Run(ctx, workers.Options{Config: cfg, Client: p.client, Store: s.store, Log: log,
			Identity: identity, ControlPlane: cp.svc, Sandbox: box, Metrics: p.metrics,
			OnStarted: started.Set, OnStopping: started.Stop, IntakeWakeup: p.intake})
	}
	return cmd
}

// devControlPlane is the control plane `azolla dev` embeds.
type devControlPlane struct {
	svc  *controlplane.Service
	addr string
	// open: it serves remote workers without tokens (loopback only).
	open bool
	stop func()
}

// startDevControlPlane serves the worker API on control_plane.address
// beside the workers, sharing their transport so an enqueue wakes a
// waiting claim at once. On a loopback address it needs no worker tokens;
// on any other it asks for them like `azolla control-plane`.
func (a *app) startDevControlPlane(ctx context.Context, s *session, p *processOps, identity string) (*devControlPlane, error) {
	cfg := s.cfg
	tr, err := workers.OpenTransport(ctx, cfg.ControlPlane, s.store)
	if err != nil {
		return nil, unavailableError(err)
	}
	ln, err := net.Listen("tcp", cfg.ControlPlane.Address)
	if err != nil {
		_ = tr.Close()
		return nil, fmt.Errorf("control plane: listen on %s (set control_plane.address): %w", cfg.ControlPlane.Address, err)
	}
	cp := &devControlPlane{svc: workers.NewObservedControlPlane(cfg, s.store, tr, p.client, s.log, identity, p.metrics),
		addr: ln.Addr().String(), open: controlplane.LoopbackOnly(cfg.ControlPlane.Address) == nil}
	if cp.open {
		s.log.Warn("the embedded control plane accepts remote workers without tokens: it listens on loopback only",
			"address", cp.addr)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := workers.RunControlPlane(cctx, workers.ControlPlaneOptions{Config: cfg, Service: cp.svc, Store: s.store,
			Log: s.log, Unauthenticated: cp.open, Listener: ln})
		if err != nil {
			s.log.Error("embedded control plane stopped", "error", err)
		}
	}()
	cp.stop = func() {
		cancel()
		<-done
		_ = tr.Close()
	}
	return cp, nil
}

func (a *app) printDevBanner(cmd *cobra.Command, cfg config.Config, srv DevServer, cp *devControlPlane,
	opsAddr string, verbose bool) {
	out := cmd.OutOrStdout()
	state := cfg.TemporalDBPath()
	if cfg.Dev.Ephemeral {
		state = "in memory (--ephemeral)"
	}
	fmt.Fprintf(out, `azolla dev is running.
  Temporal  %s (namespace %s), state %s
  Web UI    %s
  store     %s
  control plane http://%s (remote workers; transport %s)
`, srv.FrontendAddress(), cfg.Temporal.Namespace, state, srv.UIURL(), storeLabel(cfg), cp.addr,
		transportLabel(cfg.Masked().ControlPlane.RedisURL))
	if opsAddr != "" {
		fmt.Fprintf(out, "  metrics   http://%s%s (readiness %s)\n", opsAddr, ops.PathMetrics, ops.PathReady)
	}
	if !verbose {
		fmt.Fprintf(out, "  log       %s (warnings and errors show here too; --verbose prints all of it)\n", devLogPath(cfg))
	}
	if _, port, _ := net.SplitHostPort(srv.FrontendAddress()); port != "7233" {
		fmt.Fprintf(out, "  other azolla commands need: export AZOLLA_TEMPORAL_ADDRESS=%s\n", srv.FrontendAddress())
	}
	fmt.Fprintf(out, `
Next, in another terminal:
  %[1]s objective create --title "Describe the work" --criteria "How to tell it is done"
  %[1]s objective approve <id>
  %[1]s objective watch <id>
  %[1]s inbox                    everything waiting for you, with the command for each
In the Web UI, the objectives and the track (track-%[2]s) without the
deadline monitor's passes (schedule %[3]s, every %[4]s):
  %[5]s
filter further with e.g. AzollaStatus="DONE" or AzollaOverdue=true.
Ctrl-C stops everything.
`, a.self(), cfg.Tasks.Track, workflows.DeadlineScheduleID, cfg.Deadlines.Interval, workListURL(srv.UIURL()))
	remote := "none yet: set control_plane.remote_diazotrophs (e.g. AZOLLA_CONTROL_PLANE_REMOTE_DIAZOTROPHS=PATCH_DIAZOTROPH)"
	if len(cfg.ControlPlane.RemoteDiazotrophs) > 0 {
		remote = strings.Join(cfg.ControlPlane.RemoteDiazotrophs, ", ")
	}
	fmt.Fprintf(out, `
Remote workers run %s. Start one with:
`, remote)
	if cp.open {
		fmt.Fprintf(out, "  %s remote-worker --control-plane http://%s --worker-id dev-remote\n", a.self(), cp.addr)
		return
	}
	fmt.Fprintf(out, `  %[1]s worker-token create NAME > worker.token && chmod 600 worker.token
  %[1]s remote-worker --control-plane http://%[2]s --worker-id NAME --token-file worker.token
`, a.self(), cp.addr)
}

// workListURL is the Web UI's workflow list (list, the namespace's) filtered
// by workflows.WorkListQuery.
func workListURL(list string) string {
	return list + "?query=" + url.QueryEscape(workflows.WorkListQuery)
}

func storeLabel(cfg config.Config) string {
	if cfg.Store.Driver == config.DriverSQLite {
		return "sqlite " + cfg.SQLitePath()
	}
	return cfg.Store.Driver + " " + cfg.Masked().Store.DSN
}

// createDemo creates the demo objective, or reuses it while it still waits
// for approval; once it is past that, a new demo-N is created.
func (a *app) createDemo(cmd *cobra.Command, s *session) error {
	ctx := cmd.Context()
	id := demoObjectiveID
	for n := 2; ; n++ {
		o, err := s.store.GetObjective(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			break
		}
		if err != nil {
			return err
		}
		if o.Status == domain.StatusNew {
			return a.announceDemo(cmd, s, o)
		}
		id = demoObjectiveID + "-" + strconv.Itoa(n)
	}
	repo, err := demoRepository(ctx, s.cfg)
	if err != nil {
		return err
	}
	o := &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "Greet by name in the demo repository",
		AcceptanceCriteria: []string{"greet.sh greets the name it is given, and the world without one",
			"The README says how to pass a name"},
		Status: domain.StatusNew, Urgency: "NORMAL", Repository: repo, BaseBranch: demoBranch,
		Generator: config.GeneratorStatic, Patch: demoPatch}
	if err := s.store.CreateObjective(ctx, o); err != nil {
		return fmt.Errorf("create the demo objective: %w", err)
	}
	return a.announceDemo(cmd, s, o)
}

func (a *app) announceTaskDemo(cmd *cobra.Command, s *session) {
	fmt.Fprintf(cmd.OutOrStdout(), `
The task-management demo added two captures and a manifest request: the
track (workflow %[2]s) triages the captures into proposed objectives,
then writes the manifest; the deadline monitor (schedule %[3]s) finds
%[4]q past its due date. See everything waiting for you with:
  %[1]s inbox
  %[1]s track show
  %[1]s manifest show
`, a.self(), workflows.TrackWorkflowID(s.cfg.Tasks.Track), workflows.DeadlineScheduleID, demoOverdueObjectiveID)
}

func (a *app) announceDemo(cmd *cobra.Command, s *session, o *domain.Objective) error {
	if err := s.starter.Start(cmd.Context(), o); err != nil {
		return err
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), `
Demo objective %[2]q targets the sample repository %[3]s
and carries a patch for it. It is waiting for your approval. Approve it with:
  %[1]s objective approve %[2]s
then follow it with '%[1]s objective watch %[2]s' or in the Web UI, and see
the branch, commit and diff with '%[1]s objective show %[2]s'.
`, a.self(), o.ObjectiveID, o.Repository)
	return err
}

// devLogRotateBytes is the size past which `azolla dev` moves dev.log to
// dev.log.1 when it starts, so the file does not grow without end.
const devLogRotateBytes = 64 << 20

func devLogPath(cfg config.Config) string { return filepath.Join(cfg.DataDir, "dev.log") }

// devLogger is the log of `azolla dev`: everything at log.level to
// <data_dir>/dev.log, and to the terminal warnings and errors only unless
// verbose. The terminal stays for the banner and what the user asked for.
func devLogger(cfg config.Config, terminal io.Writer, verbose bool) (*slog.Logger, func(), error) {
	path := devLogPath(cfg)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("data dir: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > devLogRotateBytes {
		if err := os.Rename(path, path+".1"); err != nil {
			return nil, nil, fmt.Errorf("rotate the log: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open the log: %w", err)
	}
	term := cfg.LoggerAtLeast(terminal, slog.LevelWarn)
	if verbose {
		term = cfg.Logger(terminal)
	}
	log := slog.New(slog.NewMultiHandler(cfg.Logger(f).Handler(), term.Handler()))
	return log, func() { _ = f.Close() }, nil
}
