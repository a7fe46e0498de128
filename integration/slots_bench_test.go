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
//     p50 of objectives approved one at a time while fifty others' runs
//     fill the run queue (a 50-run burst), against the same on the idle
//     worker. The light steps have a task queue of their own: the burst's
//     runs must not hold them back.
//   - Q2: lifecycles per second (approve to DONE, `printf ok`) on an
//     `azolla dev` with run slots (worker.max_runs 2) against one with no
//     bound (worker.max_runs 1000, as workers were before run slots); and,
//     beside them, one whose runs also take a slot claim under a
//     deployment limit of 2 (reported, not a bar). The three are alive at
//     once and take turns.
func BenchmarkSlots(b *testing.B) {
	ctx := context.Background()
	d := startDev(b, "AZOLLA_WORKER_MAX_RUNS=2", "AZOLLA_DIAZOTROPH_COMMAND_RUN=sleep 0.5; printf ok", unconfined)
	const probes, burst = 10, 50
	done := func(id string) {
		var final workflows.State
		if err := d.client.GetWorkflow(ctx, workflows.ObjectiveWorkflowID(id), "").Get(ctx, &final); err != nil {
			b.Fatal(err)
		} else if final.Step != workflows.StepDone {
			b.Fatalf("%s ended %s", id, final.Step)
		}
	}
	// probe approves id and returns the time to its workorder.
	probe := func(id string) time.Duration {
		approved := time.Now()
		if _, err := d.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "bench"}); err != nil {
			b.Fatal(err)
		}
		for {
			wo, err := d.store.GetWorkOrder(ctx, "wo-"+id+"-1")
			if err == nil {
				return wo.CreatedAt.Sub(approved)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	idleIDs := awaitingLifecycles(b, d.starter, "q1idle", probes)
	busyIDs := awaitingLifecycles(b, d.starter, "q1busy", probes)
	crowdIDs := awaitingLifecycles(b, d.starter, "q1crowd", burst)
	b.ResetTimer()
	var idle, busy series
	for _, id := range idleIDs {
		idle.lat = append(idle.lat, probe(id))
		done(id)
	}
	s := measure(burst, func(i int) (time.Duration, error) {
		_, err := d.starter.Decide(ctx, crowdIDs[i], workflows.Approve, workflows.Decision{By: "bench"})
		return 0, err
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	// The burst's fifty are scheduled, their runs queued behind the two
	// slots: the probes go now, one at a time.
	for _, id := range crowdIDs {
		for {
			if _, err := d.store.GetWorkOrder(ctx, "wo-"+id+"-1"); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, id := range busyIDs {
		busy.lat = append(busy.lat, probe(id))
	}
	backlog := 0
	for _, id := range crowdIDs {
		if st, err := d.starter.State(ctx, id); err == nil && st.Step != workflows.StepDone {
			backlog++
		}
	}
	for _, id := range append(crowdIDs, busyIDs...) {
		done(id)
	}
	d.stop()

	// Q2.
	slotted := startDev(b, "AZOLLA_WORKER_MAX_RUNS=2", "AZOLLA_DIAZOTROPH_COMMAND_RUN=printf ok", unconfined)
	limited := startDev(b, "AZOLLA_WORKER_MAX_RUNS=2", "AZOLLA_LIFECYCLE_MAX_CONCURRENT_RUNS=2",
		"AZOLLA_DIAZOTROPH_COMMAND_RUN=printf ok", unconfined)
	free := startDev(b, "AZOLLA_WORKER_MAX_RUNS=1000", "AZOLLA_DIAZOTROPH_COMMAND_RUN=printf ok", unconfined)
	sides := []*devProc{slotted, limited, free}
	ids := make([][]string, len(sides))
	for i, side := range sides {
		ids[i] = awaitingLifecycles(b, side.starter, fmt.Sprintf("q2side%d", i), benchRounds*benchPerRound)
	}
	got := make([]series, len(sides))
	for r := range benchRounds {
		for k := range sides {
			i := (k + r) % len(sides) // each side goes first, second and last in turn
			got[i] = got[i].add(approveAll(sides[i].client, sides[i].starter, ids[i][r*benchPerRound:(r+1)*benchPerRound]))
		}
	}
	b.StopTimer()
	for i, g := range got {
		if g.err != nil {
			b.Fatalf("side %d: %v", i, g.err)
		}
	}
	with, limit, without := got[0], got[1], got[2]
	q1 := float64(busy.p(50)) / float64(idle.p(50))
	q2 := with.throughput() / without.throughput()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(idle.p(50)), "q1-idle-p50-ms")
	b.ReportMetric(ms(busy.p(50)), "q1-burst-p50-ms")
	b.ReportMetric(q1, "q1-ratio")
	b.ReportMetric(with.throughput(), "q2-slots-lifecycles/s")
	b.ReportMetric(limit.throughput(), "q2-limit-lifecycles/s")
	b.ReportMetric(without.throughput(), "q2-unbounded-lifecycles/s")
	b.ReportMetric(q2, "q2-ratio")
	b.ReportMetric(limit.throughput()/without.throughput(), "q2-limit-ratio")
	fmt.Printf(`
run slots: a light step beside a burst of runs, and throughput with slots / without
  approve -> scheduled p50, idle worker (max_runs 2)                    %8.1f ms
  approve -> scheduled p50, %d runs queued (%d still queued after)     %8.1f ms   Q1 %.2f (burst / idle)
  lifecycles/s, max_runs 2                                              %8.1f      Q2 %.2f (slots / none)
  lifecycles/s, max_runs 2 and a deployment limit of 2 (slot claims)    %8.1f      %.2f of none
  lifecycles/s, max_runs 1000, no limit                                 %8.1f
`, ms(idle.p(50)), burst, backlog, ms(busy.p(50)), q1, with.throughput(), q2,
		limit.throughput(), limit.throughput()/without.throughput(), without.throughput())
}
