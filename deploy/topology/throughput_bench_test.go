package topology

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/deploy/compose"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/dial"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// throughputObjectives is the workload both sides of BenchmarkTopology
// run: that many objectives, each running the default command on a
// lifecycle worker, created and approved one after another by one client;
// the time runs from the first create to the last DONE.
const throughputObjectives = 100

// throughputTuning is what both sides run with, on top of the compose
// file's settings: the lifecycle benchmarks' lease and poll settings.
var throughputTuning = map[string]string{"AZOLLA_LOG_LEVEL": "warn", "AZOLLA_CLAIM_LEASE_TTL": "3s",
	"AZOLLA_LIFECYCLE_POLL_INTERVAL": "200ms"}

// BenchmarkTopology (TP) sets lifecycles per second on the production
// topology (the Temporal server on PostgreSQL, the PostgreSQL store, two
// worker processes and the control plane, each configured from its compose
// service) against azolla dev (the embedded server, the SQLite store, its
// workers in the same process), one after the other in the same run on the
// same workload (docs/benchmarks.md). Each side is stopped before the other
// starts. It needs no AZOLLA_TEST_TOPOLOGY: a benchmark runs only when
// asked for. It fails under CI=true when PostgreSQL or Redis is down and is
// skipped elsewhere, as the topology tests are.
func BenchmarkTopology(b *testing.B) {
	var topology, dev throughput
	scoped(b, func(t testing.TB) { topology = topologyLifecycles(t) })
	scoped(b, func(t testing.TB) { dev = devLifecycles(t) })

	b.ReportMetric(topology.perSecond(), "topology-lifecycles/s")
	b.ReportMetric(dev.perSecond(), "dev-lifecycles/s")
	b.ReportMetric(topology.perSecond()/dev.perSecond(), "tp-ratio")
	b.ReportMetric(topology.meanCreate().Seconds()*1000, "topology-create-ms")
	b.ReportMetric(topology.meanDecide().Seconds()*1000, "topology-approve-ms")
	b.ReportMetric(dev.meanCreate().Seconds()*1000, "dev-create-ms")
	b.ReportMetric(dev.meanDecide().Seconds()*1000, "dev-approve-ms")
	fmt.Printf(`
%d lifecycles, created and approved one after another, then every one DONE
  %-44s %10s %10s %10s %10s %10s
  %-44s %10.2f %10s %10s %10.1f %10.1f
  %-44s %10.2f %10s %10s %10.1f %10.1f
  tp-ratio (topology / dev lifecycles/s): %.2f
`, throughputObjectives, "", "per s", "total", "drain", "create ms", "approve ms",
		"topology (Temporal on PostgreSQL, 2 workers)", topology.perSecond(), topology.total.Round(time.Millisecond),
		topology.drain.Round(time.Millisecond), topology.meanCreate().Seconds()*1000, topology.meanDecide().Seconds()*1000,
		"azolla dev (SQLite, one process)", dev.perSecond(), dev.total.Round(time.Millisecond),
		dev.drain.Round(time.Millisecond), dev.meanCreate().Seconds()*1000, dev.meanDecide().Seconds()*1000,
		topology.perSecond()/dev.perSecond())
}

// topologyLifecycles runs the workload on the production topology.
func topologyLifecycles(t testing.TB) throughput {
	c := startCluster(t, "")
	dir := t.TempDir()
	run(t, c.azolla, c.local.env(t, "temporal-setup", dir, nil), "temporal", "setup")
	run(t, c.azolla, c.local.env(t, "migrate", dir, nil), "migrate")
	cpEnv := c.local.env(t, "control-plane", filepath.Join(dir, "control-plane"), throughputTuning)
	cp := startProc(t, "control-plane", c.azolla, cpEnv, "control-plane")
	waitReady(t, c.local.controlPlane, cp)
	for _, name := range []string{"worker-1", "worker-2"} {
		env := c.local.env(t, "worker", filepath.Join(dir, name), throughputTuning)
		waitReady(t, envValue(env, opsAddress), startProc(t, name, c.azolla, env, "worker", "--identity", name))
	}
	tc, err := client.Dial(client.Options{HostPort: envValue(cpEnv, "AZOLLA_TEMPORAL_ADDRESS"),
		Namespace: envValue(cpEnv, "AZOLLA_TEMPORAL_NAMESPACE"), Logger: quietSDKLogger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	st, err := dial.Open(context.Background(), dial.Config{Driver: config.DriverPostgres, DSN: envValue(cpEnv, "AZOLLA_STORE_DSN")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return lifecycles(t, &starter.Starter{Client: tc, Store: st, TaskQueue: config.DefaultTaskQueue}, st)
}

// devLifecycles runs the workload on azolla dev.
func devLifecycles(t testing.TB) throughput {
	bin := buildDev(t)
	dir := t.TempDir()
	grpc := freePort(t)
	env := []string{"AZOLLA_DATA_DIR=" + dir, "AZOLLA_TEMPORAL_NAMESPACE=azolla",
		"AZOLLA_CONTROL_PLANE_ADDRESS=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))}
	if compose.EnvKeys()[opsAddress] {
		env = append(env, opsAddress+"="+net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t))))
	}
	for k, v := range throughputTuning {
		env = append(env, k+"="+v)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AZOLLA_") && !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "TEMPORAL_") {
			env = append(env, kv)
		}
	}
	p := startProc(t, "azolla dev", bin, env, "dev", "--ephemeral", "--grpc-port", strconv.Itoa(grpc),
		"--ui-port", strconv.Itoa(freePort(t)))
	tc := waitHealthy(t, client.Options{HostPort: net.JoinHostPort("127.0.0.1", strconv.Itoa(grpc)), Namespace: "azolla"}, p)
	st, err := dial.Open(context.Background(), dial.Config{Driver: config.DriverSQLite, SQLitePath: filepath.Join(dir, "azolla.db")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	waitFor(t, time.Minute, "azolla dev migrates its store", func() bool {
		_, err := st.ListWorkOrders(context.Background(), store.ListWorkOrdersParams{})
		return err == nil
	}, p)
	return lifecycles(t, &starter.Starter{Client: tc, Store: st, TaskQueue: config.DefaultTaskQueue}, st)
}

// throughput is one side's run: the whole time, the time from the last
// approval to the last DONE, and the client's time in creates and
// approvals.
type throughput struct {
	total, drain, creates, decides time.Duration
}

func (r throughput) perSecond() float64 { return float64(throughputObjectives) / r.total.Seconds() }
func (r throughput) meanCreate() time.Duration {
	return r.creates / throughputObjectives
}
func (r throughput) meanDecide() time.Duration {
	return r.decides / throughputObjectives
}

// lifecycles creates and approves throughputObjectives objectives on a
// store with no other objectives, one after another, and times them until
// the store holds every one DONE. It asks the store one query per poll, so
// that the measuring client loads neither side's store more than the other.
func lifecycles(t testing.TB, s *starter.Starter, st store.Store) throughput {
	t.Helper()
	ctx := context.Background()
	suffix := randomHex(3)
	var r throughput
	start := time.Now()
	for i := range throughputObjectives {
		id := fmt.Sprintf("rate%02d-%s", i, suffix)
		step := time.Now()
		_, err := s.Create(ctx, &store.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "Rate " + id,
			AcceptanceCriteria: []string{"its command runs"}, Status: store.StatusNew, Urgency: "NORMAL"})
		require.NoError(t, err)
		r.creates += time.Since(step)
		step = time.Now()
		_, err = s.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "topology"})
		require.NoError(t, err)
		r.decides += time.Since(step)
	}
	approved := time.Now()
	deadline := approved.Add(5 * time.Minute)
	for {
		doneList, err := st.ListObjectives(ctx, store.ListObjectivesParams{Status: store.StatusDone})
		require.NoError(t, err)
		if len(doneList) == throughputObjectives {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d objectives DONE 5 minutes after the last approval", len(doneList), throughputObjectives)
		}
		time.Sleep(25 * time.Millisecond)
	}
	r.total, r.drain = time.Since(start), time.Since(approved)
	return r
}

// scoped runs f with a testing.TB whose cleanups run when f returns (or
// fails), not when the benchmark ends: one side's processes are stopped
// before the other side starts.
func scoped(b *testing.B, f func(t testing.TB)) {
	b.Helper()
	s := &scope{TB: b}
	defer s.close()
	f(s)
}

// scope is a testing.TB with its own cleanups.
type scope struct {
	testing.TB
	cleanups []func()
}

func (s *scope) Cleanup(f func()) { s.cleanups = append(s.cleanups, f) }

func (s *scope) close() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
}

// buildDev builds azolla with the embedded Temporal server (the devserver
// tag), for azolla dev.
func buildDev(t testing.TB) string {
	t.Helper()
	build(t)
	bin := filepath.Join(binaries.dir, "azolla-dev")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	out, err := exec.Command("go", "build", "-tags", "devserver", "-o", bin, "github.com/azolla/azolla/cmd/azolla").CombinedOutput()
	require.NoError(t, err, "go build -tags devserver: %s", out)
	return bin
}
