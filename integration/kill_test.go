package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/workflows"
)

// A worker process killed with SIGKILL in the middle of Run: once the
// heartbeat timeout (the lease) has passed, a second worker takes the
// workorder over and finishes it, and the store holds exactly one output
// bundle and one run record.
func TestKill_WorkerKilledMidRunIsTakenOver(t *testing.T) {
	t.Parallel()
	idKilled := uniqueID("killed")
	const lease = 3 * time.Second
	dir := t.TempDir()
	starts, pgids := filepath.Join(dir, "starts"), filepath.Join(dir, "pgids")
	// Each run notes that it started and its process group, then works for
	// a while, longer than the lease.
	command := fmt.Sprintf(`echo "$AZOLLA_WORK_ORDER_ID" >> %q; echo $$ >> %q; sleep 4; echo "finished $AZOLLA_WORK_ORDER_ID"`,
		starts, pgids)
	// Unconfined: the test kills the orphaned command by the process group
	// it noted, a pid a sandbox's own PID namespace would not show.
	b := setup(t, setupOptions{command: command, leaseTTL: lease, noWorker: true,
		configure: func(c *config.Config) { c.Executor.Sandbox = config.SandboxNone }})
	t.Cleanup(func() { proctest.KillGroups(pgids) })

	first := b.workerProcess(t, "first")
	ctx := context.Background()
	b.create(t, idKilled)
	_, err := b.starter.Decide(ctx, idKilled, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)

	require.Eventually(t, func() bool { return proctest.CountLines(starts) == 1 }, 60*time.Second, 50*time.Millisecond,
		"the first worker starts the run")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	proctest.KillGroups(pgids) // its orphaned command, so only the takeover can finish

	second := b.workerProcess(t, "second")
	st := b.waitStep(t, idKilled, workflows.StepDone)
	require.Equal(t, domain.GatePass, st.GateResult)
	require.Equal(t, 2, proctest.CountLines(starts), "the workorder ran again on the second worker")

	wos, bundles, records := b.counts(t, idKilled)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records}, "one workorder, one output bundle, one run record")
	out, err := b.store.GetOutputBundle(ctx, "wo-"+idKilled+"-1")
	require.NoError(t, err)
	require.Equal(t, "finished wo-"+idKilled+"-1\n", out.Content)
	claim, err := b.store.GetClaim(ctx, domain.ResourceWorkOrder, "wo-"+idKilled+"-1")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(claim.OwnerID, "second"), "the takeover holds the last claim, got %s", claim.OwnerID)
	require.NotNil(t, claim.ReleasedAt)

	requireVerifyClean(t, b.workerEnv())
	require.NoError(t, second.Process.Signal(syscall.SIGTERM))
	_ = second.Wait()
}

// workerEnv configures an azolla process like this test's world.
func (b *bundle) workerEnv() []string {
	env := append(os.Environ(),
		"AZOLLA_DATA_DIR="+b.cfg.DataDir,
		"AZOLLA_TEMPORAL_ADDRESS="+b.cfg.Temporal.Address,
		"AZOLLA_TEMPORAL_TASK_QUEUE="+b.cfg.Temporal.TaskQueue,
		"AZOLLA_CLAIM_LEASE_TTL="+b.cfg.Claim.LeaseTTL.String(),
		"AZOLLA_LIFECYCLE_POLL_INTERVAL=200ms",
		"AZOLLA_WORKER_MAX_RUNS="+strconv.Itoa(b.cfg.Worker.MaxRuns),
		"AZOLLA_DIAZOTROPH_COMMAND_RUN="+b.cfg.Diazotroph.Command.Run,
		"AZOLLA_EXECUTOR_SANDBOX="+b.cfg.Executor.Sandbox,
		"AZOLLA_LOG_LEVEL=warn")
	return append(env, b.env...)
}

// workerProcess starts `azolla worker` with args; name prefixes its
// identity.
func (b *bundle) workerProcess(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(azollaBin, append([]string{"worker", "--identity", name}, args...)...)
	cmd.Env = b.workerEnv()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}
