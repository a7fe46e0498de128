package integration

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/internal/store/dial"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workers"
)

// BenchmarkSandbox is X1: a COMMAND_DIAZOTROPH workorder's lifecycle, from
// approval to DONE, with its command in a bubblewrap sandbox, against the
// same with the command unconfined. Two workers in this process, one of
// each, serve two task queues of the shared server on stores of their own;
// rounds alternate which side goes first, and within a round objectives go
// one at a time, so each latency is one workorder's alone. The command is
// `printf ok` (`true` prints nothing and the gate fails empty content).
//
// X1 is the ratio of mean latencies, which show what a workorder costs
// (docs/benchmarks.md says why lifecycles once fell in 50 ms steps).
func BenchmarkSandbox(b *testing.B) {
	sandboxtest.RequireBwrap(b)
	const rounds, perRound = 10, 6
	boxed, plain := sandboxSide(b, config.SandboxBwrap), sandboxSide(b, config.SandboxNone)
	var lat [2][]time.Duration
	for range b.N {
		for r := range rounds {
			order := []int{0, 1}
			if r%2 == 1 {
				order = []int{1, 0}
			}
			for _, i := range order {
				s := []*starter.Starter{boxed, plain}[i]
				for k := range perRound {
					lat[i] = append(lat[i], workorderToDone(b, s, fmt.Sprintf("x1-%d-%d-%d", r, i, k)))
				}
			}
		}
	}
	p50 := func(ds []time.Duration) time.Duration { return series{lat: ds}.p(50) }
	mean := func(ds []time.Duration) time.Duration {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return sum / time.Duration(len(ds))
	}
	msOf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(msOf(mean(lat[0])), "boxed-mean-ms")
	b.ReportMetric(msOf(mean(lat[1])), "plain-mean-ms")
	b.ReportMetric(msOf(p50(lat[0])), "boxed-p50-ms")
	b.ReportMetric(msOf(p50(lat[1])), "plain-p50-ms")
	b.ReportMetric(float64(mean(lat[0]))/float64(mean(lat[1])), "x1-ratio")
}

// sandboxSide runs a worker whose executors run in mode, on a store and
// task queue of its own, until the benchmark ends, and returns its starter.
func sandboxSide(b *testing.B, mode string) *starter.Starter {
	b.Helper()
	cfg := config.DefaultFor(func(string) string { return "" })
	cfg.DataDir = b.TempDir()
	cfg.Temporal.Address = server.FrontendAddress()
	cfg.Temporal.TaskQueue = "x1-" + mode + "-" + randomHex(4)
	cfg.Lifecycle.PollInterval = 200 * time.Millisecond
	cfg.Diazotroph.Command.Run = "printf ok"
	cfg.Executor.Sandbox = mode
	cfg.Ops.Address = ""
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := dial.Open(ctx, dial.Config{Driver: config.DriverSQLite, SQLitePath: cfg.SQLitePath()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: server.FrontendAddress(), Namespace: "default", Logger: quietSDKLogger{}})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- workers.Run(ctx, workers.Options{Config: cfg, Client: c, Store: st, Identity: "x1-" + mode,
			Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	}()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
		c.Close()
		_ = st.Close()
	})
	return &starter.Starter{Client: c, Store: st, TaskQueue: cfg.Temporal.TaskQueue}
}

// workorderToDone creates objective id, waits until it awaits approval,
// then times its approval to DONE.
func workorderToDone(b *testing.B, s *starter.Starter, id string) time.Duration {
	b.Helper()
	id += "-" + randomHex(3)
	o := &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "x1", Status: domain.StatusNew, Urgency: "NORMAL"}
	if _, err := s.Create(context.Background(), o); err != nil {
		b.Fatal(err)
	}
	waitAwaitingApproval(b, s, id)
	ds := approveAll(s.Client, s, []string{id})
	if ds.err != nil {
		b.Fatal(ds.err)
	}
	return ds.lat[0]
}
