package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/ops"
	"github.com/azolla/azolla/workers"
)

func (a *app) controlPlaneCmd() *cobra.Command {
	var identity string
	cmd := &cobra.Command{
		Use:   "control-plane",
		Short: "Serve remote workers: the worker API and its reaper",
		Long: `Serve the worker API remote workers pull jobs from (POST
/internal/worker/claim, heartbeat, complete, fail) on control_plane.address,
over HTTPS when control_plane.cert_file and key_file are set. Every request
carries a worker token ('azolla worker-token create NAME'). Jobs, attempts
and leases live in the store; their messages travel on Redis Streams when
control_plane.redis_url is set, else on the store. The reaper (one active
across control-plane processes) requeues or dead-letters jobs whose lease
expired and writes again messages that were lost. When a remote worker
completes a job, the waiting Run activity is completed through Temporal.

Which diazotrophs run remotely is control_plane.remote_diazotrophs, read by
'azolla worker'. Run as many control planes as you like behind one address.

Beside the worker API it serves GET /healthz, /readyz (store and Temporal;
503 with a JSON body naming what is not ready) and /metrics (Prometheus).
SIGTERM or Ctrl-C stops it cleanly: in-flight requests (a long poll at
most) finish, the reaper gives its leadership up, and it exits 0; a second
signal exits at once.`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&identity, "identity", "", "instance identity in the transport and the reaper's claim (default pid@host)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		s, identity, err := a.openProcess(cmd, identity)
		if err != nil {
			return err
		}
		defer s.close()
		ctx := cmd.Context()
		defer exitOnSecondSignal(s.log)()
		p, err := newProcessOps(s)
		if err != nil {
			return err
		}
		defer p.close()
		tr, err := workers.OpenTransport(ctx, s.cfg.ControlPlane, s.store)
		if err != nil {
			return unavailableError(err)
		}
		defer tr.Close()
		svc := workers.NewObservedControlPlane(s.cfg, s.store, tr, p.client, s.log, identity, p.metrics)
		cp := s.cfg.ControlPlane
		return workers.RunControlPlane(ctx, workers.ControlPlaneOptions{Config: s.cfg, Service: svc, Store: s.store,
			Log: s.log, Metrics: p.reg, Ready: []ops.Check{ops.StoreCheck(s.store), ops.TemporalCheck(p.client)},
			OnListen: func(addr string) {
				s.log.Info("control plane serving", "address", addr, "tls", cp.CertFile != "",
					"transport", transportLabel(s.cfg.Masked().ControlPlane.RedisURL), "store", s.cfg.Store.Driver,
					"identity", identity)
			}})
	}
	return cmd
}

// transportLabel names the transport for people: the (masked) Redis URL or
// the store.
func transportLabel(maskedRedisURL string) string {
	if maskedRedisURL == "" {
		return "store"
	}
	return fmt.Sprintf("redis %s", maskedRedisURL)
}
