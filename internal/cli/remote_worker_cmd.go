package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/remoteworker"
	"github.com/azolla/azolla/workers"
)

func (a *app) remoteWorkerCmd() *cobra.Command {
	var o remoteworker.Options
	cmd := &cobra.Command{
		Use:   "remote-worker",
		Short: "Run diazotroph jobs pulled from a control plane over outbound HTTP",
		Long: `Claim jobs from the control plane at --control-plane and run them with this
machine's diazotrophs (PATCH_DIAZOTROPH in its own git dir under data_dir,
COMMAND_DIAZOTROPH), one at a time. The worker needs no inbound port, no
store and no Temporal: only HTTPS (or HTTP) to the control plane and the
token 'azolla worker-token create NAME' printed, in --token-file (chmod
600), with --worker-id NAME (or $AZOLLA_WORKER_ID).

It claims from --streams in priority order (default: the streams of the
diazotrophs it runs, "command" and "patch") and heartbeats the running
job's lease. When the control plane refuses a heartbeat (the lease was
lost, the job moved on, its activity was cancelled) the job's processes are
killed and nothing is written. Ctrl-C or SIGTERM stops claiming and lets
the running job finish within --shutdown-grace, then completes it; past
the grace it is killed and failed, to be retried elsewhere.

Every patch.gc_interval it prunes the workspaces of its finished jobs
once patch.retention has passed, only those whose branch was pushed or
holds no work, and gc's its mirrors.`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&o.ControlPlaneURL, "control-plane", "", "the control plane's URL, e.g. https://cp.example:7350 (required)")
	f.StringVar(&o.TokenFile, "token-file", "", "file holding this worker's token (required)")
	f.StringVar(&o.WorkerID, "worker-id", "", "the name the token was created for (default $"+remoteworker.EnvWorkerID+")")
	f.StringSliceVar(&o.Streams, "streams", nil, "streams to claim from, in priority order (default: those of the diazotrophs this worker runs)")
	f.DurationVar(&o.MaxWait, "max-wait", remoteworker.DefaultMaxWait, "how long a claim waits for a job (the control plane caps it)")
	f.DurationVar(&o.ShutdownGrace, "shutdown-grace", remoteworker.DefaultShutdownGrace, "how long a running job may finish once the worker is stopped")
	f.StringVar(&o.CAFile, "control-plane-ca", "", "CA bundle to verify an https control plane's certificate")
	f.StringVar(&o.ServerName, "control-plane-server-name", "", "server name to verify the control plane's certificate against")
	f.StringVar(&o.CertFile, "control-plane-cert", "", "client certificate for a control plane that requires one (mTLS), with --control-plane-key")
	f.StringVar(&o.KeyFile, "control-plane-key", "", "the key of --control-plane-cert")

	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		switch {
		case o.ControlPlaneURL == "":
			return usageError(errors.New("--control-plane is required"))
		case o.TokenFile == "" && !devControlPlaneURL(o.ControlPlaneURL):
			return usageError(errors.New("--token-file is required (only azolla dev's control plane, on loopback, takes none)"))
		}
		cfg, err := a.loadConfig(cmd.Flags())
		if err != nil {
			return err
		}
		if o.WorkerID == "" {
			o.WorkerID = remoteworker.DefaultWorkerID(a.getenv)
		}
		if o.MaxWait <= 0 || o.MaxWait > config.MaxControlPlaneWait {
			return usageError(fmt.Errorf("--max-wait %v: want more than 0 and at most %v", o.MaxWait,
				config.MaxControlPlaneWait))
		}
		if o.ShutdownGrace <= 0 {
			return usageError(fmt.Errorf("--shutdown-grace %v: want more than 0", o.ShutdownGrace))
		}
		o.Logger = cfg.Logger(a.stderr)
		// The token and the client key are this worker's, never a job's.
		box, err := workers.NewSandbox(cfg, o.Logger, a.configFile, o.TokenFile, o.KeyFile)
		if err != nil {
			return configError(err)
		}
		defer box.Close()
		var secrets []redact.Secret
		if o.TokenFile != "" {
			token, err := remoteworker.ReadTokenFile(o.TokenFile, o.Logger)
			if err != nil {
				return configError(err)
			}
			secrets = append(secrets, redact.Secret{Name: "remote worker token", Value: token})
		}
		exec, err := remoteExecutor(cfg, box, o.Logger, secrets...)
		if err != nil {
			return configError(err)
		}
		if err := checkStreams(o.Streams, exec.Registry); err != nil {
			return usageError(err)
		}
		pruner, err := remotePruner(cfg, o.Logger)
		if err != nil {
			return configError(err)
		}
		exec.Workspaces = pruner.Workspaces
		o.Executor = exec
		w, err := remoteworker.New(o)
		if err != nil {
			return configError(err)
		}
		fmt.Fprintf(a.stdout, "remote worker %s: control plane %s, streams %s\n", w.ID(), w.URL(),
			strings.Join(w.Streams(), ","))
		pruner.Start(cmd.Context())
		defer pruner.Stop()
		return w.Run(cmd.Context())
	}
	return cmd
}

// remoteExecutor runs jobs on the diazotrophs `azolla worker` runs, built
// from cfg alone (a remote worker has no store), confined by box and
// redacting secrets besides cfg's own.
func remoteExecutor(cfg config.Config, box *sandbox.Host, log *slog.Logger, secrets ...redact.Secret) (*remoteworker.Diazotrophs, error) {
	ex, err := workers.NewExecutors(cfg, box, log, secrets...)
	if err != nil {
		return nil, err
	}
	reg, p, err := workers.NewRegistry(cfg, ex)
	if err != nil {
		return nil, err
	}
	// PATCH_DIAZOTROPH's candidates of best-of-N workorders run here too.
	return &remoteworker.Diazotrophs{Registry: reg, Candidates: p, Redact: ex.Secrets}, nil
}

// remotePruner is the retention pass over this machine's git dir
// (patch.git_dir), every patch.gc_interval, keeping finished workspaces
// patch.retention: the rule of `azolla worker`'s, with what a worker
// without a store knows (docs/remote-workers.md#workspaces).
func remotePruner(cfg config.Config, log *slog.Logger) (*remoteworker.Pruner, error) {
	dir, err := filepath.Abs(cfg.GitDir())
	if err != nil {
		return nil, fmt.Errorf("patch.git_dir: %w", err)
	}
	return &remoteworker.Pruner{Workspaces: &remoteworker.Workspaces{Dir: dir, Log: log}, Git: gitops.Git{},
		Retention: cfg.Patch.Retention, Interval: cfg.Patch.GCInterval, Log: log}, nil
}

// checkStreams refuses a stream whose diazotroph this worker does not run:
// it would claim jobs only to fail them.
func checkStreams(streams []string, reg *diazotroph.Registry) error {
	types := reg.Types()
	for _, s := range streams {
		if err := controlplane.ValidateStream(s); err != nil {
			return fmt.Errorf("--streams: %w", err)
		}
		if !slices.Contains(types, controlplane.DiazotrophFor(s)) {
			var runs []string
			for _, t := range types {
				runs = append(runs, controlplane.StreamFor(t))
			}
			return fmt.Errorf("--streams: this worker runs no %s for stream %q (its streams: %s)",
				controlplane.DiazotrophFor(s), s, strings.Join(runs, ", "))
		}
	}
	return nil
}

// devControlPlaneURL reports whether u is a plain-http loopback URL, the
// only kind of control plane (azolla dev's) that serves workers without
// tokens.
func devControlPlaneURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "http" {
		return false
	}
	return controlplane.LoopbackOnly(net.JoinHostPort(p.Hostname(), "0")) == nil
}
