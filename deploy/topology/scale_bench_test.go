package topology

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/workflows"
)

// topologyScaleSizes are BenchmarkTopologyScale's sizes: AZOLLA_BENCH_SCALE,
// comma separated.
func topologyScaleSizes(tb testing.TB) []int {
	spec := os.Getenv("AZOLLA_BENCH_SCALE")
	var sizes []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			tb.Fatalf("AZOLLA_BENCH_SCALE=%q: sizes are positive integers, comma separated", spec)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// topologyInFlight bounds the approvals in flight, each waiting for its
// lifecycle to end, as BenchmarkScale does on azolla dev.
func topologyInFlight(n int) int { return min(n, 200) }

// topologyPoint is what one size measured on the topology.
type topologyPoint struct {
	n                int
	wall, createWall time.Duration
	// idleRSS and peakRSS are summed over the topology's processes (the
	// Temporal server, the control plane, both workers): before the first
	// create, and each one's high-water mark after the last DONE.
	idleRSS, peakRSS int64
	// cpu is CPU seconds from the first approval to the last DONE, by
	// process name; "postgres" sums every PostgreSQL server process.
	cpu map[string]float64
	// commits is transactions committed in each database meanwhile, by its
	// compose name (temporal, temporal_visibility, azolla).
	commits map[string]int64
}

func (p topologyPoint) perSecond() float64 { return float64(p.n) / p.wall.Seconds() }

// rssPerThousand is the resident memory the lifecycles added, per 1,000.
func (p topologyPoint) rssPerThousand() float64 {
	return float64(p.peakRSS-p.idleRSS) / (1 << 20) / float64(p.n) * 1000
}

// BenchmarkTopologyScale is BenchmarkScale on the production topology
// (the Temporal server on PostgreSQL, the PostgreSQL store, the control
// plane and two workers, each configured from its compose service): for
// each size a fresh topology takes that many objectives from creation to
// awaiting approval, then all of them, approved 200 at a time, to DONE. It
// reports lifecycles per second and memory per lifecycle, and where the
// time goes: CPU seconds per lifecycle by process (PostgreSQL's included)
// and commits per lifecycle in each database. Run it with -benchtime 1x;
// make bench-scale runs it at 100 and 10,000 (S10k-topology).
func BenchmarkTopologyScale(b *testing.B) {
	if os.Getenv("AZOLLA_BENCH_SCALE") == "" {
		b.Skip("make bench-scale runs it (AZOLLA_BENCH_SCALE=100,10000); it takes minutes")
	}
	var points []topologyPoint
	for _, n := range topologyScaleSizes(b) {
		points = append(points, topologyScaleRun(b, n))
	}
	fmt.Printf("\nscale curve: approve -> DONE on the production topology (Temporal on PostgreSQL, PostgreSQL store, 2 workers)\n")
	fmt.Printf("  %8s %10s %10s %10s %12s   %s\n", "objects", "per second", "create", "RSS MiB", "MiB / 1,000",
		"CPU ms per lifecycle by process; commits per lifecycle by database")
	for _, p := range points {
		var cpu, commits []string
		for _, name := range []string{"temporal", "worker-1", "worker-2", "control-plane", "postgres", "client"} {
			cpu = append(cpu, fmt.Sprintf("%s %.1f", name, p.cpu[name]*1000/float64(p.n)))
		}
		for _, db := range []string{"temporal", "temporal_visibility", "azolla"} {
			commits = append(commits, fmt.Sprintf("%s %.1f", db, float64(p.commits[db])/float64(p.n)))
		}
		fmt.Printf("  %8d %10.1f %10s %10.0f %12.1f   cpu: %s; commits: %s\n", p.n, p.perSecond(),
			p.createWall.Round(100*time.Millisecond), float64(p.peakRSS)/(1<<20), p.rssPerThousand(),
			strings.Join(cpu, ", "), strings.Join(commits, ", "))
		b.ReportMetric(p.perSecond(), fmt.Sprintf("topology-lifecycles/s@%d", p.n))
		b.ReportMetric(p.rssPerThousand(), fmt.Sprintf("topology-MiB-per-1000@%d", p.n))
	}
	small, large := points[0], points[len(points)-1]
	if large.n > small.n {
		tr := large.perSecond() / small.perSecond()
		mem := large.rssPerThousand() / small.rssPerThousand()
		b.ReportMetric(tr, "scale-topology-throughput-ratio")
		b.ReportMetric(mem, "scale-topology-rss-per-objective-ratio")
		if large.n >= 10000 && small.n <= 100 {
			b.ReportMetric(tr, "s10k-topology-throughput-ratio")
			b.ReportMetric(mem, "s10k-topology-rss-per-objective-ratio")
		}
		fmt.Printf("  throughput at %d / at %d: %.2f; resident memory per objective, %d / %d: %.2f\n",
			large.n, small.n, tr, large.n, small.n, mem)
	}
}

// topologyScaleRun takes n lifecycles from creation to DONE on a fresh
// topology, and stops it.
func topologyScaleRun(b *testing.B, n int) topologyPoint {
	ctx := context.Background()
	s := topologySide(b)
	defer func() {
		for _, p := range s.procs {
			p.stop()
		}
	}()
	p := topologyPoint{n: n}
	for _, pr := range s.procs {
		p.idleRSS += proctest.StatusBytes(pr.cmd.Process.Pid, "VmRSS:")
	}
	ids := make([]string, n)
	suffix := randomHex(3)
	for i := range ids {
		ids[i] = fmt.Sprintf("tscale-%d-%s", i, suffix)
	}
	start := time.Now()
	var failed sync.Once
	fail := func(err error) { failed.Do(func() { b.Error(err) }) }
	boundedDo(n, 32, func(i int) {
		o := &domain.Objective{ObjectiveID: ids[i], ObjectiveType: "TICKET", Title: "scale", Status: domain.StatusNew, Urgency: "NORMAL"}
		if _, err := s.starter.Create(ctx, o); err != nil {
			fail(fmt.Errorf("create %s: %w", ids[i], err))
			return
		}
		if err := awaitApproval(ctx, s, ids[i]); err != nil {
			fail(err)
		}
	})
	if b.Failed() {
		b.FailNow()
	}
	p.createWall = time.Since(start)

	cpuBefore := topologyCPU(s)
	commitsBefore := dbCommits(b, s)
	start = time.Now()
	boundedDo(n, topologyInFlight(n), func(i int) {
		if _, err := s.starter.Decide(ctx, ids[i], workflows.Approve, workflows.Decision{By: "bench"}); err != nil {
			fail(fmt.Errorf("approve %s: %w", ids[i], err))
			return
		}
		var final workflows.State
		err := s.starter.Client.GetWorkflow(ctx, workflows.ObjectiveWorkflowID(ids[i]), "").Get(ctx, &final)
		if err == nil && final.Step != workflows.StepDone {
			err = fmt.Errorf("%s ended %s", ids[i], final.Step)
		}
		if err != nil {
			fail(err)
		}
	})
	p.wall = time.Since(start)
	if b.Failed() {
		b.FailNow()
	}
	p.cpu = map[string]float64{}
	for name, v := range topologyCPU(s) {
		p.cpu[name] = v - cpuBefore[name]
	}
	p.commits = map[string]int64{}
	for db, v := range dbCommits(b, s) {
		p.commits[db] = v - commitsBefore[db]
	}
	for _, pr := range s.procs {
		p.peakRSS += proctest.StatusBytes(pr.cmd.Process.Pid, "VmHWM:")
	}
	return p
}

// awaitApproval waits until objective id's lifecycle awaits approval.
func awaitApproval(ctx context.Context, s *side, id string) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st, err := s.starter.State(ctx, id)
		if err == nil && st.Step == workflows.StepAwaitingApproval {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("%s does not await approval after 5 minutes (step %q)", id, st.Step), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// boundedDo runs fn(0..n-1) on at most par goroutines at once.
func boundedDo(n, par int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, par)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

// topologyCPU is the CPU seconds used so far by each of the side's
// processes, by every PostgreSQL server process together ("postgres") and
// by this process ("client").
func topologyCPU(s *side) map[string]float64 {
	out := map[string]float64{"client": cpuSeconds(os.Getpid())}
	for _, p := range s.procs {
		out[p.name] = cpuSeconds(p.cmd.Process.Pid)
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm")); err == nil &&
			strings.TrimSpace(string(comm)) == "postgres" {
			out["postgres"] += cpuSeconds(pid)
		}
	}
	return out
}

// cpuSeconds is the CPU time process pid has used, 0 once it is gone.
func cpuSeconds(pid int) float64 {
	t, err := proctest.CPUTicks(pid)
	if err != nil {
		return 0
	}
	return float64(t) / proctest.ClockTicks
}

// dbCommits is the transactions committed so far in each of the side's
// databases, by compose name, as PostgreSQL's statistics count them.
func dbCommits(t testing.TB, s *side) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for name, db := range s.dbs {
		var n int64
		require.NoError(t, s.pg.admin.QueryRow(`SELECT xact_commit FROM pg_stat_database WHERE datname = $1`, db).Scan(&n))
		out[name] = n
	}
	return out
}
