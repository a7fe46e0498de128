package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// One repository with max_concurrent_runs 1, six objectives on it, two
// `azolla worker` processes on one store: never two of its agents alive
// at once (from the process table), the runs that wait say where they
// stand, and when the worker whose agent holds the slot is SIGKILLed, the
// slot is taken over once its lease lapses and the killed run is run
// again, not lost: every objective DONE with one bundle.
func TestLimits_ARepositoryLimitHoldsAcrossWorkersAndAKill(t *testing.T) {
	t.Parallel()
	l := newLimitedRepo(t, "azolla-limit")
	b := setup(t, setupOptions{leaseTTL: 3 * time.Second, noWorker: true, patch: func(p *config.PatchConfig) {
		p.Generator, p.Command.Run = config.GeneratorCommand, l.agent
		p.Repositories = []config.RepositoryConfig{{Repository: l.repo, MaxConcurrentRuns: 1}}
	}, configure: func(c *config.Config) { c.Executor.Sandbox = config.SandboxNone }})
	cfgFile := writeConfig(t, b)
	workers := map[string]*exec.Cmd{}
	for _, name := range []string{"first", "second"} {
		workers[name] = b.workerProcess(t, name, "--config", cfgFile)
	}

	peakAlive := sampleAlive(t, l.marker)
	ids := l.approve(t, b, "limit", 6)
	holder, waiting := l.firstRunAndQueue(t, b, ids)
	cli := func(args ...string) string {
		cmd := exec.Command(azollaBin, append(args, "--config", cfgFile)...)
		cmd.Env = b.workerEnv()
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	require.Contains(t, cli("objective", "show", waiting), "ahead; the repository's limit of 1 run(s) at once is reached)")
	require.Contains(t, cli("inbox"), "queued for a run slot under max_concurrent_runs")

	// Kill the worker whose agent holds the slot, and the agent with it
	// (unconfined, it outlives the worker).
	c, err := b.store.GetClaim(context.Background(), domain.ResourceWorkOrder, holder)
	require.NoError(t, err)
	victim, _, _ := strings.Cut(c.OwnerID, ":")
	require.Contains(t, workers, victim, "the workorder's claim names its worker: %s", c.OwnerID)
	require.NoError(t, workers[victim].Process.Signal(syscall.SIGKILL))
	_ = workers[victim].Wait()
	proctest.KillGroups(l.pgids)

	l.requireHeld(t, b, ids, holder, peakAlive)
	b.requireAuditClean(t)
	recordHistories(t, b, "slot_queued", waiting)
}

// A repository with max_concurrent_runs 1 whose runs all go to remote
// workers, on two `azolla worker` processes and a control plane: the run
// that enqueues a job hands its slot to the job, which the control plane
// holds with the job's lease until the job is settled. Both workers are
// SIGKILLed, and so is the remote worker running the first job: the
// slot stays with the job while the others queue, a new remote worker
// finishes it, and never two runs of the repository are alive at once.
func TestLimits_ARemoteRunKeepsItsSlotWhenItsWorkersDie(t *testing.T) {
	t.Parallel()
	l := newLimitedRepo(t, "azolla-remote-limit")
	b := setup(t, setupOptions{leaseTTL: 3 * time.Second, noWorker: true, patch: func(p *config.PatchConfig) {
		// Every run is remote: the remote workers are given the agent.
		p.Generator, p.Command.Run = config.GeneratorCommand, "false"
		p.Repositories = []config.RepositoryConfig{{Repository: l.repo, MaxConcurrentRuns: 1}}
	}, configure: func(c *config.Config) {
		c.Executor.Sandbox = config.SandboxNone
		c.ControlPlane.RemoteDiazotrophs = []string{diazotroph.PatchType}
	}})
	cfgFile := writeConfig(t, b)
	cpAddr := fmt.Sprintf("127.0.0.1:%d", freePort())
	b.env = append(b.env, "AZOLLA_CONTROL_PLANE_ADDRESS="+cpAddr, "AZOLLA_CONTROL_PLANE_LEASE_TTL=3s",
		"AZOLLA_CONTROL_PLANE_HEARTBEAT_INTERVAL=1s", "AZOLLA_CONTROL_PLANE_REAPER_INTERVAL=300ms", "AZOLLA_OPS_ADDRESS=")
	remote := func(name string) *exec.Cmd {
		cmd := exec.Command(azollaBin, "worker-token", "create", name, "--config", cfgFile)
		cmd.Env = b.workerEnv()
		token, err := cmd.Output()
		require.NoError(t, err, "azolla worker-token create")
		tokenFile := filepath.Join(t.TempDir(), "token")
		require.NoError(t, os.WriteFile(tokenFile, token, 0o600))
		cmd = exec.Command(azollaBin, "remote-worker", "--control-plane", "http://"+cpAddr, "--token-file", tokenFile,
			"--worker-id", name, "--max-wait", "2s")
		cmd.Env = append(os.Environ(), "AZOLLA_DATA_DIR="+t.TempDir(), "AZOLLA_LOG_LEVEL=warn",
			"AZOLLA_EXECUTOR_SANDBOX=none", "AZOLLA_PATCH_COMMAND_RUN="+l.agent)
		return startLogged(t, "remote worker "+name, cmd)
	}
	cp := exec.Command(azollaBin, "control-plane", "--identity", "cp", "--config", cfgFile)
	cp.Env = b.workerEnv()
	startLogged(t, "control plane", cp)
	workers := []*exec.Cmd{b.workerProcess(t, "first", "--config", cfgFile), b.workerProcess(t, "second", "--config", cfgFile)}
	firstRemote := remote("remote-first")

	peakAlive := sampleAlive(t, l.marker)
	ids := l.approve(t, b, "rlimit", 5)
	holder, _ := l.firstRunAndQueue(t, b, ids)

	// Every local worker dies, and the remote worker running the job with
	// its agent.
	for _, w := range append(workers, firstRemote) {
		require.NoError(t, w.Process.Signal(syscall.SIGKILL))
		_ = w.Wait()
	}
	proctest.KillGroups(l.pgids)

	// Once the dead workers' own claims (their queued runs' places) have
	// lapsed and the job's attempt has expired, the slot is still the
	// job's: nothing of a dead worker held it.
	ctx := context.Background()
	require.Eventually(t, func() bool {
		waits := liveClaims(t, b, domain.ResourceRunSlotWait)
		j, err := b.store.GetJobByWorkOrder(ctx, holder)
		require.NoError(t, err)
		attempts, err := b.store.ListJobAttempts(ctx, j.JobID)
		require.NoError(t, err)
		return len(waits) == 0 && len(attempts) == 1 && attempts[0].Status == domain.AttemptExpired &&
			j.Status == domain.JobQueued
	}, time.Minute, 50*time.Millisecond, "the dead workers' places lapse and the job is requeued")
	slots := liveClaims(t, b, domain.ResourceRunSlot)
	require.Len(t, slots, 1, "the job's run slot is live")
	c := slots[0]
	require.True(t, strings.HasSuffix(c.OwnerID, "/"+holder), "the slot is the job's run's: %s", c.OwnerID)
	j, err := b.store.GetJobByWorkOrder(ctx, holder)
	require.NoError(t, err)
	require.Equal(t, []domain.SlotRef{{ResourceID: c.ResourceID, OwnerID: c.OwnerID}}, j.RunSlots)

	b.workerProcess(t, "third", "--config", cfgFile)
	remote("remote-second")
	l.requireHeld(t, b, ids, holder, peakAlive)
	require.Empty(t, liveClaims(t, b, domain.ResourceRunSlot), "every slot is given up")
	b.requireAuditClean(t)
}

// limitedRepo is a repository limited to one run at once, and the agent
// its tests run: the first run to start holds its slot until it is killed,
// the others work briefly. Each run notes its workorder (starts) and its
// process group (pgids); its sleep carries marker on its command line,
// for the process table.
type limitedRepo struct {
	repo, agent, marker, starts, pgids string
}

func newLimitedRepo(t *testing.T, marker string) *limitedRepo {
	dir := t.TempDir()
	l := &limitedRepo{repo: sampleRepo(t), marker: fmt.Sprintf("%s-%d", marker, time.Now().UnixNano()),
		starts: filepath.Join(dir, "starts"), pgids: filepath.Join(dir, "pgids")}
	l.agent = fmt.Sprintf(`echo "$AZOLLA_WORK_ORDER_ID" >> %q; echo $$ >> %q
if mkdir %q 2>/dev/null; then sh -c 'sleep 600' %s; else sh -c 'sleep 0.3' %s; fi
echo "$AZOLLA_OBJECTIVE_ID" >> README.md`, l.starts, l.pgids, filepath.Join(dir, "held"), l.marker, l.marker)
	t.Cleanup(func() { proctest.KillGroups(l.pgids) })
	return l
}

// approve creates and approves n objectives on the repository.
func (l *limitedRepo) approve(t *testing.T, b *bundle, prefix string, n int) []string {
	return b.approveAll(t, prefix, n, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = l.repo, "main", config.GeneratorCommand
	})
}

// firstRunAndQueue waits for the first run to start and another to queue
// for the slot, and names them.
func (l *limitedRepo) firstRunAndQueue(t *testing.T, b *bundle, ids []string) (holder, waiting string) {
	require.Eventually(t, func() bool { return proctest.CountLines(l.starts) == 1 }, time.Minute, 20*time.Millisecond)
	holder = strings.TrimSpace(lines(t, l.starts)[0])
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if st, err := b.starter.State(context.Background(), id); err == nil && st.Step == workflows.StepAwaitingRunSlot {
				waiting = id
				return true
			}
		}
		return false
	}, time.Minute, 20*time.Millisecond, "the other runs queue for the slot")
	return holder, waiting
}

// requireHeld waits for every objective to be DONE with one bundle, and
// requires that no two runs were alive at once and that the killed run,
// holder, ran again.
func (l *limitedRepo) requireHeld(t *testing.T, b *bundle, ids []string, holder string, peakAlive func() int) {
	for _, id := range ids {
		st := b.waitStep(t, id, workflows.StepDone)
		require.Equal(t, domain.GatePass, st.GateResult, "%s: %s", id, st.GateReason)
		wos, bundles, _ := b.counts(t, id)
		require.Equal(t, []int{1, 1}, []int{wos, bundles}, "%s: one workorder, one bundle", id)
	}
	peak := peakAlive()
	require.Positive(t, peak, "the sampler saw runs")
	require.Equal(t, 1, peak, "runs of the repository alive at once")
	order := lines(t, l.starts)
	require.Len(t, order, len(ids)+1, "every run and the killed one's again: %v", order)
	require.Equal(t, 2, strings.Count(strings.Join(order, "\n")+"\n", holder+"\n"), "the killed run ran again: %v", order)
}

// writeConfig writes b's configuration, without an ops address, for the
// azolla processes of a test.
func writeConfig(t *testing.T, b *bundle) string {
	cfg := b.cfg
	cfg.Ops.Address = ""
	data, err := yaml.Marshal(cfg)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "azolla.yaml")
	require.NoError(t, os.WriteFile(file, data, 0o600))
	return file
}

// liveClaims lists the claims of resourceType live now in b's store.
func liveClaims(t *testing.T, b *bundle, resourceType string) []*domain.ClaimRecord {
	now := time.Now()
	cs, err := b.store.ListClaims(context.Background(), store.ListClaimsParams{ResourceTypes: []string{resourceType}, LiveAt: &now})
	require.NoError(t, err)
	return cs
}
