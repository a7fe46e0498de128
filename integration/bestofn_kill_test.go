package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/workflows"
)

// A worker SIGKILLed while three candidates run: once their leases lapse,
// a second worker runs each again, and the store holds one workorder, one
// bundle, one run record and three candidate records, one of them chosen;
// azolla verify is clean.
func TestBestOfN_WorkerKilledDuringTheCandidates(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	dir := t.TempDir()
	starts, pgids := filepath.Join(dir, "starts"), filepath.Join(dir, "pgids")
	repo := valueRepo(t)
	agent := fmt.Sprintf(`echo "$AZOLLA_CANDIDATE" >> %q; echo $$ >> %q; sleep 4; echo 42 > value.txt`, starts, pgids)
	b := setup(t, setupOptions{leaseTTL: lease, noWorker: true,
		configure: func(c *config.Config) { c.Executor.Sandbox = config.SandboxNone }})
	t.Cleanup(func() { proctest.KillGroups(pgids) })
	// The worker processes read the patch settings from the data
	// directory's configuration file: repositories are file-only keys.
	yaml := fmt.Sprintf("patch:\n  early_stop: false\n  command:\n    run: %q\n  repositories:\n    - repository: %q\n      gate_commands: [\"grep -q 42 value.txt\"]\n",
		agent, repo)
	require.NoError(t, os.WriteFile(filepath.Join(b.cfg.DataDir, "azolla.yaml"), []byte(yaml), 0o600))

	first := b.workerProcess(t, "first")
	ctx := context.Background()
	id := uniqueID("bestofn-kill")
	b.create(t, id, bestOfN(repo, 3))
	_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return proctest.CountLines(starts) == 3 }, 60*time.Second, 50*time.Millisecond,
		"the first worker starts the three candidates")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	proctest.KillGroups(pgids) // the orphaned agents, so only the takeovers can finish

	second := b.workerProcess(t, "second")
	st := b.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, st.GateResult)
	require.GreaterOrEqual(t, proctest.CountLines(starts), 4, "candidates ran again on the second worker")

	wos, bundles, records := b.counts(t, id)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records}, "one workorder, one output bundle, one run record")
	cands, err := b.store.ListCandidates(ctx, b.onlyWorkOrder(t, id).WorkOrderID)
	require.NoError(t, err)
	require.Len(t, cands, 3, "one record per candidate, none duplicated")
	chosen := 0
	for _, c := range cands {
		require.Equal(t, domain.CandidateDone, c.Status, "candidate %d", c.Attempt)
		if c.Chosen {
			chosen++
		}
	}
	require.Equal(t, 1, chosen)

	requireVerifyClean(t, b.workerEnv())
	require.NoError(t, second.Process.Signal(syscall.SIGTERM))
	_ = second.Wait()
}
