package integration

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream/redistest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers"
)

// Eight lifecycles whose runs go to two remote workers under a deployment
// limit of two runs at once. The control plane runs in the test's process
// on the recorded store, behind fault proxies: the remote workers reach it
// through one, it reaches Redis through another, and the store (on
// PostgreSQL) and Temporal each through one of their own. One remote
// worker is SIGKILLed in the middle of a job. Every lifecycle reaches DONE
// from a job that succeeded, every run slot is given up, and the history
// of every claim operation (the workers' and those the control plane
// makes for its jobs: their WORKORDER claims and run slots) and every
// bundle delivered is linearizable against the claim and outcome models.
func TestFaults_RemoteRunsBehindFaultyLinksKeepTheClaimProtocol(t *testing.T) {
	t.Parallel()
	forSeeds(t, "remote", bothBackends, func(t *testing.T, backend string, seed uint64) (int, int, map[string]int) {
		w := startFaultyRemote(t, backend, seed, nil)
		ctx := context.Background()
		w.requireDone(t)
		for _, id := range w.ids {
			j, err := w.direct.GetJobByWorkOrder(ctx, "wo-"+id+"-1")
			require.NoError(t, err)
			require.Equal(t, domain.JobSucceeded, j.Status, "%s ran remotely", id)
		}
		now := time.Now()
		live, err := w.direct.ListClaims(ctx, store.ListClaimsParams{ResourceTypes: []string{domain.ResourceRunSlot}, LiveAt: &now})
		require.NoError(t, err)
		require.Empty(t, live, "every run slot is given up")
		return w.check(t)
	})
}

// The remote scenario sees what it is meant to: with the claim
// acquisition's expiry guard removed from the store, the history of the
// workers and the control plane is not linearizable.
func TestMutation_RemoteRunsCatchABrokenGuard(t *testing.T) {
	t.Parallel()
	w := startFaultyRemote(t, "postgres", 1, storetest.RemoveExpiryGuard)
	requireCaught(t, w.h)
}

// startFaultyRemote starts the remote scenario on a store of backend (as
// goFaulty; mutated first by mutate when set) with faults drawn from
// seed, and returns once the faults are over and the victim is dead.
func startFaultyRemote(t *testing.T, backend string, seed uint64, mutate func(context.Context, *sqlstore.Store) error) *faultyWorld {
	dir := t.TempDir()
	starts, pgids := dir+"/starts", dir+"/pgids"
	t.Cleanup(func() { proctest.KillGroups(pgids) })
	// Each run notes itself and works for a second.
	command := fmt.Sprintf(`echo "$AZOLLA_WORK_ORDER_ID" >> %q; echo $$ >> %q; sleep 1; printf ok`, starts, pgids)
	b := setup(t, setupOptions{command: "false", leaseTTL: 3 * time.Second, noWorker: true, configure: func(c *config.Config) {
		c.Executor.Sandbox = config.SandboxNone
		c.Lifecycle.MaxConcurrentRuns = 2
		cp := &c.ControlPlane
		cp.RemoteDiazotrophs = []string{"COMMAND_DIAZOTROPH"}
		cp.LeaseTTL, cp.HeartbeatInterval, cp.ReaperInterval, cp.MaxAttempts = 3*time.Second, time.Second, 300*time.Millisecond, 10
	}})
	ctx := context.Background()
	w := goFaulty(t, b, backend, mutate)

	redisURL := redistest.URL(t)
	redisAddr := mustParseRedisURL(t, redisURL).Addr
	redisProxy := storetest.StartFaultProxy(t, redisAddr)
	tr, err := redisstream.New(ctx, redisstream.Options{URL: strings.Replace(redisURL, redisAddr, redisProxy.Addr(), 1),
		LeaseTTL: b.cfg.ControlPlane.LeaseTTL, Prefix: redistest.Prefix(t, redisURL)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Close() })
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	svc := workers.NewControlPlane(b.cfg, b.store, tr, b.client, log, "cp-faulty")
	b.controlPlane = svc
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cpCtx, stopCP := context.WithCancel(ctx)
	cpDone := make(chan error, 1)
	go func() {
		cpDone <- workers.RunControlPlane(cpCtx, workers.ControlPlaneOptions{Config: b.cfg, Service: svc, Store: b.store, Log: log,
			Unauthenticated: true, Listener: ln})
	}()
	t.Cleanup(func() {
		stopCP()
		require.NoError(t, <-cpDone)
	})
	cpProxy := storetest.StartFaultProxy(t, ln.Addr().String())
	w.links = append(w.links, faultyLink{"redis", redisProxy, 150 * time.Millisecond},
		faultyLink{"control plane", cpProxy, 150 * time.Millisecond})
	b.startWorker(t, "first")
	b.startWorker(t, "second")
	remote := func(name string) *exec.Cmd {
		cmd := exec.Command(azollaBin, "remote-worker", "--control-plane", "http://"+cpProxy.Addr(),
			"--worker-id", name, "--max-wait", "1s")
		cmd.Env = append(os.Environ(), "AZOLLA_DATA_DIR="+t.TempDir(), "AZOLLA_LOG_LEVEL=warn",
			"AZOLLA_EXECUTOR_SANDBOX=none", "AZOLLA_DIAZOTROPH_COMMAND_RUN="+command)
		return startLogged(t, "remote worker "+name, cmd)
	}
	victim := remote("remote-a")
	remote("remote-b")

	w.ids = b.approveAll(t, "faultyremote", 8)
	w.inject(t, seed, func() {
		// The first remote worker dies in the middle of a job, with its run.
		require.Eventually(t, func() bool { return proctest.CountLines(starts) >= 2 }, 2*time.Minute, 20*time.Millisecond)
		require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
		_ = victim.Wait()
	})
	return w
}
