package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/dial"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// benchObjectives is how many lifecycles (and bare workflows) each side runs.
const benchObjectives = 40

// BenchmarkLifecycle runs objectives from approval to DONE on an `azolla dev`
// process (COMMAND_DIAZOTROPH running `printf ok`), next to a bare workflow of
// three no-op activities on the same server in the same run, and reports
// throughput, p50/p95 latency, their ratios and the dev process's peak RSS.
//
// `true` would be the cheapest command, but it prints nothing and the gate
// (seed 003 step 11) fails empty content, so the lifecycle would never reach
// DONE; `printf ok` costs the same fork and exec.
func BenchmarkLifecycle(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	grpc, ui := freePort(), freePort()
	dev := exec.Command(azollaBin, "dev", "--ephemeral", "--grpc-port", strconv.Itoa(grpc), "--ui-port", strconv.Itoa(ui))
	dev.Env = append(os.Environ(), "AZOLLA_DATA_DIR="+dir, "AZOLLA_DIAZOTROPH_COMMAND_RUN=printf ok",
		"AZOLLA_LOG_LEVEL=error", "AZOLLA_LIFECYCLE_POLL_INTERVAL=5s")
	var devOut strings.Builder
	dev.Stdout, dev.Stderr = &devOut, &devOut
	if err := dev.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = dev.Process.Signal(syscall.SIGTERM)
		_ = dev.Wait()
	}()

	addr := fmt.Sprintf("127.0.0.1:%d", grpc)
	var c client.Client
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var err error
		c, err = client.Dial(client.Options{HostPort: addr, Logger: quietSDKLogger{}})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("azolla dev did not come up: %v\n%s", err, devOut.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	defer c.Close()
	st, err := dial.Open(ctx, dial.Config{Driver: config.DriverSQLite, SQLitePath: filepath.Join(dir, "azolla.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}

	// Baseline: a bare workflow with three no-op activities, on a worker in
	// this process against the same server.
	w := worker.New(c, "bench-bare", worker.Options{})
	w.RegisterWorkflowWithOptions(bareWorkflow, workflow.RegisterOptions{Name: "BareWorkflow"})
	w.RegisterActivity(noop)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()

	b.ResetTimer()
	bare := measure(benchObjectives, func(i int) (time.Duration, error) {
		start := time.Now()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bare-%d", i),
			TaskQueue: "bench-bare"}, "BareWorkflow")
		if err == nil {
			err = run.Get(ctx, nil)
		}
		return time.Since(start), err
	})

	s := &starter.Starter{Client: c, Store: st, TaskQueue: config.DefaultTaskQueue}
	ids := make([]string, benchObjectives)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-%d", i)
		o := &store.Objective{ObjectiveID: ids[i], ObjectiveType: "TICKET", Title: "bench", Status: store.StatusNew, Urgency: "NORMAL"}
		if _, err := s.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	for _, id := range ids {
		waitAwaitingApproval(b, s, id)
	}
	lifecycle := measure(benchObjectives, func(i int) (time.Duration, error) {
		start := time.Now()
		if _, err := s.Decide(ctx, ids[i], workflows.Approve, workflows.Decision{By: "bench"}); err != nil {
			return 0, err
		}
		var final workflows.State
		err := c.GetWorkflow(ctx, workflows.ObjectiveWorkflowID(ids[i]), "").Get(ctx, &final)
		if err == nil && final.Step != workflows.StepDone {
			err = fmt.Errorf("%s ended %s", ids[i], final.Step)
		}
		return time.Since(start), err
	})
	b.StopTimer()
	if bare.err != nil || lifecycle.err != nil {
		b.Fatalf("bare: %v, lifecycle: %v", bare.err, lifecycle.err)
	}
	rss := peakRSS(dev.Process.Pid)

	b.ReportMetric(lifecycle.throughput(), "lifecycles/s")
	b.ReportMetric(bare.throughput(), "bare/s")
	b.ReportMetric(lifecycle.throughput()/bare.throughput(), "throughput-ratio")
	b.ReportMetric(float64(lifecycle.p(50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(lifecycle.p(95).Milliseconds()), "p95-ms")
	b.ReportMetric(float64(lifecycle.p(50))/float64(bare.p(50)), "p50-ratio")
	b.ReportMetric(float64(lifecycle.p(95))/float64(bare.p(95)), "p95-ratio")
	b.ReportMetric(float64(rss)/(1<<20), "dev-peak-rss-MiB")
	fmt.Printf(`
objective lifecycle vs bare workflow (3 no-op activities), %d each, same azolla dev server
  %-28s %10s %10s %10s
  %-28s %10.1f %10s %10s
  %-28s %10.1f %10s %10s
  %-28s %10.2f %10.2f %10.2f   (lifecycle / bare)
  azolla dev peak RSS: %.0f MiB
`, benchObjectives, "", "per second", "p50", "p95",
		"lifecycle approve -> DONE", lifecycle.throughput(), lifecycle.p(50).Round(time.Millisecond), lifecycle.p(95).Round(time.Millisecond),
		"bare workflow", bare.throughput(), bare.p(50).Round(time.Millisecond), bare.p(95).Round(time.Millisecond),
		"ratio", lifecycle.throughput()/bare.throughput(), float64(lifecycle.p(50))/float64(bare.p(50)),
		float64(lifecycle.p(95))/float64(bare.p(95)), float64(rss)/(1<<20))
}

// series is one side's latencies and wall time.
type series struct {
	lat  []time.Duration
	wall time.Duration
	err  error
}

func (s series) throughput() float64 { return float64(len(s.lat)) / s.wall.Seconds() }

func (s series) p(q int) time.Duration {
	l := slices.Clone(s.lat)
	slices.Sort(l)
	return l[(len(l)-1)*q/100]
}

// measure runs n operations all at once and times each.
func measure(n int, op func(i int) (time.Duration, error)) series {
	var mu sync.Mutex
	var wg sync.WaitGroup
	s := series{}
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := op(i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && s.err == nil {
				s.err = err
			}
			s.lat = append(s.lat, d)
		}()
	}
	wg.Wait()
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
func peakRSS(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

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
