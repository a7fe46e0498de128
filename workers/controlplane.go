package workers

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/ops"
	"github.com/azolla/azolla/internal/ops/metrics"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/controlplane/dbqueue"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/tlsfiles"
)

// OpenTransport opens the control plane's transport: Redis Streams when
// control_plane.redis_url is set, else the database's job_messages table.
func OpenTransport(ctx context.Context, cfg config.ControlPlaneConfig, st store.Store) (controlplane.Transport, error) {
	if cfg.RedisURL == "" {
		return dbqueue.New(st, dbqueue.Options{LeaseTTL: cfg.LeaseTTL})
	}
	tr, err := redisstream.New(ctx, redisstream.Options{URL: cfg.RedisURL, LeaseTTL: cfg.LeaseTTL})
	if err != nil {
		// The URL may carry a password: the error names the transport only.
		return nil, fmt.Errorf("open the Redis transport at %s: %w", config.Config{ControlPlane: cfg}.Masked().ControlPlane.RedisURL, err)
	}
	return tr, nil
}

// NewControlPlane builds the control plane service on st and tr. With a
// Temporal client it completes the Run activities waiting on jobs; without
// one (a worker that only enqueues) it reports to none.
func NewControlPlane(cfg config.Config, st store.Store, tr controlplane.Transport, c client.Client,
	log *slog.Logger, instanceID string) *controlplane.Service {
	return NewObservedControlPlane(cfg, st, tr, c, log, instanceID, nil)
}

// NewObservedControlPlane is NewControlPlane counting dead letters, reaper
// actions, the reaper's claims and remotely executed workorders on m (nil:
// none).
func NewObservedControlPlane(cfg config.Config, st store.Store, tr controlplane.Transport, c client.Client,
	log *slog.Logger, instanceID string, m *metrics.Metrics) *controlplane.Service {
	cp := cfg.ControlPlane
	var hooks controlplane.LifecycleHooks
	ccfg := controlplane.Config{
		LeaseTTL: cp.LeaseTTL, HeartbeatInterval: cp.HeartbeatInterval, MaxWait: cp.MaxWait,
		MaxAttempts: cp.MaxAttempts, ReaperInterval: cp.ReaperInterval, InstanceID: instanceID, Log: log,
		// A remote worker redacts its own secrets; these are this side's.
		Redact: redact.New(append(cfg.Secrets(), redact.FromEnviron(os.Environ())...)...)}
	if m != nil {
		hooks.Observer, ccfg.Observer, ccfg.Claims = m, m, m
	}
	var acts controlplane.Activities
	if c != nil {
		acts = &activities.RemoteCompleter{Client: c, Namespace: cfg.Temporal.Namespace,
			Outcomes: activities.RemoteOutcomes{Store: st, EarlyStopMaxDiffLines: cfg.Patch.EarlyStopMaxDiffLines}}
	}
	return controlplane.New(st, tr, acts, hooks, ccfg)
}

// ControlPlaneOptions shape a control plane: `azolla control-plane`, or the
// one `azolla dev` embeds.
type ControlPlaneOptions struct {
	Config  config.Config
	Service *controlplane.Service
	// Store holds the worker tokens requests are authenticated by.
	Store store.Store
	Log   *slog.Logger
	// Unauthenticated serves remote workers without tokens. Only `azolla
	// dev` may, and only on a loopback address.
	Unauthenticated bool
	// Listener, when set, is served instead of control_plane.address.
	Listener net.Listener
	// OnListen, when set, is told the address once the server listens.
	OnListen func(addr string)
	// Metrics, when set, is served on GET /metrics.
	Metrics prometheus.Gatherer
	// Ready, when set, are GET /readyz's checks (with Metrics).
	Ready []ops.Check
	// Limits, when set, replace the server's defaults (ops.DefaultLimits,
	// with room for the long poll).
	Limits *ops.Limits
}

// shutdownGrace bounds how long in-flight requests (a long poll at most
// MaxControlPlaneWait) may finish once the control plane stops.
const shutdownGrace = config.MaxControlPlaneWait + 5*time.Second

// RunControlPlane serves the control plane's worker API (docs/protocol/control-plane.md) over HTTP (HTTPS with
// control_plane.cert_file/key_file, requiring client certificates with
// control_plane.client_ca_file) and runs the reaper until ctx is done.
func RunControlPlane(ctx context.Context, o ControlPlaneOptions) error {
	cp := o.Config.ControlPlane
	auth := controlplane.Authenticator(controlplane.TokenAuthenticator{Tokens: o.Store})
	if o.Unauthenticated {
		// The address served, whether configured or a listener's.
		addr := cp.Address
		if o.Listener != nil {
			addr = o.Listener.Addr().String()
		}
		if err := controlplane.LoopbackOnly(addr); err != nil {
			return err
		}
		auth = controlplane.AllowUnauthenticated
	}
	ln := o.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cp.Address); err != nil {
			return fmt.Errorf("control plane: listen on %s: %w", cp.Address, err)
		}
	}
	handler := o.Service.Router(auth)
	if o.Metrics != nil {
		// /readyz and /metrics beside the worker API, whose router has
		// /healthz already.
		mux := http.NewServeMux()
		mux.Handle("/", handler)
		ops.Register(mux, o.Metrics, o.Ready, false)
		handler = mux
	}
	limits := ops.DefaultLimits
	limits.Write += config.MaxControlPlaneWait // a claim's long poll
	if o.Limits != nil {
		limits = *o.Limits
	}
	srv := ops.NewServer(handler, o.Log, limits)
	if cp.ClientCAFile != "" {
		pool, err := tlsfiles.CAPool(cp.ClientCAFile)
		if err != nil {
			return fmt.Errorf("control plane: control_plane.client_ca_file: %w", err)
		}
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	}
	reaper := controlplane.NewReaper(o.Service)
	reaper.Start(ctx)
	defer reaper.Stop()

	served := make(chan error, 1)
	go func() {
		if cp.CertFile != "" {
			served <- srv.ServeTLS(ln, cp.CertFile, cp.KeyFile)
		} else {
			served <- srv.Serve(ln)
		}
	}()
	if o.OnListen != nil {
		o.OnListen(ln.Addr().String())
	}
	select {
	case err := <-served:
		return fmt.Errorf("control plane: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("control plane: shut down: %w", err)
	}
	return nil
}
