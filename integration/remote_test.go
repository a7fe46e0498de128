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

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream/redistest"
	"github.com/azolla/azolla/workflows"
)

// The remote tests run `azolla dev` (its embedded control plane, the
// database transport unless said otherwise) with remote-worker processes of
// the azolla binary, as a user would.

// remoteEnv routes diazotrophs to remote workers with leases short enough
// for a test: a dead worker's job is requeued within a few seconds.
func remoteEnv(diazotrophs string) []string {
	return []string{"AZOLLA_CONTROL_PLANE_REMOTE_DIAZOTROPHS=" + diazotrophs,
		"AZOLLA_CONTROL_PLANE_LEASE_TTL=3s", "AZOLLA_CONTROL_PLANE_HEARTBEAT_INTERVAL=1s",
		"AZOLLA_CONTROL_PLANE_REAPER_INTERVAL=300ms"}
}

// remoteWorker starts `azolla remote-worker` named name against d's
// control plane, on its own data dir, with env added. It is killed with
// the test.
func (d *devProc) remoteWorker(t *testing.T, name string, env ...string) *exec.Cmd {
	t.Helper()
	return d.startRemoteWorker(t, name, t.TempDir(), env...)
}

// startRemoteWorker is remoteWorker on data dir dir.
func (d *devProc) startRemoteWorker(t *testing.T, name, dir string, env ...string) *exec.Cmd {
	t.Helper()
	// As azolla dev prints it: its control plane, on loopback, takes no
	// token.
	cmd := exec.Command(azollaBin, "remote-worker", "--control-plane", "http://"+d.controlPlane,
		"--worker-id", name, "--max-wait", "2s")
	cmd.Env = append(append(os.Environ(), "AZOLLA_DATA_DIR="+dir, "AZOLLA_LOG_LEVEL=warn"), env...)
	return startLogged(t, "remote worker "+name, cmd)
}

// startLogged starts cmd, killed with the test, whose output the test
// logs under name if it fails.
func startLogged(t *testing.T, name string, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	out := &proctest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s:\n%s", name, out.String())
		}
	})
	return cmd
}

// approve creates objective id through d's store and lifecycle and
// approves it.
func (d *devProc) approve(t *testing.T, id string, mutate ...func(*domain.Objective)) {
	t.Helper()
	ctx := context.Background()
	o := &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "Remote " + id,
		AcceptanceCriteria: []string{"it runs on a remote worker"}, Status: domain.StatusNew, Urgency: "NORMAL"}
	for _, m := range mutate {
		m(o)
	}
	_, err := d.starter.Create(ctx, o)
	require.NoError(t, err)
	_, err = d.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
}

// waitStep waits until objective id's lifecycle reaches step.
func (d *devProc) waitStep(t *testing.T, id, step string) workflows.State {
	t.Helper()
	var st workflows.State
	require.Eventually(t, func() bool {
		var err error
		st, err = d.starter.State(context.Background(), id)
		return err == nil && st.Step == step
	}, 2*time.Minute, 100*time.Millisecond, "objective %s never reached %s (last state %+v)", id, step, &st)
	return st
}

// job returns the job of objective id's first workorder and its attempts.
func (d *devProc) job(t *testing.T, id string) (*domain.Job, []*domain.JobAttempt) {
	t.Helper()
	ctx := context.Background()
	j, err := d.store.GetJobByWorkOrder(ctx, "wo-"+id+"-1")
	require.NoError(t, err)
	attempts, err := d.store.ListJobAttempts(ctx, j.JobID)
	require.NoError(t, err)
	return j, attempts
}

// requireAuditClean runs verify's rules, the job rules included, on d's
// store at a moment when nothing runs.
func (d *devProc) requireAuditClean(t *testing.T) {
	t.Helper()
	rep, err := audit.Run(context.Background(), d.store, time.Now())
	require.NoError(t, err)
	require.Empty(t, rep.Violations)
}

func TestRemote_TwoRemoteWorkersTakeTenPatchObjectivesToDone(t *testing.T) {
	t.Parallel()
	d := startDev(t, remoteEnv("PATCH_DIAZOTROPH")...)
	d.remoteWorker(t, "remote-a")
	d.remoteWorker(t, "remote-b")
	repo := sampleRepo(t)
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = uniqueID(fmt.Sprintf("remote%d", i))
		d.approve(t, ids[i], patchObjective(repo))
	}
	workers := map[string]int{}
	for _, id := range ids {
		st := d.waitStep(t, id, workflows.StepDone)
		require.Equal(t, domain.GatePass, st.GateResult, "%s: %s", id, st.GateReason)
		j, attempts := d.job(t, id)
		require.Equal(t, domain.JobSucceeded, j.Status)
		require.Len(t, attempts, 1)
		require.Equal(t, domain.AttemptSucceeded, attempts[0].Status)
		workers[attempts[0].WorkerID]++
		b, err := d.store.GetOutputBundle(context.Background(), "wo-"+id+"-1")
		require.NoError(t, err)
		require.Equal(t, domain.RunnerOK, b.RunnerStatus)
		require.Contains(t, b.Content, "+hello again")
	}
	t.Logf("jobs per remote worker: %v", workers)
	d.requireAuditClean(t)
}

func TestRemote_WorkerKilledMidJobIsRequeuedAndCompletedByAnother(t *testing.T) {
	t.Parallel()
	d := startDev(t, remoteEnv("COMMAND_DIAZOTROPH")...)
	dir := t.TempDir()
	starts, pgids := filepath.Join(dir, "starts"), filepath.Join(dir, "pgids")
	t.Cleanup(func() { proctest.KillGroups(pgids) })
	// The first worker's command notes that it started and hangs; the
	// second's finishes at once.
	hang := fmt.Sprintf(`echo "$AZOLLA_WORK_ORDER_ID" >> %q; echo $$ >> %q; sleep 600`, starts, pgids)
	// Unconfined: the test kills the orphaned command by the process group
	// it noted, a pid a sandbox's own PID namespace would not show.
	first := d.remoteWorker(t, "remote-first", "AZOLLA_DIAZOTROPH_COMMAND_RUN="+hang, "AZOLLA_EXECUTOR_SANDBOX=none")
	id := uniqueID("remotekill")
	d.approve(t, id)
	require.Eventually(t, func() bool { return proctest.CountLines(starts) == 1 }, time.Minute, 50*time.Millisecond,
		"the first remote worker starts the job")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	proctest.KillGroups(pgids)

	d.remoteWorker(t, "remote-second", `AZOLLA_DIAZOTROPH_COMMAND_RUN=echo "finished $AZOLLA_WORK_ORDER_ID"`)
	st := d.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, st.GateResult, st.GateReason)
	j, attempts := d.job(t, id)
	require.Equal(t, domain.JobSucceeded, j.Status)
	require.Len(t, attempts, 2)
	require.Equal(t, "remote-first", attempts[0].WorkerID)
	require.Equal(t, domain.AttemptExpired, attempts[0].Status)
	require.Equal(t, "remote-second", attempts[1].WorkerID)
	require.Equal(t, domain.AttemptSucceeded, attempts[1].Status)
	out, err := d.store.GetOutputBundle(context.Background(), "wo-"+id+"-1")
	require.NoError(t, err)
	require.Equal(t, "finished wo-"+id+"-1\n", out.Content)
	rr, err := d.store.GetRunRecord(context.Background(), "wo-"+id+"-1")
	require.NoError(t, err)
	require.Equal(t, domain.GatePass, rr.GateResult)
	d.requireAuditClean(t)
}

func TestRemote_MaxAttemptsDeadLetterAndTheGateFails(t *testing.T) {
	t.Parallel()
	d := startDev(t, append(remoteEnv("COMMAND_DIAZOTROPH"), "AZOLLA_CONTROL_PLANE_MAX_ATTEMPTS=2")...)
	// The remote worker's command cannot start (its working directory would
	// be under a file): every attempt fails, retryably.
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	d.remoteWorker(t, "remote-failing", "AZOLLA_DIAZOTROPH_COMMAND_DIR="+filepath.Join(file, "work"))
	id := uniqueID("remotedlq")
	d.approve(t, id)
	st := d.waitStep(t, id, workflows.StepAwaitingRetry)
	require.Equal(t, domain.GateFail, st.GateResult)
	require.Contains(t, st.GateReason, domain.JobDeadLettered)
	j, attempts := d.job(t, id)
	require.Equal(t, domain.JobDeadLettered, j.Status)
	require.Equal(t, 2, j.AttemptCount)
	require.Len(t, attempts, 2)
	for _, a := range attempts {
		require.Equal(t, domain.AttemptFailed, a.Status)
	}
	pauses, err := d.store.ListPauseStates(context.Background(), id)
	require.NoError(t, err)
	require.NotEmpty(t, pauses)
	require.Equal(t, domain.PauseGateFailed, pauses[len(pauses)-1].Reason)
	d.requireAuditClean(t)
}

// redisFlushDB is the Redis logical database TestRemote_RedisFlushed...
// owns: it flushes it.
const redisFlushDB = 12

func TestRemote_RedisFlushedMidFlightLosesNoJob(t *testing.T) {
	t.Parallel()
	url := redistest.URLWithDB(t, redisFlushDB)
	rdb := redis.NewClient(mustParseRedisURL(t, url))
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	require.NoError(t, rdb.FlushDB(ctx).Err())
	d := startDev(t, append(remoteEnv("COMMAND_DIAZOTROPH"), "AZOLLA_CONTROL_PLANE_REDIS_URL="+url)...)

	// No remote worker yet: the job waits, its message in the stream.
	id := uniqueID("remoteflush")
	d.approve(t, id)
	var queued *domain.Job
	require.Eventually(t, func() bool {
		j, err := d.store.GetJobByWorkOrder(ctx, "wo-"+id+"-1")
		queued = j
		return err == nil && j.Status == domain.JobQueued && j.MessageID != ""
	}, time.Minute, 50*time.Millisecond, "the job is enqueued on Redis")
	n, err := rdb.XLen(ctx, "azolla:stream:command").Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "one message on the stream")

	// Redis loses everything, consumer group included.
	require.NoError(t, rdb.FlushDB(ctx).Err())
	d.remoteWorker(t, "remote-after-flush", `AZOLLA_DIAZOTROPH_COMMAND_RUN=echo "survived $AZOLLA_WORK_ORDER_ID"`)
	st := d.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, st.GateResult, st.GateReason)
	j, attempts := d.job(t, id)
	require.Equal(t, queued.JobID, j.JobID, "the same job, not a second one")
	require.Equal(t, domain.JobSucceeded, j.Status)
	require.Len(t, attempts, 1)
	require.NotEqual(t, queued.MessageID, attempts[0].MessageID, "claimed from the message the reaper wrote again")
	out, err := d.store.GetOutputBundle(ctx, "wo-"+id+"-1")
	require.NoError(t, err)
	require.Equal(t, "survived wo-"+id+"-1\n", out.Content)
	d.requireAuditClean(t)
}

func mustParseRedisURL(t *testing.T, url string) *redis.Options {
	t.Helper()
	o, err := redis.ParseURL(url)
	require.NoError(t, err)
	return o
}
