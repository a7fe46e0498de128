package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/azolla/azolla/workflows"
)

// BenchmarkSlots is a fixed-size workload (run it with -benchtime 1x) for
// run slots and limits:
//
//   - Q1: on an `azolla dev` with worker.max_runs 2 and runs of half a
//     second, the time from an objective's approval to its workorder being
//     scheduled (the workorder's created_at, written by the scheduler),
//     p50, for fifty objectives approved at once, against the same for
//     objectives approved one at a time on the idle worker. The light steps
//     have their own task queue: the burst's runs must not hold them back.
//   - Q2: lifecycles per second (approve to DONE, `printf ok`) on an
//     `azolla dev` whose runs take slots (worker.max_runs 2 and a
//     deployment limit of 2, each run holding a slot claim) against one
//     with no bound at all (worker.max_runs 1000, no limit, as workers
//     were before run slots), both alive at once, rounds alternating.
func BenchmarkSlots(b *testing.B) {
	ctx := context.Background()
	burst := startDev(b, "AZOLLA_WORKER_MAX_RUNS=2", "AZOLLA_DIAZOTROPH_COMMAND_RUN=sleep 0.5; printf ok", unconfined)
	const idle, n = 10, 50
	ids := awaitingLifecycles(b, burst.starter, "q1alone", idle)
	scheduledAfter := func(id string, approved time.Time) (time.Duration, error) {
		wo, err := burst.store.GetWorkOrder(ctx, "wo-"+id+"-1")
		if err != nil {
			return 0, err
		}
		return wo.CreatedAt.Sub(approved), nil
	}
	done := func(id string) {
		var final workflows.State
		if err := burst.client.GetWorkflow(ctx, workflows.ObjectiveWorkflowID(id), "").Get(ctx, &final); err != nil {
			b.Fatal(err)
		} else if final.Step != workflows.StepDone {
			b.Fatalf("%s ended %s", id, final.Step)
		}
	}
	b.ResetTimer()
	// Idle: one objective at a time, each to DONE before the next.
	var alone series
	for _, id := range ids {
		approved := time.Now()
		if _, err := burst.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "bench"}); err != nil {
			b.Fatal(err)
		}
		done(id)
		d, err := scheduledAfter(id, approved)
		if err != nil {
			b.Fatal(err)
		}
		alone.lat = append(alone.lat, d)
	}
	ids = awaitingLifecycles(b, burst.starter, "q1burst", n)
	approved := make([]time.Time, n)
	s := measure(n, func(i int) (time.Duration, error) {
		approved[i] = time.Now()
		_, err := burst.starter.Decide(ctx, ids[i], workflows.Approve, workflows.Decision{By: "bench"})
		return 0, err
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	var crowd series
	for i, id := range ids {
		done(id)
		d, err := scheduledAfter(id, approved[i])
		if err != nil {
			b.Fatal(err)
		}
		crowd.lat = append(crowd.lat, d)
	}
	burst.stop()

	// Q2.
	slotted := startDev(b, "AZOLLA_WORKER_MAX_RUNS=2", "AZOLLA_LIFECYCLE_MAX_CONCURRENT_RUNS=2",
		"AZOLLA_DIAZOTROPH_COMMAND_RUN=printf ok", unconfined)
	free := startDev(b, "AZOLLA_WORKER_MAX_RUNS=1000", "AZOLLA_DIAZOTROPH_COMMAND_RUN=printf ok", unconfined)
	withIDs := awaitingLifecycles(b, slotted.starter, "q2slots", benchRounds*benchPerRound)
	withoutIDs := awaitingLifecycles(b, free.starter, "q2free", benchRounds*benchPerRound)
	var with, without series
	for r := range benchRounds {
		one := func() {
			with = with.add(approveAll(slotted.client, slotted.starter, withIDs[r*benchPerRound:(r+1)*benchPerRound]))
		}
		other := func() {
			without = without.add(approveAll(free.client, free.starter, withoutIDs[r*benchPerRound:(r+1)*benchPerRound]))
		}
		if r%2 == 0 {
			one()
			other()
		} else {
			other()
			one()
		}
	}
	b.StopTimer()
	if with.err != nil || without.err != nil {
		b.Fatalf("with slots: %v, without: %v", with.err, without.err)
	}
	q1 := float64(crowd.p(50)) / float64(alone.p(50))
	q2 := with.throughput() / without.throughput()
	b.ReportMetric(float64(alone.p(50).Microseconds())/1000, "q1-idle-p50-ms")
	b.ReportMetric(float64(crowd.p(50).Microseconds())/1000, "q1-burst-p50-ms")
	b.ReportMetric(q1, "q1-ratio")
	b.ReportMetric(with.throughput(), "q2-slots-lifecycles/s")
	b.ReportMetric(without.throughput(), "q2-unbounded-lifecycles/s")
	b.ReportMetric(q2, "q2-ratio")
	fmt.Printf(`
run slots: approve -> scheduled, and throughput with slots and limits / without
  approve -> scheduled p50, one at a time on the idle worker  %8.1f ms
  approve -> scheduled p50, %d at once (max_runs 2)            %8.1f ms   Q1 %.2f (burst / idle)
  lifecycles/s, max_runs 2 + deployment limit 2 (slot claims) %8.1f
  lifecycles/s, max_runs 1000, no limit                       %8.1f      Q2 %.2f (slots / none)
`, float64(alone.p(50).Microseconds())/1000, n, float64(crowd.p(50).Microseconds())/1000, q1,
		with.throughput(), without.throughput(), q2)
}
