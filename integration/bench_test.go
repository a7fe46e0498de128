package integration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// unconfined runs the benchmarks' commands outside the sandbox: the
// lifecycle, track and scale benchmarks measure orchestration, as they did
// before executors were sandboxed, and what the sandbox adds to a
// workorder is BenchmarkSandbox's (X1).
const unconfined = "AZOLLA_EXECUTOR_SANDBOX=none"

// The lifecycle benchmark's workload: benchRounds rounds, each starting
// benchPerRound lifecycles and benchPerRound bare workflows, the two sides
// one after the other, alternating which goes first, so drift in the
// machine's load falls on both.
const (
	benchRounds   = 4
	benchPerRound = 10
)

// BenchmarkLifecycle is a fixed-size workload, not a b.N benchmark (run it
// with -benchtime 1x). It runs objectives from approval to DONE on an `azolla
// dev` process (COMMAND_DIAZOTROPH running `printf ok`), next to a bare
// workflow of three no-op activities on the same server in the same run, and
// reports throughput, p50/p95 latency, their ratios and the dev process's
// peak RSS.
//
// `true` would be the cheapest command, but it prints nothing and the gate
// (docs/protocol/patch-flow.md#checking-the-bundle) fails empty content, so the lifecycle would never reach
// DONE; `printf ok` costs the same fork and exec.
func BenchmarkLifecycle(b *testing.B) {
	ctx := context.Background()
	d := startDev(b, "AZOLLA_DIAZOTROPH_COMMAND_RUN=printf ok", unconfined)
	c, s := d.client, d.starter

	// Baseline: a bare workflow with three no-op activities, on a worker in
	// this process against the same server.
	w := worker.New(c, "bench-bare", worker.Options{})
	w.RegisterWorkflowWithOptions(bareWorkflow, workflow.RegisterOptions{Name: "BareWorkflow"})
	w.RegisterActivity(noop)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()

	ids := awaitingLifecycles(b, s, "bench", benchRounds*benchPerRound)

	bareRound := func(r int) series {
		return measure(benchPerRound, func(i int) (time.Duration, error) {
			start := time.Now()
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bare-%d-%d", r, i),
				TaskQueue: "bench-bare"}, "BareWorkflow")
			if err == nil {
				err = run.Get(ctx, nil)
			}
			return time.Since(start), err
		})
	}
	lifecycleRound := func(r int) series {
		return approveAll(c, s, ids[r*benchPerRound:(r+1)*benchPerRound])
	}
	b.ResetTimer()
	var bare, lifecycle series
	for r := range benchRounds {
		if r%2 == 0 {
			bare = bare.add(bareRound(r))
			lifecycle = lifecycle.add(lifecycleRound(r))
		} else {
			lifecycle = lifecycle.add(lifecycleRound(r))
			bare = bare.add(bareRound(r))
		}
	}
	b.StopTimer()
	if bare.err != nil || lifecycle.err != nil {
		b.Fatalf("bare: %v, lifecycle: %v", bare.err, lifecycle.err)
	}
	rss := peakRSS(d.pid())

	b.ReportMetric(lifecycle.throughput(), "lifecycles/s")
	b.ReportMetric(bare.throughput(), "bare/s")
	b.ReportMetric(lifecycle.throughput()/bare.throughput(), "throughput-ratio")
	b.ReportMetric(float64(lifecycle.p(50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(lifecycle.p(95).Milliseconds()), "p95-ms")
	b.ReportMetric(float64(lifecycle.p(50))/float64(bare.p(50)), "p50-ratio")
	b.ReportMetric(float64(lifecycle.p(95))/float64(bare.p(95)), "p95-ratio")
	b.ReportMetric(float64(rss)/(1<<20), "dev-peak-rss-MiB")
	fmt.Printf(`
objective lifecycle vs bare workflow (3 no-op activities), %d rounds of %d each, alternating, same azolla dev server
  %-28s %10s %10s %10s
  %-28s %10.1f %10s %10s
  %-28s %10.1f %10s %10s
  %-28s %10.2f %10.2f %10.2f   (lifecycle / bare)
  azolla dev peak RSS: %.0f MiB
`, benchRounds, benchPerRound, "", "per second", "p50", "p95",
		"lifecycle approve -> DONE", lifecycle.throughput(), lifecycle.p(50).Round(time.Millisecond), lifecycle.p(95).Round(time.Millisecond),
		"bare workflow", bare.throughput(), bare.p(50).Round(time.Millisecond), bare.p(95).Round(time.Millisecond),
		"ratio", lifecycle.throughput()/bare.throughput(), float64(lifecycle.p(50))/float64(bare.p(50)),
		float64(lifecycle.p(95))/float64(bare.p(95)), float64(rss)/(1<<20))
}

// awaitingLifecycles creates n TICKET objectives, prefix-0 to prefix-(n-1),
// and waits until each lifecycle awaits approval.
func awaitingLifecycles(b *testing.B, s *starter.Starter, prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
		o := &domain.Objective{ObjectiveID: ids[i], ObjectiveType: "TICKET", Title: "bench", Status: domain.StatusNew, Urgency: "NORMAL"}
		if _, err := s.Create(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	for _, id := range ids {
		waitAwaitingApproval(b, s, id)
	}
	return ids
}

// approveAll approves the lifecycles of ids all at once and times each from
// its approval to DONE.
func approveAll(c client.Client, s *starter.Starter, ids []string) series {
	ctx := context.Background()
	return measure(len(ids), func(i int) (time.Duration, error) {
		id := ids[i]
		start := time.Now()
		if _, err := s.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "bench"}); err != nil {
			return 0, err
		}
		var final workflows.State
		err := c.GetWorkflow(ctx, workflows.ObjectiveWorkflowID(id), "").Get(ctx, &final)
		if err == nil && final.Step != workflows.StepDone {
			err = fmt.Errorf("%s ended %s", id, final.Step)
		}
		return time.Since(start), err
	})
}

// series is one side's latencies and wall time.
type series struct {
	lat  []time.Duration
	wall time.Duration
	err  error
}

func (s series) throughput() float64 { return float64(len(s.lat)) / s.wall.Seconds() }

// add pools two series: their latencies, wall times and first error.
func (s series) add(o series) series {
	if s.err == nil {
		s.err = o.err
	}
	return series{lat: append(s.lat, o.lat...), wall: s.wall + o.wall, err: s.err}
}

func (s series) p(q int) time.Duration {
	l := slices.Clone(s.lat)
	slices.Sort(l)
	return l[(len(l)-1)*q/100]
}

// measure runs n operations all at once and times each.
func measure(n int, op func(i int) (time.Duration, error)) series {
	return measureAtMost(n, n, op)
}

// measureAtMost is measure with at most par operations in flight.
func measureAtMost(n, par int, op func(i int) (time.Duration, error)) series {
	var mu sync.Mutex
	s := series{}
	start := time.Now()
	bounded(n, par, func(i int) {
		d, err := op(i)
		mu.Lock()
		defer mu.Unlock()
		if err != nil && s.err == nil {
			s.err = err
		}
		s.lat = append(s.lat, d)
	})
	s.wall = time.Since(start)
	return s
}

func waitAwaitingApproval(b *testing.B, s *starter.Starter, id string) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if st, err := s.State(context.Background(), id); err == nil && st.Step == workflows.StepAwaitingApproval {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatalf("%s never awaited approval", id)
}

// peakRSS is a process's resident-set high-water mark, in bytes.
func peakRSS(pid int) int64 { return proctest.StatusBytes(pid, "VmHWM:") }

func bareWorkflow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	for range 3 {
		if err := workflow.ExecuteActivity(ctx, noop).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

func noop(context.Context) error { return nil }
