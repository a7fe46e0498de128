package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// Ten lifecycles on `azolla worker` processes that journal their store's
// history, on a PostgreSQL store and a Temporal frontend each reached
// through a fault proxy (on SQLite, the frontend alone), their clocks apart by up to 1.2 s on a lease of
// 3 s; one worker is SIGKILLed while it holds a run, and a third takes
// over: every lifecycle reaches DONE with one bundle and
// one run record, the killed worker's run ran again, and the processes'
// merged history (what the killed one had in flight counted as unknown)
// is linearizable against the claim and outcome models.
func TestFaults_KilledWorkersKeepTheClaimProtocol(t *testing.T) {
	t.Parallel()
	forSeeds(t, "killed worker", bothBackends, killedWorkers)
}

// killedWorkers is one seed of the scenario: it returns the claim
// operations and outcome writes it checked, and the faults it injected.
func killedWorkers(t *testing.T, backend string, seed uint64) (int, int, map[string]int) {
	w, k := startKilledWorkers(t, backend, seed, nil)
	w.requireDone(t)
	require.Greater(t, proctest.CountLines(k.starts), len(w.ids), "the killed worker's run ran again")
	unknown := k.load(t)
	t.Logf("the killed worker left %d operations in flight", unknown)
	return w.check(t)
}

// workerJournals are a scenario's worker processes, each journaling its
// store's history into a file of its own.
type workerJournals struct {
	w *faultyWorld
	// starts has a line per agent started.
	starts string
	procs  map[string]*exec.Cmd
	// journals are the journals' paths, by worker.
	journals map[string]string
	killed   string
}

// startKilledWorkers starts the worker processes "first" and "doomed"
// behind faults on a store of backend (as goFaulty; mutated first by
// mutate when set),
// approves ten lifecycles whose runs take two seconds, and injects faults
// drawn from seed; meanwhile it SIGKILLs "doomed" once it holds a run
// with a store operation in flight, and starts "third".
func startKilledWorkers(t *testing.T, backend string, seed uint64, mutate func(context.Context, *sqlstore.Store) error) (*faultyWorld, *workerJournals) {
	dir := t.TempDir()
	k := &workerJournals{starts: filepath.Join(dir, "starts"), procs: map[string]*exec.Cmd{}, journals: map[string]string{}}
	// Each agent is its own process group, killed with the test: the
	// killed worker's are left running, as a SIGKILL leaves them.
	b := setup(t, setupOptions{command: fmt.Sprintf(`echo $$ >> %q; sleep 2; printf ok`, k.starts),
		leaseTTL: 3 * time.Second, noWorker: true,
		configure: func(c *config.Config) { c.Executor.Sandbox = config.SandboxNone }})
	t.Cleanup(func() { proctest.KillGroups(k.starts) })
	k.w = goFaulty(t, b, backend, mutate)
	k.w.pace = k.progress
	// Their clocks disagree by up to 1.2 s on a lease of 3 s: "doomed" is
	// behind, "third" ahead, and takes over leases that early.
	k.start(t, "first", 0)
	k.start(t, "doomed", -400*time.Millisecond)
	k.w.ids = b.approveAll(t, "killed", 10)
	k.w.inject(t, seed, func() {
		// Killed while it holds a run and has a store operation in flight.
		require.Eventually(t, func() bool { return k.inFlight("doomed") > 0 && k.holdsARun("doomed") },
			2*time.Minute, 5*time.Millisecond, "the doomed worker takes a run")
		k.kill(t, "doomed")
		k.start(t, "third", 800*time.Millisecond)
	})
	return k.w, k
}

// start starts the worker process name, its claims stamped by a clock
// off by skew.
func (k *workerJournals) start(t *testing.T, name string, skew time.Duration) {
	t.Helper()
	k.journals[name] = filepath.Join(filepath.Dir(k.starts), name+".journal")
	cmd := exec.Command(recordingAzolla(t), "worker", "--identity", name)
	cmd.Env = append(append(k.w.b.workerEnv(), k.w.env...), storetest.JournalEnv+"="+k.journals[name],
		storetest.ClockSkewEnv+"="+skew.String())
	k.procs[name] = startLogged(t, "worker "+name, cmd)
}

// holdsARun says whether worker name holds a live workorder claim.
func (k *workerJournals) holdsARun(name string) bool {
	now := time.Now()
	cs, err := k.w.direct.ListClaims(context.Background(), store.ListClaimsParams{
		ResourceTypes: []string{domain.ResourceWorkOrder}, LiveAt: &now})
	if err != nil {
		return false
	}
	for _, c := range cs {
		if strings.HasPrefix(c.OwnerID, name) && c.ReleasedAt == nil {
			return true
		}
	}
	return false
}

// inFlight is how many operations worker name's journal has begun and
// not ended so far.
func (k *workerJournals) inFlight(name string) int {
	h := storetest.NewHistory()
	if err := h.Load(k.journals[name]); err != nil {
		return 0 // read while a line is being written
	}
	return h.Pending()
}

// kill SIGKILLs worker name.
func (k *workerJournals) kill(t *testing.T, name string) {
	t.Helper()
	require.NoError(t, k.procs[name].Process.Signal(syscall.SIGKILL))
	_ = k.procs[name].Wait()
	k.killed = name
}

// progress is how much the workers have journaled so far: the work the
// faults keep pace with.
func (k *workerJournals) progress() int {
	n := 0
	for _, path := range k.journals {
		if fi, err := os.Stat(path); err == nil {
			n += int(fi.Size())
		}
	}
	return n
}

// load stops the workers still running (SIGTERM, then SIGKILL if one
// outlasts a minute), adds every journal to the world's history, and
// returns how many operations the killed worker left in flight.
func (k *workerJournals) load(t *testing.T) int {
	t.Helper()
	for name, cmd := range k.procs {
		if name == k.killed {
			continue
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Logf("worker %s outlasted a minute after SIGTERM: killed", name)
			_ = cmd.Process.Kill()
			<-done
		}
	}
	unknown := 0
	for name, path := range k.journals {
		if name == k.killed {
			killed := storetest.NewHistory()
			require.NoError(t, killed.Load(path))
			unknown = killed.Pending()
		}
		require.NoError(t, k.w.h.Load(path), "worker %s", name)
	}
	return unknown
}

// recordingBin is the azolla binary built with the azollahistory tag,
// whose stores journal their history ($AZOLLA_TEST_HISTORY).
var recordingBin struct {
	once sync.Once
	path string
	err  error
}

// recordingAzolla builds the recording binary once, beside azollaBin.
func recordingAzolla(t *testing.T) string {
	t.Helper()
	recordingBin.once.Do(func() {
		recordingBin.path = filepath.Join(filepath.Dir(azollaBin), "azolla-recording")
		out, err := exec.Command("go", "build", "-tags", "azollahistory", "-o", recordingBin.path,
			"github.com/azolla/azolla/cmd/azolla").CombinedOutput()
		if err != nil {
			recordingBin.err = fmt.Errorf("build the recording azolla: %v\n%s", err, out)
		}
	})
	require.NoError(t, recordingBin.err)
	return recordingBin.path
}

// The killed-worker scenario sees what it is meant to: with the claim
// acquisition's expiry guard removed, the merged history of the worker
// processes is not linearizable.
func TestMutation_KilledWorkersCatchABrokenGuard(t *testing.T) {
	t.Parallel()
	w, k := startKilledWorkers(t, "postgres", 1, storetest.RemoveExpiryGuard)
	k.load(t)
	requireCaught(t, w.h)
}
