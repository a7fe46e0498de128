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
	dir := t.TempDir()
	starts, pgids, held := filepath.Join(dir, "starts"), filepath.Join(dir, "pgids"), filepath.Join(dir, "held")
	marker := fmt.Sprintf("azolla-limit-%d", time.Now().UnixNano())
	// The first run to start holds its slot until it is killed; the others
	// work briefly. Each run's sleep carries the marker on its command line.
	agent := fmt.Sprintf(`echo "$AZOLLA_WORK_ORDER_ID" >> %q; echo $$ >> %q
if mkdir %q 2>/dev/null; then sh -c 'sleep 600' %s; else sh -c 'sleep 0.3' %s; fi
echo "$AZOLLA_OBJECTIVE_ID" >> README.md`, starts, pgids, held, marker, marker)
	repo := sampleRepo(t)
	b := setup(t, setupOptions{leaseTTL: 3 * time.Second, noWorker: true, patch: func(p *config.PatchConfig) {
		p.Generator, p.Command.Run = config.GeneratorCommand, agent
		p.Repositories = []config.RepositoryConfig{{Repository: repo, MaxConcurrentRuns: 1}}
	}, configure: func(c *config.Config) { c.Executor.Sandbox = config.SandboxNone }})
	t.Cleanup(func() { proctest.KillGroups(pgids) })
	cfg := b.cfg
	cfg.Ops.Address = ""
	data, err := yaml.Marshal(cfg)
	require.NoError(t, err)
	cfgFile := filepath.Join(t.TempDir(), "azolla.yaml")
	require.NoError(t, os.WriteFile(cfgFile, data, 0o600))
	workers := map[string]*exec.Cmd{}
	for _, name := range []string{"first", "second"} {
		workers[name] = b.workerProcess(t, name, "--config", cfgFile)
	}

	peakAlive := sampleAlive(t, marker)

	ctx := context.Background()
	var ids []string
	for i := range 6 {
		id := uniqueID(fmt.Sprintf("limit%d", i))
		ids = append(ids, id)
		b.create(t, id, func(o *domain.Objective) {
			o.Repository, o.BaseBranch, o.Generator = repo, "main", config.GeneratorCommand
		})
		_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return proctest.CountLines(starts) == 1 }, time.Minute, 20*time.Millisecond)
	holder := strings.TrimSpace(lines(t, starts)[0])

	// The others queue for the slot, and say so.
	var waiting string
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if st, err := b.starter.State(ctx, id); err == nil && st.Step == workflows.StepAwaitingRunSlot {
				waiting = id
				return true
			}
		}
		return false
	}, time.Minute, 20*time.Millisecond)
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
	c, err := b.store.GetClaim(ctx, domain.ResourceWorkOrder, holder)
	require.NoError(t, err)
	victim, _, _ := strings.Cut(c.OwnerID, ":")
	require.Contains(t, workers, victim, "the workorder's claim names its worker: %s", c.OwnerID)
	require.NoError(t, workers[victim].Process.Signal(syscall.SIGKILL))
	_ = workers[victim].Wait()
	proctest.KillGroups(pgids)

	for _, id := range ids {
		st := b.waitStep(t, id, workflows.StepDone)
		require.Equal(t, domain.GatePass, st.GateResult, "%s: %s", id, st.GateReason)
		wos, bundles, _ := b.counts(t, id)
		require.Equal(t, []int{1, 1}, []int{wos, bundles}, "%s: one workorder, one bundle", id)
	}
	peak := peakAlive()
	require.Positive(t, peak, "the sampler saw runs")
	require.Equal(t, 1, peak, "runs of the repository alive at once")
	order := lines(t, starts)
	require.Len(t, order, 7, "six runs and the killed one's again: %v", order)
	require.Equal(t, 2, strings.Count(strings.Join(order, "\n")+"\n", holder+"\n"), "the killed run ran again: %v", order)
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
	dir := t.TempDir()
	starts, pgids, held := filepath.Join(dir, "starts"), filepath.Join(dir, "pgids"), filepath.Join(dir, "held")
	marker := fmt.Sprintf("azolla-remote-limit-%d", time.Now().UnixNano())
	agent := fmt.Sprintf(`echo "$AZOLLA_WORK_ORDER_ID" >> %q; echo $$ >> %q
if mkdir %q 2>/dev/null; then sh -c 'sleep 600' %s; else sh -c 'sleep 0.3' %s; fi
echo "$AZOLLA_OBJECTIVE_ID" >> README.md`, starts, pgids, held, marker, marker)
	repo := sampleRepo(t)
	b := setup(t, setupOptions{leaseTTL: 3 * time.Second, noWorker: true, patch: func(p *config.PatchConfig) {
		// Every run is remote: the remote workers are given the agent.
		p.Generator, p.Command.Run = config.GeneratorCommand, "false"
		p.Repositories = []config.RepositoryConfig{{Repository: repo, MaxConcurrentRuns: 1}}
	}, configure: func(c *config.Config) {
		c.Executor.Sandbox = config.SandboxNone
		c.ControlPlane.RemoteDiazotrophs = []string{diazotroph.PatchType}
	}})
	t.Cleanup(func() { proctest.KillGroups(pgids) })
	cfg := b.cfg
	cfg.Ops.Address = ""
	data, err := yaml.Marshal(cfg)
	require.NoError(t, err)
	cfgFile := filepath.Join(t.TempDir(), "azolla.yaml")
	require.NoError(t, os.WriteFile(cfgFile, data, 0o600))
	cpAddr := fmt.Sprintf("127.0.0.1:%d", freePort())
	b.env = append(b.env, "AZOLLA_CONTROL_PLANE_ADDRESS="+cpAddr, "AZOLLA_CONTROL_PLANE_LEASE_TTL=3s",
		"AZOLLA_CONTROL_PLANE_HEARTBEAT_INTERVAL=1s", "AZOLLA_CONTROL_PLANE_REAPER_INTERVAL=300ms", "AZOLLA_OPS_ADDRESS=")
	cli := func(args ...string) string {
		cmd := exec.Command(azollaBin, append(args, "--config", cfgFile)...)
		cmd.Env = b.workerEnv()
		out, err := cmd.Output()
		require.NoError(t, err, "azolla %v", args)
		return string(out)
	}
	start := func(name string, env []string, args ...string) *exec.Cmd {
		cmd := exec.Command(azollaBin, args...)
		cmd.Env = env
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
	remote := func(name string) *exec.Cmd {
		token := strings.TrimSpace(cli("worker-token", "create", name))
		tokenFile := filepath.Join(t.TempDir(), "token")
		require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
		env := append(os.Environ(), "AZOLLA_DATA_DIR="+t.TempDir(), "AZOLLA_LOG_LEVEL=warn",
			"AZOLLA_EXECUTOR_SANDBOX=none", "AZOLLA_PATCH_COMMAND_RUN="+agent)
		return start(name, env, "remote-worker", "--control-plane", "http://"+cpAddr, "--token-file", tokenFile,
			"--worker-id", name, "--max-wait", "2s")
	}
	start("control plane", b.workerEnv(), "control-plane", "--identity", "cp", "--config", cfgFile)
	workers := []*exec.Cmd{b.workerProcess(t, "first", "--config", cfgFile), b.workerProcess(t, "second", "--config", cfgFile)}
	firstRemote := remote("remote-first")

	peakAlive := sampleAlive(t, marker)
	ctx := context.Background()
	var ids []string
	for i := range 5 {
		id := uniqueID(fmt.Sprintf("rlimit%d", i))
		ids = append(ids, id)
		b.create(t, id, func(o *domain.Objective) {
			o.Repository, o.BaseBranch, o.Generator = repo, "main", config.GeneratorCommand
		})
		_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return proctest.CountLines(starts) == 1 }, time.Minute, 20*time.Millisecond)
	holder := strings.TrimSpace(lines(t, starts)[0])
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if st, err := b.starter.State(ctx, id); err == nil && st.Step == workflows.StepAwaitingRunSlot {
				return true
			}
		}
		return false
	}, time.Minute, 20*time.Millisecond, "the other runs queue for the slot")

	// Every local worker dies, and the remote worker running the job with
	// its agent.
	for _, w := range append(workers, firstRemote) {
		require.NoError(t, w.Process.Signal(syscall.SIGKILL))
		_ = w.Wait()
	}
	proctest.KillGroups(pgids)

	// Once the dead workers' own claims (their queued runs' places) have
	// lapsed and the job's attempt has expired, the slot is still the
	// job's: nothing of a dead worker held it.
	slotOf := func() *domain.ClaimRecord {
		cs, err := b.store.ListClaims(ctx, store.ListClaimsParams{ResourceTypes: []string{domain.ResourceRunSlot}})
		require.NoError(t, err)
		for _, c := range cs {
			if c.Live(time.Now()) {
				return c
			}
		}
		return nil
	}
	require.Eventually(t, func() bool {
		now := time.Now()
		waits, err := b.store.ListClaims(ctx, store.ListClaimsParams{ResourceTypes: []string{domain.ResourceRunSlotWait},
			LiveAt: &now})
		require.NoError(t, err)
		j, err := b.store.GetJobByWorkOrder(ctx, holder)
		require.NoError(t, err)
		attempts, err := b.store.ListJobAttempts(ctx, j.JobID)
		require.NoError(t, err)
		return len(waits) == 0 && len(attempts) == 1 && attempts[0].Status == domain.AttemptExpired &&
			j.Status == domain.JobQueued
	}, time.Minute, 50*time.Millisecond, "the dead workers' places lapse and the job is requeued")
	c := slotOf()
	require.NotNil(t, c, "the job's run slot is live")
	require.True(t, strings.HasSuffix(c.OwnerID, "/"+holder), "the slot is the job's run's: %s", c.OwnerID)
	j, err := b.store.GetJobByWorkOrder(ctx, holder)
	require.NoError(t, err)
	require.Equal(t, []domain.SlotRef{{ResourceID: c.ResourceID, OwnerID: c.OwnerID}}, j.RunSlots)

	b.workerProcess(t, "third", "--config", cfgFile)
	remote("remote-second")
	for _, id := range ids {
		st := b.waitStep(t, id, workflows.StepDone)
		require.Equal(t, domain.GatePass, st.GateResult, "%s: %s", id, st.GateReason)
		wos, bundles, _ := b.counts(t, id)
		require.Equal(t, []int{1, 1}, []int{wos, bundles}, "%s: one workorder, one bundle", id)
	}
	peak := peakAlive()
	require.Positive(t, peak, "the sampler saw runs")
	require.Equal(t, 1, peak, "runs of the repository alive at once")
	order := lines(t, starts)
	require.Len(t, order, 6, "five runs and the killed one's again: %v", order)
	require.Equal(t, 2, strings.Count(strings.Join(order, "\n")+"\n", holder+"\n"), "the killed run ran again: %v", order)
	now := time.Now()
	live, err := b.store.ListClaims(ctx, store.ListClaimsParams{ResourceTypes: []string{domain.ResourceRunSlot},
		LiveAt: &now})
	require.NoError(t, err)
	require.Empty(t, live, "every slot is given up")
	b.requireAuditClean(t)
}
