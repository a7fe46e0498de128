package activities_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// BenchmarkSandboxRunStep times the runner step of a COMMAND_DIAZOTROPH
// workorder whose command is `true` (claim, run, output bundle, release,
// on the embedded SQLite store) with the command in a bubblewrap sandbox
// and unconfined, both with the default limits and in alternating rounds
// of the same run, and the command's execution alone the same way. It
// shows what the sandbox's start-up (namespaces, mounts, one more exec)
// costs a run in milliseconds; X1 (integration.BenchmarkSandbox) sets
// that against a whole workorder.
func BenchmarkSandboxRunStep(b *testing.B) {
	sandboxtest.RequireBwrap(b)
	const rounds, perRound = 10, 20
	st := storetest.NewSQLite(b)
	boxed, plain := newRunner(b, st, sandbox.ModeBwrap), newRunner(b, st, sandbox.ModeNone)
	var runs, execs [2][]time.Duration
	for range b.N {
		for r := range rounds {
			for i, l := range []*activities.Steps{boxed, plain} {
				for k := range perRound {
					id := fmt.Sprintf("x1-%d-%d-%d-%d", r, i, k, time.Now().UnixNano()%1e6)
					wo := schedule(b, l, id)
					start := time.Now()
					if _, err := l.Run(context.Background(), activities.RunInput{WorkOrderID: wo}); err != nil {
						b.Fatal(err)
					}
					runs[i] = append(runs[i], time.Since(start))
				}
				execs[i] = append(execs[i], timeExecute(b, l, perRound)...)
			}
		}
	}
	b.ReportMetric(ms(median(runs[0])), "boxed-run-p50-ms")
	b.ReportMetric(ms(median(runs[1])), "plain-run-p50-ms")
	b.ReportMetric(float64(median(runs[0]))/float64(median(runs[1])), "run-step-ratio")
	b.ReportMetric(ms(median(execs[0])), "boxed-exec-p50-ms")
	b.ReportMetric(ms(median(execs[1])), "plain-exec-p50-ms")
	b.ReportMetric(float64(median(execs[0]))/float64(median(execs[1])), "exec-ratio")
}

// newRunner is the steps on st whose only diazotroph runs `true` through
// an executor of the given mode with the default limits.
func newRunner(b *testing.B, st store.Store, mode sandbox.Mode) *activities.Steps {
	b.Helper()
	dir := b.TempDir()
	h, err := sandbox.New(sandbox.Options{Mode: mode, RunsDir: filepath.Join(dir, "runs"), Hide: []string{dir},
		Limits: sandbox.Limits{Processes: 1024, FileSize: 4 << 30, Memory: 8 << 30}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	ex, err := h.Executor(sandbox.Policy{Name: "diazotroph.command", Network: sandbox.NetworkHost}, nil)
	if err != nil {
		b.Fatal(err)
	}
	cmd := diazotroph.NewCommand(diazotroph.CommandOptions{Run: "true", Dir: filepath.Join(dir, "work"), Executor: ex})
	return &activities.Steps{Claimant: activities.Claimant{Claims: claim.NewBridge(st), Identity: "bench-" + string(mode),
		LeaseTTL: time.Minute}, Store: st, Diazotrophs: diazotroph.NewRegistry(cmd), Diazotroph: diazotroph.CommandType,
		Budget: time.Minute}
}

// schedule stores an approved objective and returns its workorder.
func schedule(b *testing.B, l *activities.Steps, id string) string {
	b.Helper()
	ctx := context.Background()
	o := storetest.Objective(id)
	if err := l.Store.CreateObjective(ctx, o); err != nil {
		b.Fatal(err)
	}
	ev, err := l.Ready(ctx, activities.ReadyInput{ObjectiveID: id, Mode: activities.ReadyApprove})
	if err != nil {
		b.Fatal(err)
	}
	res, err := l.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
	if err != nil || res.WorkOrder == nil {
		b.Fatalf("schedule %s: %v (%s)", id, err, res.Reason)
	}
	return res.WorkOrder.WorkOrderID
}

// timeExecute times n executions of l's command alone.
func timeExecute(b *testing.B, l *activities.Steps, n int) []time.Duration {
	b.Helper()
	d, err := l.Diazotrophs.Lookup(diazotroph.CommandType)
	if err != nil {
		b.Fatal(err)
	}
	req := diazotroph.Request{WorkOrder: domain.WorkOrder{WorkOrderID: "wo-exec-1"}, Budget: time.Minute}
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if _, err := d.Execute(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		out = append(out, time.Since(start))
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
