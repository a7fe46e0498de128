package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// remoteWorkerWith starts `azolla remote-worker` named name against d's
// control plane on a data dir holding yaml as its configuration file
// (patch.repositories is a file-only key). It is killed with the test.
func (d *devProc) remoteWorkerWith(t *testing.T, name, yaml string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "azolla.yaml"), []byte(yaml), 0o600))
	return d.startRemoteWorker(t, name, dir)
}

// candidateWorker is a remote worker's configuration for these tests:
// agent is its command generator, and repo's candidates are gated by
// valueBuilds and valueIs42. An unconfined worker runs the agent outside
// the sandbox.
func candidateWorker(agent, repo string, unconfined bool) string {
	yaml := ""
	if unconfined {
		yaml = "executor:\n  sandbox: none\n"
	}
	return yaml + fmt.Sprintf("patch:\n  command:\n    run: %q\n  repositories:\n    - repository: %q\n      gate_commands: [%q, %q]\n",
		agent, repo, valueBuilds, valueIs42)
}

// Best-of-N with PATCH_DIAZOTROPH routed to one remote worker: each of
// the three candidates is a control-plane job of its own, run by the
// remote worker with its generator and gate commands; the local worker
// chooses candidate 2, the only one to pass both gate commands, and
// delivers it from its recorded patch. One bundle, three candidate
// records, three SUCCEEDED candidate jobs, and verify is clean.
func TestRemote_BestOfNCandidatesRunOnARemoteWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := valueRepo(t)
	agent := `case "$AZOLLA_CANDIDATE" in
1) echo 41 > value.txt ;;
2) echo 42 > value.txt ;;
3) echo 'forty-two(' > value.txt ;;
*) echo "no candidate number: $AZOLLA_CANDIDATE" >&2; exit 1 ;;
esac`
	d := startDev(t, append(remoteEnv("PATCH_DIAZOTROPH"), "AZOLLA_PATCH_EARLY_STOP=false")...)
	d.remoteWorkerWith(t, "remote-bestofn", candidateWorker(agent, repo, false))
	id := uniqueID("remotebestofn")
	d.logJobsIfFailed(t, "wo-"+id+"-1")
	d.approve(t, id, bestOfN(repo, 3))
	st := d.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, st.GateResult, st.GateReason)

	wo := "wo-" + id + "-1"
	cands, err := d.store.ListCandidates(ctx, wo)
	require.NoError(t, err)
	require.Len(t, cands, 3, "one record per candidate")
	for i, want := range []struct {
		passed []bool
		chosen bool
	}{{[]bool{true, false}, false}, {[]bool{true, true}, true}, {[]bool{false, false}, false}} {
		c := cands[i]
		require.Equal(t, i+1, c.Attempt)
		require.Equal(t, domain.CandidateDone, c.Status, "candidate %d: %s", c.Attempt, c.Why)
		require.Equal(t, want.passed, gatePassed(c), "candidate %d's gate results, from the remote worker", c.Attempt)
		require.Equal(t, want.chosen, c.Chosen, "candidate %d", c.Attempt)
	}

	jobs, err := d.store.ListJobs(ctx, store.ListJobsParams{WorkOrderID: wo})
	require.NoError(t, err)
	require.Len(t, jobs, 3, "a job per candidate, none for the workorder itself")
	seen := map[int]bool{}
	for _, j := range jobs {
		require.Equal(t, domain.JobSucceeded, j.Status, "candidate %d's job", j.Candidate)
		attempts, err := d.store.ListJobAttempts(ctx, j.JobID)
		require.NoError(t, err)
		require.Len(t, attempts, 1)
		require.Equal(t, "remote-bestofn", attempts[0].WorkerID)
		seen[j.Candidate] = true
		c, err := d.store.GetClaim(ctx, domain.ResourceCandidate, fmt.Sprintf("%s-c%d", wo, j.Candidate))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("remote:%s/1", j.JobID), c.OwnerID, "held for the remote worker")
		require.NotNil(t, c.ReleasedAt)
	}
	require.Equal(t, map[int]bool{1: true, 2: true, 3: true}, seen)

	b, err := d.store.GetOutputBundle(ctx, wo)
	require.NoError(t, err)
	require.Equal(t, domain.RunnerOK, b.RunnerStatus, b.Notes)
	require.Equal(t, cands[1].Patch, b.Content, "delivered locally from candidate 2's recorded patch")
	require.Contains(t, b.Content, "+42")
	d.requireAuditClean(t)
	requireVerifyClean(t, append(os.Environ(), "AZOLLA_DATA_DIR="+d.dir))
}

// logJobsIfFailed logs, when the test has failed, what the store holds of
// workorder wo's candidates and jobs, and azolla dev's output.
func (d *devProc) logJobsIfFailed(t *testing.T, wo string) {
	t.Cleanup(func() {
		if t.Failed() {
			d.logJobs(t, wo)
		}
	})
}

func (d *devProc) logJobs(t *testing.T, wo string) {
	ctx := context.Background()
	cands, _ := d.store.ListCandidates(ctx, wo)
	for _, c := range cands {
		t.Logf("candidate %d: %s %s", c.Attempt, c.Status, c.Why)
	}
	jobs, _ := d.store.ListJobs(ctx, store.ListJobsParams{WorkOrderID: wo})
	for _, j := range jobs {
		t.Logf("job %s candidate %d: %s attempts %d error %+v", j.JobID, j.Candidate, j.Status, j.AttemptCount, j.Error)
	}
	t.Logf("azolla dev:\n%s", d.out.String())
}

// A remote worker SIGKILLed in the middle of a candidate loses that
// candidate's attempt only: once its lease lapses the job is requeued and
// another remote worker runs it; the other candidates' jobs ran once, and
// the store holds three candidate records, none duplicated, one chosen.
func TestRemote_BestOfNWorkerKilledMidCandidateLosesOnlyThatAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := valueRepo(t)
	dir := t.TempDir()
	starts, pgids := filepath.Join(dir, "starts"), filepath.Join(dir, "pgids")
	t.Cleanup(func() { proctest.KillGroups(pgids) })
	// Unconfined: the test kills the orphaned agent by the process group
	// it noted, which a sandbox's PID namespace would hide.
	worker := func(agent string) string { return candidateWorker(agent, repo, true) }
	d := startDev(t, append(remoteEnv("PATCH_DIAZOTROPH"), "AZOLLA_PATCH_EARLY_STOP=false")...)
	first := d.remoteWorkerWith(t, "remote-first",
		worker(fmt.Sprintf(`echo "$AZOLLA_CANDIDATE" >> %q; echo $$ >> %q; sleep 600`, starts, pgids)))
	id := uniqueID("remotebestofnkill")
	wo := "wo-" + id + "-1"
	d.logJobsIfFailed(t, wo)
	d.approve(t, id, bestOfN(repo, 3))
	require.Eventually(t, func() bool { return proctest.CountLines(starts) == 1 }, time.Minute, 50*time.Millisecond,
		"the first remote worker starts a candidate")
	killed, err := os.ReadFile(starts)
	require.NoError(t, err)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	proctest.KillGroups(pgids)

	d.remoteWorkerWith(t, "remote-second", worker(`case "$AZOLLA_CANDIDATE" in
1) echo 41 > value.txt ;;
2) echo 42 > value.txt ;;
*) echo 'forty-two(' > value.txt ;;
esac`))
	st := d.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, st.GateResult, st.GateReason)

	cands, err := d.store.ListCandidates(ctx, wo)
	require.NoError(t, err)
	require.Len(t, cands, 3, "one record per candidate, none duplicated")
	for _, c := range cands {
		require.Equal(t, domain.CandidateDone, c.Status, "candidate %d: %s", c.Attempt, c.Why)
		require.Equal(t, c.Attempt == 2, c.Chosen, "candidate %d", c.Attempt)
	}
	jobs, err := d.store.ListJobs(ctx, store.ListJobsParams{WorkOrderID: wo})
	require.NoError(t, err)
	require.Len(t, jobs, 3)
	for _, j := range jobs {
		require.Equal(t, domain.JobSucceeded, j.Status)
		attempts, err := d.store.ListJobAttempts(ctx, j.JobID)
		require.NoError(t, err)
		if fmt.Sprint(j.Candidate)+"\n" == string(killed) {
			require.Len(t, attempts, 2, "the killed candidate's attempt is lost and run again")
			require.Equal(t, "remote-first", attempts[0].WorkerID)
			require.Equal(t, domain.AttemptExpired, attempts[0].Status)
			require.Equal(t, "remote-second", attempts[1].WorkerID)
			require.Equal(t, domain.AttemptSucceeded, attempts[1].Status)
			continue
		}
		require.Len(t, attempts, 1, "candidate %d ran once", j.Candidate)
		require.Equal(t, "remote-second", attempts[0].WorkerID)
	}
	b, err := d.store.GetOutputBundle(ctx, wo)
	require.NoError(t, err)
	require.Equal(t, cands[1].Patch, b.Content)
	d.requireAuditClean(t)
}

// With early stop and three remote workers, candidate 1 passes every gate
// command while candidates 2 and 3 sleep on the other two: the lifecycle
// reaches DONE with candidate 1, 2 and 3 are recorded CANCELLED, their
// workers are refused at their next heartbeat and kill their agents, and
// their jobs are dead-lettered as gone, never run again, writing nothing.
func TestRemote_BestOfNEarlyStopCancelsTheRemoteCandidates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := valueRepo(t)
	shared := t.TempDir()
	nap := fmt.Sprint(600 + time.Now().UnixNano()%100000)
	agent := fmt.Sprintf(`case "$AZOLLA_CANDIDATE" in
1) while [ ! -e %[1]q/asleep-2 ] || [ ! -e %[1]q/asleep-3 ]; do sleep 0.05; done
   echo 42 > value.txt ;;
*) echo "$AZOLLA_CANDIDATE" > value.txt; touch %[1]q/asleep-$AZOLLA_CANDIDATE; exec sleep %[2]s ;;
esac`, shared, nap)
	yaml := candidateWorker(agent, repo, true)
	d := startDev(t, append(remoteEnv("PATCH_DIAZOTROPH"), "AZOLLA_PATCH_EARLY_STOP=true")...)
	for _, name := range []string{"remote-a", "remote-b", "remote-c"} {
		d.remoteWorkerWith(t, name, yaml)
	}
	id := uniqueID("remoteearlystop")
	wo := "wo-" + id + "-1"
	d.logJobsIfFailed(t, wo)
	d.approve(t, id, bestOfN(repo, 3))
	st := d.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, st.GateResult, st.GateReason)
	require.Eventually(t, func() bool { return len(processesRunning("sleep", nap)) == 0 }, time.Minute,
		50*time.Millisecond, "the cancelled candidates' agents are killed")

	cands, err := d.store.ListCandidates(ctx, wo)
	require.NoError(t, err)
	requireEarlyStopped(t, cands)
	jobOf := func(k int) *domain.Job {
		j, err := d.store.GetCandidateJob(ctx, wo, k)
		require.NoError(t, err)
		return j
	}
	require.Equal(t, domain.JobSucceeded, jobOf(1).Status)
	for _, k := range []int{2, 3} {
		require.Eventually(t, func() bool { return jobOf(k).Status == domain.JobDeadLettered }, time.Minute,
			50*time.Millisecond, "candidate %d's job is dead-lettered once its lease lapses", k)
		j := jobOf(k)
		require.Equal(t, controlplane.CodeRunGone, j.Error.Code)
		require.Equal(t, 1, j.AttemptCount, "never run again")
	}
	b, err := d.store.GetOutputBundle(ctx, wo)
	require.NoError(t, err)
	require.Equal(t, cands[0].Patch, b.Content)
	d.requireAuditClean(t)
}
