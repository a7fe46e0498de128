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
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/dial"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// throughputObjectives is how many lifecycles each side of
// BenchmarkTopology takes to DONE, over throughputRounds rounds of which
// each side has half: each round's objectives, running the default command
// on a lifecycle worker, are created and approved one after another by one
// client, and the round's time runs from its first create to its last
// DONE.
const (
	throughputObjectives = 100
	throughputRounds     = 8
)

// throughputTuning is what both sides run with, on top of the compose
// file's settings: the lifecycle benchmarks' lease and poll settings.
var throughputTuning = map[string]string{"AZOLLA_LOG_LEVEL": "warn", "AZOLLA_CLAIM_LEASE_TTL": "3s",
	"AZOLLA_LIFECYCLE_POLL_INTERVAL": "200ms"}

// BenchmarkTopology (TP) sets lifecycles per second on the production
// topology (the Temporal server on PostgreSQL, the PostgreSQL store, two
// worker processes and the control plane, each configured from its compose
// service) against azolla dev (the embedded server, the SQLite store, its
// workers in the same process), in the same run on the same workload
// (docs/benchmarks.md). Both sides are up throughout and take turns,
// topology, dev, dev, topology and again, so that a change in the machine's
// load during the run weighs on both alike. It needs no AZOLLA_TEST_TOPOLOGY: a
// benchmark runs only when asked for. It fails under CI=true when
// PostgreSQL or Redis is down and is skipped elsewhere, as the topology
// tests are.
func BenchmarkTopology(b *testing.B) {
	topology, dev := topologySide(b), devSide(b)
	per := throughputObjectives / (throughputRounds / 2)
	for r := range throughputRounds {
		if r%4 == 0 || r%4 == 3 {
			topology.add(lifecycles(b, topology, per))
		} else {
			dev.add(lifecycles(b, dev, per))
		}
	}

	b.ReportMetric(topology.perSecond(), "topology-lifecycles/s")
	b.ReportMetric(dev.perSecond(), "dev-lifecycles/s")
	b.ReportMetric(topology.perSecond()/dev.perSecond(), "tp-ratio")
	b.ReportMetric(topology.meanCreate().Seconds()*1000, "topology-create-ms")
	b.ReportMetric(topology.meanInsert().Seconds()*1000, "topology-create-insert-ms")
	b.ReportMetric(dev.meanInsert().Seconds()*1000, "dev-create-insert-ms")
	b.ReportMetric(topology.meanDecide().Seconds()*1000, "topology-approve-ms")
	b.ReportMetric(dev.meanCreate().Seconds()*1000, "dev-create-ms")
	b.ReportMetric(dev.meanDecide().Seconds()*1000, "dev-approve-ms")
	fmt.Printf(`
%d lifecycles a side in %d rounds (topology, dev, dev, topology, ...), each round's created and approved one after another, then every one DONE
  %-44s %10s %10s %10s %10s %10s
  %-44s %10.2f %10s %10s %10.1f %10.1f
  %-44s %10.2f %10s %10s %10.1f %10.1f
  tp-ratio (topology / dev lifecycles/s): %.2f
`, throughputObjectives, throughputRounds, "", "per s", "time", "drain", "create ms", "approve ms",
		"topology (Temporal on PostgreSQL, 2 workers)", topology.perSecond(), topology.total.Round(time.Millisecond),
		topology.drain.Round(time.Millisecond), topology.meanCreate().Seconds()*1000, topology.meanDecide().Seconds()*1000,
		"azolla dev (SQLite, one process)", dev.perSecond(), dev.total.Round(time.Millisecond),
		dev.drain.Round(time.Millisecond), dev.meanCreate().Seconds()*1000, dev.meanDecide().Seconds()*1000,
		topology.perSecond()/dev.perSecond())
}

// side is one set-up under measurement and what it has measured so far.
type side struct {
	starter *starter.Starter
	store   store.Store
	// procs are the side's processes: on the topology the Temporal
	// server, the control plane and the workers.
	procs []*proc
	// pg is the topology's PostgreSQL, and dbs its databases.
	pg  *postgres
	dbs map[string]string
	throughput
}

// topologySide starts the production topology.
func topologySide(t testing.TB) *side {
	c := startCluster(t, "")
	dir := t.TempDir()
	run(t, c.azolla, c.local.env(t, "temporal-setup", dir, nil), "temporal", "setup")
	run(t, c.azolla, c.local.env(t, "migrate", dir, nil), "migrate")
	cpEnv := c.local.env(t, "control-plane", filepath.Join(dir, "control-plane"), throughputTuning)
	cp := startProc(t, "control-plane", c.azolla, cpEnv, "control-plane")
	waitReady(t, c.local.controlPlane, cp)
	procs := []*proc{c.server, cp}
	for _, name := range []string{"worker-1", "worker-2"} {
		env := c.local.env(t, "worker", filepath.Join(dir, name), throughputTuning)
		w := startProc(t, name, c.azolla, env, "worker", "--identity", name)
		waitReady(t, envValue(env, opsAddress), w)
		procs = append(procs, w)
	}
	tc, err := client.Dial(client.Options{HostPort: envValue(cpEnv, "AZOLLA_TEMPORAL_ADDRESS"),
		Namespace: envValue(cpEnv, "AZOLLA_TEMPORAL_NAMESPACE"), Logger: quietSDKLogger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	st, err := dial.Open(context.Background(), dial.Config{Driver: config.DriverPostgres, DSN: envValue(cpEnv, "AZOLLA_STORE_DSN")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return &side{starter: &starter.Starter{Client: tc, Store: st, TaskQueue: config.DefaultTaskQueue}, store: st,
		procs: procs, pg: c.pg, dbs: c.local.dbs}
}

// devSide starts azolla dev.
func devSide(t testing.TB) *side {
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
	return &side{starter: &starter.Starter{Client: tc, Store: st, TaskQueue: config.DefaultTaskQueue}, store: st}
}

// throughput is a side's rounds summed: their time, the time from each
// round's last approval to its last DONE, and the client's time in creates
// and approvals, over n lifecycles.
type throughput struct {
	n                              int
	total, drain, creates, decides time.Duration
	// inserts is the part of creates the store's row took.
	inserts time.Duration
}

func (r *throughput) add(o throughput) {
	r.n += o.n
	r.inserts += o.inserts
	r.total += o.total
	r.drain += o.drain
	r.creates += o.creates
	r.decides += o.decides
}

func (r throughput) perSecond() float64 { return float64(r.n) / r.total.Seconds() }
func (r throughput) meanCreate() time.Duration {
	return r.creates / time.Duration(r.n)
}
func (r throughput) meanInsert() time.Duration {
	return r.inserts / time.Duration(r.n)
}
func (r throughput) meanDecide() time.Duration {
	return r.decides / time.Duration(r.n)
}

// lifecycles creates and approves n objectives on s, one after another,
// and times them until the store holds every one DONE. It asks the store
// one query per poll, so that the measuring client loads neither side's
// store more than the other.
func lifecycles(t testing.TB, s *side, n int) throughput {
	t.Helper()
	ctx := context.Background()
	countDone := func() int {
		done, err := s.store.ListObjectives(ctx, store.ListObjectivesParams{Status: domain.StatusDone})
		require.NoError(t, err)
		return len(done)
	}
	before := countDone()
	suffix := randomHex(3)
	r := throughput{n: n}
	start := time.Now()
	for i := range n {
		id := fmt.Sprintf("rate%02d-%s", i, suffix)
		step := time.Now()
		o := &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "Rate " + id,
			AcceptanceCriteria: []string{"its command runs"}, Status: domain.StatusNew, Urgency: "NORMAL"}
		// As Starter.Create does it, timed in its two parts: the store's
		// row, then the lifecycle's start (and the hand-over mark).
		require.NoError(t, s.store.CreateObjective(ctx, o))
		r.inserts += time.Since(step)
		require.NoError(t, s.starter.Start(ctx, o))
		r.creates += time.Since(step)
		step = time.Now()
		_, err := s.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "topology"})
		require.NoError(t, err)
		r.decides += time.Since(step)
	}
	approved := time.Now()
	deadline := approved.Add(5 * time.Minute)
	for {
		done := countDone() - before
		if done == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d objectives DONE 5 minutes after the last approval", done, n)
		}
		time.Sleep(25 * time.Millisecond)
	}
	r.total, r.drain = time.Since(start), time.Since(approved)
	return r
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
