package integration

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// BenchmarkEnvironment is X2: an objective on the Go fixture repository
// (one dependency, a failing test the stand-in agent fixes, `go test
// ./...` as the gate), from approval to DONE, with its environment warm
// against with none on the host (its directory removed first, so the run
// downloads the module and compiles what the gate needs). Rounds alternate
// cold and warm on one worker; the ratio is of the means.
func BenchmarkEnvironment(b *testing.B) {
	const rounds = 4
	proxy, sum := goProxy(b)
	w := setupRepository(b, goRepository(b, sum), fixWrld, []string{"go test ./..."},
		[]string{"GOPROXY=" + proxy, "GOSUMDB=off"}, nil)
	var cold, warm []time.Duration
	for range b.N {
		for range rounds {
			if err := os.RemoveAll(w.cfg.EnvironmentsDir()); err != nil {
				b.Fatal(err)
			}
			cold = append(cold, w.timeToDone(b, uniqueID("x2-cold"), "environment built in"))
			warm = append(warm, w.timeToDone(b, uniqueID("x2-warm"), "environment warm"))
		}
	}
	mean := func(ds []time.Duration) float64 {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return float64(sum) / float64(len(ds)) / float64(time.Millisecond)
	}
	b.ReportMetric(mean(cold), "cold-mean-ms")
	b.ReportMetric(mean(warm), "warm-mean-ms")
	b.ReportMetric(mean(warm)/mean(cold), "x2-ratio")
}

// timeToDone approves a new objective on the repository and returns how
// long it took to reach DONE; its run's notes must say note.
func (w *setupWorld) timeToDone(b *testing.B, id, note string) time.Duration {
	b.Helper()
	w.create(b, id, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = w.repo, "main", "command"
	})
	w.waitStep(b, id, workflows.StepAwaitingApproval)
	begin := time.Now()
	if _, err := w.starter.Decide(context.Background(), id, workflows.Approve, workflows.Decision{By: "bench"}); err != nil {
		b.Fatal(err)
	}
	w.waitStep(b, id, workflows.StepDone)
	took := time.Since(begin)
	wos, err := w.store.ListWorkOrders(context.Background(), store.ListWorkOrdersParams{ObjectiveID: id})
	if err != nil || len(wos) != 1 {
		b.Fatalf("workorders of %s: %v (%d)", id, err, len(wos))
	}
	bundle, err := w.store.GetOutputBundle(context.Background(), wos[0].WorkOrderID)
	if err != nil {
		b.Fatal(err)
	}
	if rr, err := w.store.GetRunRecord(context.Background(), wos[0].WorkOrderID); err != nil || rr.GateResult != domain.GatePass {
		b.Fatalf("%s did not pass: %v %+v", id, err, rr)
	}
	if !strings.Contains(bundle.Notes, note) {
		b.Fatalf("%s: notes do not say %q:\n%s", id, note, bundle.Notes)
	}
	return took
}
