package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/dial"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workers"
	"github.com/azolla/azolla/workflows"
)

// bundle is one test's world.
type bundle struct {
	cfg     config.Config
	store   store.Store
	client  client.Client
	starter *starter.Starter
	// env is added to the environment of the azolla processes the test
	// runs (workerEnv).
	env []string
	// environ is added to the in-process worker's (setupOptions.environ).
	environ []string
	// intake wakes the in-process worker's forge intake, as a webhook
	// delivery does.
	intake *workers.IntakeWakeup
	// controlPlane, when set, is what the in-process workers enqueue
	// remote jobs with (else each opens its own).
	controlPlane *controlplane.Service
}

// setupOptions tune a test's configuration.
type setupOptions struct {
	command  string        // COMMAND_DIAZOTROPH's command line
	leaseTTL time.Duration // claim lease and Run heartbeat timeout
	noWorker bool          // start no in-process worker
	patch    func(*config.PatchConfig)
	// configure changes the rest of the configuration, before it is
	// validated.
	configure func(*config.Config)
	// environ are variables the in-process worker has besides the test
	// process's: where its setups fetch from (a local module proxy).
	environ []string
}

func setup(t testing.TB, o setupOptions) *bundle {
	t.Helper()
	dir := t.TempDir()
	cfg := config.DefaultFor(func(string) string { return "" })
	cfg.DataDir = dir
	cfg.Temporal.Address = server.FrontendAddress()
	cfg.Temporal.TaskQueue = "it-" + randomHex(6)
	cfg.Claim.LeaseTTL = 5 * time.Second
	if o.leaseTTL > 0 {
		cfg.Claim.LeaseTTL = o.leaseTTL
	}
	cfg.Lifecycle.Budget = 30 * time.Second
	cfg.Lifecycle.PollInterval = 200 * time.Millisecond
	// The worlds' candidates run side by side, as their tests expect,
	// whatever the machine's CPU count; run slots have tests of their own
	// (slots_test.go).
	cfg.Worker.MaxRuns = 8
	if o.command != "" {
		cfg.Diazotroph.Command.Run = o.command
	}
	if o.patch != nil {
		o.patch(&cfg.Patch)
	}
	if o.configure != nil {
		o.configure(&cfg)
	}
	require.NoError(t, cfg.Validate())

	st, err := dial.Open(context.Background(), dial.Config{Driver: config.DriverSQLite, SQLitePath: cfg.SQLitePath()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	_, err = st.Migrate(context.Background())
	require.NoError(t, err)

	c := dialClient(t)
	b := &bundle{cfg: cfg, store: st, client: c,
		starter: &starter.Starter{Client: c, Store: st, TaskQueue: cfg.Temporal.TaskQueue},
		intake:  &workers.IntakeWakeup{}}
	b.environ = o.environ
	if !o.noWorker {
		b.startWorker(t, "in-process")
	}
	return b
}

// startWorker runs a lifecycle worker (with the polling bridge) in this
// process until the test ends.
func (b *bundle) startWorker(t testing.TB, identity string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// The worker's sandbox as NewSandbox builds it, but for the worker's
	// environment (the test's, and setupOptions.environ) and the relay of
	// allowlist runs: this process is no azolla binary, azollaBin is.
	box, err := sandbox.New(sandbox.Options{Mode: sandbox.Mode(b.cfg.Executor.Sandbox), Bwrap: b.cfg.Executor.Bwrap,
		Limits: b.cfg.Executor.Limits(), Hide: b.cfg.HiddenPaths(), RunsDir: b.cfg.RunsDir(),
		Environ: append(os.Environ(), b.environ...), Relay: azollaBin})
	require.NoError(t, err)
	t.Cleanup(func() { _ = box.Close() })
	go func() {
		done <- workers.Run(ctx, workers.Options{Config: b.cfg, Client: b.client, Store: b.store,
			Log:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
			Identity: identity, Sandbox: box, IntakeWakeup: b.intake, ControlPlane: b.controlPlane})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// create stores an objective and starts its lifecycle.
func (b *bundle) create(t testing.TB, id string, mutate ...func(*domain.Objective)) *domain.Objective {
	t.Helper()
	o := &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "Integration objective " + id,
		AcceptanceCriteria: []string{"it runs"}, Status: domain.StatusNew, Urgency: "NORMAL"}
	for _, m := range mutate {
		m(o)
	}
	_, err := b.starter.Create(context.Background(), o)
	require.NoError(t, err)
	return o
}

// waitStep polls the lifecycle until it reaches step, for up to 90
// seconds.
func (b *bundle) waitStep(t testing.TB, id, step string) workflows.State {
	t.Helper()
	return b.waitStepWithin(t, id, step, 90*time.Second)
}

// waitStepWithin is waitStep for up to bound: longer than any step the
// lifecycle may take on its way, so that only a lifecycle that is stuck
// fails the wait.
func (b *bundle) waitStepWithin(t testing.TB, id, step string, bound time.Duration) workflows.State {
	t.Helper()
	var st workflows.State
	require.Eventually(t, func() bool {
		var err error
		st, err = b.starter.State(context.Background(), id)
		return err == nil && st.Step == step
	}, bound, 100*time.Millisecond, "objective %s never reached %s (last state %+v)", id, step, &st)
	return st
}

// requireAuditClean runs azolla verify's audit on the store.
func (b *bundle) requireAuditClean(t testing.TB) {
	t.Helper()
	rep, err := audit.Run(context.Background(), b.store, time.Now())
	require.NoError(t, err)
	require.Empty(t, rep.Violations)
}

// requireVerifyClean runs `azolla verify` with env and requires it to
// pass.
func requireVerifyClean(t testing.TB, env []string) {
	t.Helper()
	verify := exec.Command(azollaBin, "verify")
	verify.Env = env
	out, err := verify.CombinedOutput()
	require.NoError(t, err, "azolla verify: %s", out)
}

// counts returns how many bundles and run records the objective has.
func (b *bundle) counts(t testing.TB, objectiveID string) (workOrders, bundles, runRecords int) {
	t.Helper()
	ctx := context.Background()
	wos, err := b.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: objectiveID})
	require.NoError(t, err)
	for _, w := range wos {
		if _, err := b.store.GetOutputBundle(ctx, w.WorkOrderID); err == nil {
			bundles++
		}
		if _, err := b.store.GetRunRecord(ctx, w.WorkOrderID); err == nil {
			runRecords++
		}
	}
	return len(wos), bundles, runRecords
}

// uniqueID makes an objective id unique on the shared server, so the tests
// can run again (-count) against it.
func uniqueID(name string) string { return name + "-" + randomHex(3) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// quietSDKLogger drops the SDK's logs.
type quietSDKLogger struct{}

func (quietSDKLogger) Debug(string, ...any) {}
func (quietSDKLogger) Info(string, ...any)  {}
func (quietSDKLogger) Warn(string, ...any)  {}
func (quietSDKLogger) Error(string, ...any) {}
