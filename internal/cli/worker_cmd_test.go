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
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/deploy/devserver"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
)

// helperEnv makes the test binary run the azolla command line after "--"
// as main does, signals included: a real process to send SIGTERM to.
const helperEnv = "AZOLLA_CLI_HELPER_PROCESS"

func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("run as a subprocess by other tests")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if len(args) == 1 && args[0] == "stuck-stopping" {
		// A process whose graceful stop never ends: only a second signal
		// ends it.
		defer exitOnSecondSignal(slog.New(slog.NewTextHandler(os.Stderr, nil)))()
		fmt.Fprintln(os.Stderr, "waiting for a signal")
		<-ctx.Done()
		fmt.Fprintln(os.Stderr, "stopping")
		select {}
	}
	code := Run(ctx, args, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// startTemporal runs the embedded Temporal server with azolla's search
// attributes, stopped at cleanup.
func startTemporal(t *testing.T) *devserver.Server {
	t.Helper()
	_, port, err := net.SplitHostPort(freeAddr(t))
	require.NoError(t, err)
	var p int
	_, err = fmt.Sscan(port, &p)
	require.NoError(t, err)
	srv, err := devserver.Start(context.Background(), devserver.Options{GRPCPort: p, UIPort: devserver.UIDisabled,
		Ephemeral: true, SearchAttributes: wantedSearchAttributes(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

func httpGet(url string) (int, string, error) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestWorker_ReadyServesMetricsAndSIGTERMExitsZero runs `azolla worker` as
// a process on the embedded server: /readyz turns 200 once its workers
// poll, /metrics carries azolla's and the SDK's series, and SIGTERM stops
// it with exit 0 well within the grace period (claim.lease_ttl).
func TestWorker_ReadyServesMetricsAndSIGTERMExitsZero(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the embedded Temporal server")
	}
	srv := startTemporal(t)
	dataDir := t.TempDir()
	opsAddr := freeAddr(t)
	env := map[string]string{"AZOLLA_DATA_DIR": dataDir, "AZOLLA_TEMPORAL_ADDRESS": srv.FrontendAddress(),
		"AZOLLA_OPS_ADDRESS": opsAddr, "AZOLLA_CLAIM_LEASE_TTL": "20s"}
	r := azolla(t, env, "migrate")
	require.Zero(t, r.code, r.stderr)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", "worker", "--identity", "sigterm-test")
	cmd.Env = []string{helperEnv + "=1", "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr proctest.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	base := "http://" + opsAddr
	require.Eventually(t, func() bool {
		code, _, err := httpGet(base + "/readyz")
		return err == nil && code == http.StatusOK
	}, 60*time.Second, 200*time.Millisecond, "worker never ready; stderr:\n%s", &stderr)
	code, _, err := httpGet(base + "/healthz")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	// The series appear as the worker gets going (the poller's first
	// leadership claim among them): wait until every one is there.
	want := []string{`azolla_objectives{status="NEW"} 0`, `azolla_jobs{status="QUEUED"} 0`,
		`azolla_claim_acquisitions_total{outcome="acquired",resource_type="POLLER"}`, "temporal_worker_start_total"}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, metrics, err := httpGet(base + "/metrics")
		require.NoError(c, err)
		for _, series := range want {
			require.Contains(c, metrics, series)
		}
	}, 60*time.Second, 500*time.Millisecond, "metrics lack a series")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("worker exited %d after SIGTERM; stderr:\n%s", ee.ExitCode(), stderr.String())
		}
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatalf("worker still running 20s (its grace period) after SIGTERM; stderr:\n%s", stderr.String())
	}
	require.Contains(t, stderr.String(), "worker stopping")
}

func TestSecondSignal_ExitsAtOnceWhileStopping(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", "stuck-stopping")
	cmd.Env = []string{helperEnv + "=1"}
	var stderr proctest.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Before its handler is in place a signal would kill the helper.
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "waiting for a signal") },
		10*time.Second, 20*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "stopping") },
		10*time.Second, 20*time.Millisecond)
	// Not a wait for readiness (the watch is armed before "waiting for a
	// signal"): a window in which an exit on the first signal would show.
	select {
	case err := <-exited:
		t.Fatalf("exited on the first signal: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		require.Equal(t, forceExitCode, ee.ExitCode(), stderr.String())
		require.Contains(t, stderr.String(), "second signal")
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10s after the second signal")
	}
}
