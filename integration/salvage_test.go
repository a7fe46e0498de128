package integration

import (
	"context"
	"fmt"
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

// halvingAgent writes the first half of its change, notes that it started
// (and its process group), and sleeps; a run that finds the first half in
// its worktree writes the second and finishes.
func halvingAgent(starts, pgids string) string {
	return fmt.Sprintf(`if grep -q 'first half' README.md; then echo 'second half' >> README.md; exit 0; fi
echo 'first half' >> README.md; echo "$AZOLLA_WORK_ORDER_ID" >> %q; echo $$ >> %q; sleep 600`, starts, pgids)
}

// A worker SIGKILLed while its agent works: the worker that takes the
// workorder over on the same machine salvages what the agent had written,
// resumes from it and finishes; one bundle, whole, and verify is clean.
func TestSalvage_AWorkerKilledMidRunLosesNoneOfItsAgentsWork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	starts, pgids := filepath.Join(dir, "starts"), filepath.Join(dir, "pgids")
	t.Cleanup(func() { proctest.KillGroups(pgids) })
	repo := sampleRepo(t)
	// Unconfined: the test kills the orphaned agent by the process group
	// it noted, a pid a sandbox's own PID namespace would not show.
	b := setup(t, setupOptions{leaseTTL: 3 * time.Second, noWorker: true,
		configure: func(c *config.Config) { c.Executor.Sandbox = config.SandboxNone }})
	b.env = append(b.env, "AZOLLA_PATCH_COMMAND_RUN="+halvingAgent(starts, pgids))
	first := b.workerProcess(t, "first")
	ctx := context.Background()
	id := uniqueID("salvage")
	b.create(t, id, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = repo, "main", config.GeneratorCommand
	})
	_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return proctest.CountLines(starts) == 1 }, time.Minute, 50*time.Millisecond,
		"the first worker's agent writes its first half")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	proctest.KillGroups(pgids)

	b.workerProcess(t, "second")
	st := b.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, st.GateResult, st.GateReason)
	wos, bundles, records := b.counts(t, id)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records})
	out, err := b.store.GetOutputBundle(ctx, "wo-"+id+"-1")
	require.NoError(t, err)
	require.Contains(t, out.Content, "+first half", "the killed run's work")
	require.Contains(t, out.Content, "+second half")
	require.Contains(t, out.Notes, "Resumed the partial work refs/azolla/"+id+"/partial/wo-"+id+"-1")
	requireVerifyClean(t, b.workerEnv())
}

// The same for a remote worker SIGKILLed mid-job: the remote worker that
// takes the job over on the same machine (its data dir) salvages the
// agent's half.
func TestSalvage_ARemoteWorkerKilledMidJobLosesNoneOfItsAgentsWork(t *testing.T) {
	t.Parallel()
	d := startDev(t, remoteEnv("PATCH_DIAZOTROPH")...)
	dir := t.TempDir()
	starts, pgids := filepath.Join(dir, "starts"), filepath.Join(dir, "pgids")
	t.Cleanup(func() { proctest.KillGroups(pgids) })
	repo := sampleRepo(t)
	data := t.TempDir()
	env := []string{"AZOLLA_PATCH_COMMAND_RUN=" + halvingAgent(starts, pgids), "AZOLLA_EXECUTOR_SANDBOX=none"}
	first := d.startRemoteWorker(t, "remote-first", data, env...)
	id := uniqueID("remotesalvage")
	d.approve(t, id, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = repo, "main", config.GeneratorCommand
	})
	require.Eventually(t, func() bool { return proctest.CountLines(starts) == 1 }, time.Minute, 50*time.Millisecond,
		"the first remote worker's agent writes its first half")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	proctest.KillGroups(pgids)

	d.startRemoteWorker(t, "remote-second", data, env...)
	st := d.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, st.GateResult, st.GateReason)
	out, err := d.store.GetOutputBundle(context.Background(), "wo-"+id+"-1")
	require.NoError(t, err)
	require.Contains(t, out.Content, "+first half")
	require.Contains(t, out.Content, "+second half")
	require.Contains(t, out.Notes, "Resumed the partial work")
	d.requireAuditClean(t)
}
