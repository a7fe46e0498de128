package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// BenchmarkBestOfN is BN: an objective's wall time from approval to DONE
// with three candidates against one, on one in-process worker, each
// objective alone. The stand-in agent sleeps 2 s and then writes the
// value every gate command wants, so all candidates pass and, without
// early stop, all run to the end: the ratio measures how far the
// candidates run side by side, not the CPU. Rounds alternate which side
// goes first. The agents run unconfined, as the lifecycle benchmarks'
// commands do (bench_test.go).
func BenchmarkBestOfN(b *testing.B) {
	const rounds = 3
	repo := valueRepo(b)
	w := setup(b, setupOptions{
		patch: func(p *config.PatchConfig) {
			p.Command.Run = "sleep 2; echo 42 > value.txt"
			p.EarlyStop = false
			p.Repositories = []config.RepositoryConfig{{Repository: repo, GateCommands: []string{valueBuilds, valueIs42}}}
		},
		configure: func(c *config.Config) { c.Executor.Sandbox = config.SandboxNone },
	})
	var lat [2][]time.Duration // one candidate, three
	for range b.N {
		for r := range rounds {
			order := []int{0, 1}
			if r%2 == 1 {
				order = []int{1, 0}
			}
			for _, i := range order {
				lat[i] = append(lat[i], w.bestOfNToDone(b, repo, []int{1, 3}[i], fmt.Sprintf("bn-%d-%d", r, i)))
			}
		}
	}
	mean := func(ds []time.Duration) time.Duration {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return sum / time.Duration(len(ds))
	}
	msOf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(msOf(mean(lat[0])), "one-mean-ms")
	b.ReportMetric(msOf(mean(lat[1])), "three-mean-ms")
	b.ReportMetric(float64(mean(lat[1]))/float64(mean(lat[0])), "bn-ratio")
}

// bestOfNToDone creates an objective of n attempts on repo, waits until
// it awaits approval, approves it and returns the time to DONE.
func (w *bundle) bestOfNToDone(b *testing.B, repo string, n int, name string) time.Duration {
	b.Helper()
	id := uniqueID(name)
	w.create(b, id, bestOfN(repo, n))
	w.waitStep(b, id, workflows.StepAwaitingApproval)
	start := time.Now()
	if _, err := w.starter.Decide(context.Background(), id, workflows.Approve, workflows.Decision{By: "bench"}); err != nil {
		b.Fatal(err)
	}
	st := w.waitStep(b, id, workflows.StepDone)
	took := time.Since(start)
	if st.GateResult != domain.GatePass {
		b.Fatalf("objective %s: gate %s: %s", id, st.GateResult, st.GateReason)
	}
	return took
}
