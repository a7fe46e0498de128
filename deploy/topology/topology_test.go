package topology

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/deploy/compose"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/dial"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// objectives is how many lifecycles the topology takes to DONE: half run a
// patch on the lifecycle workers, half a command on the remote worker.
const objectives = 20

// The production topology as processes: the Temporal server on PostgreSQL,
// azolla temporal setup and migrate, the control plane, two workers and a
// remote worker, each configured from its compose service. Twenty objectives
// go to DONE, ten run a patch locally and ten a command remotely
// (COMMAND_DIAZOTROPH is routed to remote workers, as REMOTE_DIAZOTROPHS
// routes it in compose), while one worker and then the control plane are
// SIGKILLed mid-run, with lifecycles waiting on remote jobs and a job
// running, and restarted; azolla verify then finds nothing wrong.
func TestTopology_TwentyObjectivesSurviveAWorkerAndTheControlPlaneKilled(t *testing.T) {
	enabled(t)
	begin := time.Now()
	c := startCluster(t, "COMMAND_DIAZOTROPH")
	t.Logf("built in %s; schema and Temporal server up in %s", binaries.duration.Round(time.Millisecond), c.started.Round(time.Millisecond))
	ctx := context.Background()
	dir := t.TempDir()
	dataDir := func(name string) string {
		d := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(d, 0o750))
		return d
	}

	// The one-shots, in compose's order.
	oneShots := time.Now()
	run(t, c.azolla, c.local.env(t, "temporal-setup", dataDir("temporal-setup"), nil), "temporal", "setup")
	run(t, c.azolla, c.local.env(t, "migrate", dataDir("migrate"), nil), "migrate")
	// As the compose file says: docker compose exec control-plane azolla
	// worker-token create NAME.
	token := strings.TrimSpace(run(t, c.azolla, c.local.env(t, "control-plane", dataDir("token"), nil), "worker-token", "create", "remote-1"))
	tokenFile := filepath.Join(dir, "remote-1.token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	t.Logf("temporal setup, migrate and worker-token create in %s", time.Since(oneShots).Round(time.Millisecond))

	// The test's own settings, on top of the file's (which they may not
	// override): leases short enough that a killed process's work is taken
	// over within seconds.
	starts, pgids := filepath.Join(dir, "starts"), filepath.Join(dir, "pgids")
	t.Cleanup(func() { proctest.KillGroups(pgids) })
	tuning := map[string]string{
		"AZOLLA_LOG_LEVEL":                        "warn",
		"AZOLLA_CLAIM_LEASE_TTL":                  "3s",
		"AZOLLA_LIFECYCLE_POLL_INTERVAL":          "200ms",
		"AZOLLA_CONTROL_PLANE_LEASE_TTL":          "3s",
		"AZOLLA_CONTROL_PLANE_HEARTBEAT_INTERVAL": "1s",
		"AZOLLA_CONTROL_PLANE_REAPER_INTERVAL":    "300ms",
	}
	cpEnv := c.local.env(t, "control-plane", dataDir("control-plane"), tuning)
	controlPlane := startProc(t, "control-plane", c.azolla, cpEnv, "control-plane", "--identity", "control-plane")
	waitReady(t, c.local.controlPlane, controlPlane)
	var workers []*proc
	for _, name := range []string{"worker-1", "worker-2"} {
		env := c.local.env(t, "worker", dataDir(name), tuning)
		w := startProc(t, name, c.azolla, env, "worker", "--identity", name)
		waitReady(t, envValue(env, opsAddress), w)
		workers = append(workers, w)
	}
	// A remote worker runs on another host, outside compose: it knows only
	// the control plane's URL (the port compose publishes) and its token.
	// Its command notes that it started and its process group, then takes
	// long enough for the kills below to land while jobs run. It runs
	// unconfined: the test kills the commands a killed worker orphaned by
	// the process groups they noted, pids a sandbox's own PID namespace
	// would not show (the workers' executors are sandboxed as configured).
	remoteEnv := c.local.env(t, "worker", dataDir("remote-1"), nil)
	remoteEnv = withoutKeys(remoteEnv, "AZOLLA_STORE_", "PGPASSWORD", "AZOLLA_TEMPORAL_", "AZOLLA_CONTROL_PLANE_REDIS_URL")
	remoteEnv = append(remoteEnv, "AZOLLA_LOG_LEVEL=warn", "AZOLLA_EXECUTOR_SANDBOX=none", "AZOLLA_DIAZOTROPH_COMMAND_RUN="+
		fmt.Sprintf(`echo "$AZOLLA_WORK_ORDER_ID" >> %q; echo $$ >> %q; sleep 3; echo "finished $AZOLLA_WORK_ORDER_ID"`, starts, pgids))
	remote := startProc(t, "remote-1", c.azolla, remoteEnv, "remote-worker",
		"--control-plane", "http://"+c.local.controlPlane, "--token-file", tokenFile, "--worker-id", "remote-1", "--max-wait", "2s")

	everyone := []*proc{c.server, controlPlane, workers[0], workers[1], remote}

	// The test's own view: the store and Temporal, as the control plane
	// sees them.
	cpCompose, err := compose.ServiceEnv(ctx, "control-plane", c.local.vars)
	require.NoError(t, err)
	namespace := cpCompose["AZOLLA_TEMPORAL_NAMESPACE"]
	require.NotEmpty(t, namespace)
	tc, err := client.Dial(client.Options{HostPort: envValue(cpEnv, "AZOLLA_TEMPORAL_ADDRESS"), Namespace: namespace,
		Logger: quietSDKLogger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	st, err := dial.Open(ctx, dial.Config{Driver: config.DriverPostgres, DSN: envValue(cpEnv, "AZOLLA_STORE_DSN")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	s := &starter.Starter{Client: tc, Store: st, TaskQueue: config.DefaultTaskQueue}

	repo := sampleRepo(t)
	suffix := randomHex(3)
	var local, remoteIDs []string
	lifecycles := time.Now()
	for i := range objectives {
		o := &domain.Objective{ObjectiveType: "TICKET", Status: domain.StatusNew, Urgency: "NORMAL"}
		if i%2 == 0 {
			o.ObjectiveID = fmt.Sprintf("local%02d-%s", i, suffix)
			o.AcceptanceCriteria = []string{"its patch runs on a lifecycle worker"}
			o.Repository, o.BaseBranch, o.Generator, o.Patch = repo, "main", config.GeneratorStatic, helloPatch
			local = append(local, o.ObjectiveID)
		} else {
			o.ObjectiveID = fmt.Sprintf("remote%02d-%s", i, suffix)
			o.AcceptanceCriteria = []string{"its command runs on the remote worker"}
			remoteIDs = append(remoteIDs, o.ObjectiveID)
		}
		o.Title = "Topology " + o.ObjectiveID
		_, err := s.Create(ctx, o)
		require.NoError(t, err)
		_, err = s.Decide(ctx, o.ObjectiveID, workflows.Approve, workflows.Decision{By: "topology"})
		require.NoError(t, err)
	}
	t.Logf("%d objectives created and approved in %s", objectives, time.Since(lifecycles).Round(time.Millisecond))

	all := append(append([]string{}, local...), remoteIDs...)

	// A lifecycle worker dies while lifecycles wait on remote jobs.
	waitFor(t, 2*time.Minute, "remote commands start", func() bool { return proctest.CountLines(starts) >= 1 }, everyone...)
	workers[0].kill(t)
	doneAtKill := done(st, all)
	t.Logf("worker-1 SIGKILLed with %d remote commands started, %d objectives done", proctest.CountLines(starts), doneAtKill)
	require.Less(t, doneAtKill, objectives, "the worker died mid-run, with lifecycles still to finish")
	workers[0].start(t)
	waitReady(t, envValue(workers[0].env, opsAddress), workers[0])

	// The control plane dies while the remote worker holds a job.
	waitFor(t, 2*time.Minute, "a remote job runs", func() bool { return remoteJobs(st, remoteIDs, domain.JobRunning) > 0 },
		everyone...)
	controlPlane.kill(t)
	succeededAtKill := remoteJobs(st, remoteIDs, domain.JobSucceeded)
	t.Logf("control plane SIGKILLed with %d remote jobs succeeded", succeededAtKill)
	require.Less(t, succeededAtKill, len(remoteIDs), "the control plane died with remote jobs still to finish")
	controlPlane.start(t)
	waitReady(t, c.local.controlPlane, controlPlane)
	waitFor(t, 5*time.Minute, fmt.Sprintf("all %d objectives DONE", objectives),
		func() bool { return done(st, all) == objectives }, everyone...)
	elapsed := time.Since(lifecycles)

	for _, id := range all {
		state, err := s.State(ctx, id)
		require.NoError(t, err)
		require.Equal(t, domain.GatePass, state.GateResult, "%s: %s", id, state.GateReason)
		wos, err := st.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
		require.NoError(t, err)
		require.Len(t, wos, 1, "%s: one workorder", id)
		_, err = st.GetOutputBundle(ctx, wos[0].WorkOrderID)
		require.NoError(t, err, "%s: its output bundle", id)
		_, err = st.GetRunRecord(ctx, wos[0].WorkOrderID)
		require.NoError(t, err, "%s: its run record", id)
	}
	for _, id := range remoteIDs {
		j, err := st.GetJobByWorkOrder(ctx, "wo-"+id+"-1")
		require.NoError(t, err)
		require.Equal(t, domain.JobSucceeded, j.Status, id)
		attempts, err := st.ListJobAttempts(ctx, j.JobID)
		require.NoError(t, err)
		require.Equal(t, "remote-1", attempts[len(attempts)-1].WorkerID, id)
	}
	for _, id := range local {
		_, err := st.GetJobByWorkOrder(ctx, "wo-"+id+"-1")
		require.Error(t, err, "%s ran locally: no remote job", id)
	}

	verify := run(t, c.azolla, c.local.env(t, "control-plane", dataDir("verify"), nil), "verify")
	t.Logf("azolla verify:\n%s", verify)
	t.Logf("%d lifecycles DONE in %s on the PostgreSQL-backed server, through a worker and a control-plane kill: %.2f lifecycles/s; %d remote command starts for %d remote objectives; whole topology run %s",
		objectives, elapsed.Round(time.Millisecond), float64(objectives)/elapsed.Seconds(), proctest.CountLines(starts), len(remoteIDs),
		time.Since(begin).Round(time.Millisecond))
}

// waitFor polls cond until it holds, failing when timeout passes first or
// when one of procs has exited (a SIGKILLed one is restarted before the
// next wait).
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool, procs ...*proc) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		for _, p := range procs {
			if p.exited() {
				t.Fatalf("waiting until %s: %s exited:\n%s", what, p.name, p.out.String())
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitReady waits until the /readyz of p, served at addr, answers 200.
func waitReady(t testing.TB, addr string, p *proc) {
	t.Helper()
	waitFor(t, time.Minute, p.name+" /readyz answers 200", func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, p)
}

// done counts the objectives the store holds as DONE: the lifecycle writes
// DONE last. (Asking the workflows would wait on a killed worker's queries.)
func done(st store.Store, ids []string) int {
	n := 0
	for _, id := range ids {
		o, err := st.GetObjective(context.Background(), id)
		if err == nil && o.Status == domain.StatusDone {
			n++
		}
	}
	return n
}

// remoteJobs counts the remote objectives whose job is in status.
func remoteJobs(st store.Store, ids []string, status string) int {
	n := 0
	for _, id := range ids {
		j, err := st.GetJobByWorkOrder(context.Background(), "wo-"+id+"-1")
		if err == nil && j.Status == status {
			n++
		}
	}
	return n
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

func withoutKeys(env []string, prefixes ...string) []string {
	var out []string
	for _, kv := range env {
		keep := true
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// sampleRepo is a git repository with one commit on main: hello.txt.
func sampleRepo(t testing.TB) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "app")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=Upstream", "-c", "user.email=up@example.com"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "hello.txt"), []byte("hello\n"), 0o644))
	git("add", "-A")
	git("commit", "-q", "-m", "initial")
	return repo
}

const helloPatch = `--- a/hello.txt
+++ b/hello.txt
@@ -1 +1,2 @@
 hello
+hello again
`
