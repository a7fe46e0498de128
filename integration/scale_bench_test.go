package integration

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// scaleSizes are BenchmarkScale's sizes: AZOLLA_BENCH_SCALE (comma
// separated) or 100 and 1,000.
func scaleSizes(tb testing.TB) []int {
	spec := os.Getenv("AZOLLA_BENCH_SCALE")
	if spec == "" {
		return []int{100, 1000}
	}
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

// scaleInFlight bounds the approvals in flight, each waiting for its
// lifecycle to end: all of them up to 1,000, then 200 at a time. Past the
// lifecycles the server's mutable-state cache holds (2,048 in azolla dev),
// lifecycles running at once evict each other, and an update (an
// approval) whose lifecycle is evicted is aborted and sent again; with
// 10,000 lifecycles waiting, 1,000 approvals in flight still timed out on
// a two-core machine (the dev server's reads of workflow state missed
// their deadlines), where 200 finished.
func scaleInFlight(n int) int {
	if n <= 1000 {
		return n
	}
	return 200
}

// s10k is the size of make bench-scale's largest run (AZOLLA_BENCH_SCALE=100,10000).
const s10k = 10000

// scaleProfileEnv names a directory: when set, the dev process of each
// size's first run is profiled from its first approval, for a minute (or
// for 3 s at 200 objectives and fewer, whose lifecycles take about that),
// into cpu-scale-N.pprof and heap-scale-N.pprof there. The profiler's own
// sampling adds a little CPU to what it measures.
const scaleProfileEnv = "AZOLLA_BENCH_SCALE_PROFILE"

// scaleProfileWindow is how long a run of n lifecycles is profiled.
func scaleProfileWindow(n int) time.Duration {
	if n <= 200 {
		return 3 * time.Second
	}
	return time.Minute
}

// scalePoint is what one size measured.
type scalePoint struct {
	n                 int
	lifecycles        series
	idleRSS, peakRSS  int64
	bytesPerObjective float64
	eventsPerLife     float64
	createWall        time.Duration
	// devCPU and clientCPU are the CPU seconds the dev process and this
	// test process (the client approving and waiting) used from the
	// approvals to the last DONE.
	devCPU, clientCPU float64
	runs              int
}

// cores is CPU seconds over the lifecycles' wall time: on a machine of C
// cores, dev and client cores adding up to near C say the run was bound by
// CPU.
func (p scalePoint) cores(cpu float64) float64 { return cpu / p.lifecycles.wall.Seconds() }

// scaleRuns is how many fresh runs a size is measured over. A run of a few
// seconds is at the mercy of one slow moment (100 lifecycles took from 2.8 s
// to 3.4 s in runs on one quiet machine, and that figure alone moved the
// scale ratio by 0.1), so small sizes are measured three times and pooled.
func scaleRuns(n int) int {
	if n <= 200 {
		return 3
	}
	return 1
}

// pool adds another run of the same size: lifecycles, wall time and CPU
// add up; memory, store and history figures are the latest run's.
func (p scalePoint) pool(o scalePoint) scalePoint {
	o.lifecycles = p.lifecycles.add(o.lifecycles)
	o.devCPU += p.devCPU
	o.clientCPU += p.clientCPU
	o.runs += p.runs
	return o
}

// BenchmarkScale is a fixed-size load test, not a b.N benchmark: run it with
// -benchtime 1x. For each size it starts a fresh `azolla dev` (COMMAND_DIAZOTROPH
// running `printf ok`), creates that many objectives and waits until each
// lifecycle awaits approval, then approves them all at once (past 1,000,
// scaleInFlight at a time) and waits for
// every one to reach DONE. It reports throughput, p50/p95 latency, the dev
// process's resident memory, store bytes and history events per lifecycle,
// and the largest size's throughput and memory per objective against the
// smallest's.
func BenchmarkScale(b *testing.B) {
	sizes := scaleSizes(b)
	var points []scalePoint
	for _, n := range sizes {
		p := scaleRun(b, n, os.Getenv(scaleProfileEnv))
		for range scaleRuns(n) - 1 {
			p = p.pool(scaleRun(b, n, ""))
		}
		points = append(points, p)
	}
	fmt.Printf("\nscale curve: approve -> DONE through one azolla dev (SQLite store, one history shard)\n")
	fmt.Printf("  %8s %5s %10s %8s %8s %10s %12s %14s %12s %10s %10s %12s\n", "objects", "runs", "per second", "p50", "p95",
		"RSS MiB", "MiB / 1,000", "store B / obj", "events/life", "create", "dev cores", "client cores")
	for _, p := range points {
		fmt.Printf("  %8d %5d %10.1f %8s %8s %10.0f %12.1f %14.0f %12.1f %10s %10.2f %12.2f\n", p.n, p.runs, p.lifecycles.throughput(),
			p.lifecycles.p(50).Round(time.Millisecond), p.lifecycles.p(95).Round(time.Millisecond),
			float64(p.peakRSS)/(1<<20), p.rssPerThousand(), p.bytesPerObjective, p.eventsPerLife,
			p.createWall.Round(100*time.Millisecond), p.cores(p.devCPU), p.cores(p.clientCPU))
		b.ReportMetric(p.lifecycles.throughput(), fmt.Sprintf("lifecycles/s@%d", p.n))
	}
	small, large := points[0], points[len(points)-1]
	if large.n > small.n {
		tr := large.lifecycles.throughput() / small.lifecycles.throughput()
		mem := large.rssPerThousand() / small.rssPerThousand()
		b.ReportMetric(tr, "scale-throughput-ratio")
		b.ReportMetric(mem, "scale-rss-per-objective-ratio")
		if large.n >= s10k && small.n <= 100 {
			// make bench-scale's bars: the same ratios, 10,000 against 100.
			b.ReportMetric(tr, "s10k-throughput-ratio")
			b.ReportMetric(mem, "s10k-rss-per-objective-ratio")
		}
		fmt.Printf("  throughput at %d / at %d: %.2f; resident memory per objective, %d / %d: %.2f\n",
			large.n, small.n, tr, large.n, small.n, mem)
	}
}

// rssPerThousand is the resident memory the lifecycles added, per 1,000.
func (p scalePoint) rssPerThousand() float64 {
	return float64(p.peakRSS-p.idleRSS) / (1 << 20) / float64(p.n) * 1000
}

// scaleRun takes n lifecycles from creation to DONE on a fresh dev process,
// profiling it into profileDir when that is not empty.
func scaleRun(b *testing.B, n int, profileDir string) scalePoint {
	ctx := context.Background()
	env := []string{"AZOLLA_DIAZOTROPH_COMMAND_RUN=printf ok", unconfined}
	if profileDir != "" {
		env = append(env, "AZOLLA_OPS_PPROF=true")
	}
	d := startDev(b, env...)
	p := scalePoint{n: n, runs: 1, idleRSS: rss(d.pid())}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("scale-%d", i)
	}
	start := time.Now()
	bounded(n, 32, func(i int) {
		o := &domain.Objective{ObjectiveID: ids[i], ObjectiveType: "TICKET", Title: "scale", Status: domain.StatusNew, Urgency: "NORMAL"}
		if _, err := d.starter.Create(ctx, o); err != nil {
			b.Errorf("create %s: %v", ids[i], err)
		}
	})
	if b.Failed() {
		b.FailNow()
	}
	if err := allAwaitApproval(ctx, d.starter, ids); err != nil {
		b.Fatalf("%d objectives: %v\n%s", n, err, d.out.String())
	}
	p.createWall = time.Since(start)

	devTicks, clientTicks := cpuTicks(b, d.pid()), cpuTicks(b, os.Getpid())
	profiled := d.profileInto(b, profileDir, fmt.Sprintf("scale-%d", n), scaleProfileWindow(n))
	p.lifecycles = measureAtMost(n, scaleInFlight(n), func(i int) (time.Duration, error) {
		start := time.Now()
		if _, err := d.starter.Decide(ctx, ids[i], workflows.Approve, workflows.Decision{By: "bench"}); err != nil {
			return 0, err
		}
		var final workflows.State
		err := d.client.GetWorkflow(ctx, workflows.ObjectiveWorkflowID(ids[i]), "").Get(ctx, &final)
		if err == nil && final.Step != workflows.StepDone {
			err = fmt.Errorf("%s ended %s", ids[i], final.Step)
		}
		return time.Since(start), err
	})
	if p.lifecycles.err != nil {
		b.Fatalf("%d lifecycles: %v\n%s", n, p.lifecycles.err, d.out.String())
	}
	p.devCPU = ticksToSeconds(cpuTicks(b, d.pid()) - devTicks)
	p.clientCPU = ticksToSeconds(cpuTicks(b, os.Getpid()) - clientTicks)
	profiled()
	p.peakRSS = peakRSS(d.pid())
	p.bytesPerObjective = float64(d.storeBytes(b)) / float64(n)

	// History length of a sample of lifecycles (creation to DONE).
	sample := min(n, 50)
	var events int
	for i := range sample {
		iter := d.client.GetWorkflowHistory(ctx, workflows.ObjectiveWorkflowID(ids[i*n/sample]), "", false, 0)
		for iter.HasNext() {
			if _, err := iter.Next(); err != nil {
				b.Fatalf("history of %s: %v", ids[i*n/sample], err)
			}
			events++
		}
	}
	p.eventsPerLife = float64(events) / float64(sample)
	// The next run, of this size or the next, has the machine to itself.
	d.stop()
	return p
}

// bounded runs fn(0..n-1) on at most par goroutines at once.
func bounded(n, par int, fn func(i int)) {
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
