package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
)

// BenchmarkTrack's workload, on top of BenchmarkLifecycle's benchRounds
// rounds of benchPerRound lifecycles approved at once: trackBatches batches
// of trackBatch captures added benchPerRound at a time, one after each of
// the first trackBatches rounds; and in every round trackSolo pairs of one
// capture on an idle track and one lifecycle alone, alternating which goes
// first. One batch takes two or three triage rounds, about half a second,
// so a single one moved captures/s by half; the batches are pooled.
const (
	trackBatch   = 50
	trackBatches = 3
	trackSolo    = 3
)

// BenchmarkTrack is a fixed-size workload, not a b.N benchmark (run it with
// -benchtime 1x). On one `azolla dev` process (COMMAND_DIAZOTROPH running
// `printf ok`, the built-in TRIAGE_DIAZOTROPH) it measures the
// task-management track next to the ticket lifecycle, in the same run:
//
//   - captures/s: batches of trackBatch captures added the way `azolla
//     capture add` adds one (the capture and its CAPTURE_READY event in one
//     transaction, then the event handed to the track by update-with-start),
//     each timed from its first add until every capture is PROCESSED and the
//     objective it became exists NEW, pooled over trackBatches batches;
//     against lifecycles/s, approve -> DONE, measured as
//     BenchmarkLifecycle measures it (rounds of benchPerRound at once).
//   - triage share (T2): the batches' triage rounds, each from its context
//     snapshot to its run record, per capture they took; against the wall
//     time per lifecycle of those rounds of lifecycles (1 / lifecycles/s).
//     Unlike captures/s, it leaves out how fast captures are added and
//     handed over, which moves with the machine's load.
//   - track latency: one capture added on an idle track, timed until it is
//     PROCESSED (its triage workorder scheduled, run and gated); against one
//     lifecycle approved alone, approve -> DONE (its workorder scheduled, run
//     and gated). Both are one workorder through Schedule, Run and Gate, on
//     an otherwise idle server, so their p50s are compared alone; the p50 of
//     lifecycles approved benchPerRound at once is reported beside it.
//
// The track is started (and its first run's recovery done) by one capture
// before anything is timed, as the lifecycles are started before theirs.
// The proposed objectives get their lifecycles from the dev process's
// poller, awaiting approval: each batch waits for that before the next
// round starts, so the hand-over falls on no measured window. It also reports how many triage rounds the batches took.
func BenchmarkTrack(b *testing.B) {
	ctx := context.Background()
	d := startDev(b, "AZOLLA_DIAZOTROPH_COMMAND_RUN=printf ok", unconfined)
	c, s := d.client, d.starter
	track := config.DefaultTrack

	batchIDs := awaitingLifecycles(b, s, "bench-batch", benchRounds*benchPerRound)
	soloIDs := awaitingLifecycles(b, s, "bench-solo", benchRounds*trackSolo)

	// add stores a capture with its CAPTURE_READY event and hands the event
	// to the track, as `azolla capture add` does.
	add := func(id string) error {
		ev, err := storeCapture(ctx, d.store, id, "bench", "Bench capture "+id+"\n- it becomes a proposed objective")
		if err != nil {
			return err
		}
		if _, err := s.Enqueue(ctx, track, ev); err != nil {
			return fmt.Errorf("enqueue capture %s: %w", id, err)
		}
		return nil
	}
	// processed says whether the capture is PROCESSED, and fails unless it
	// became one objective, NEW.
	processed := func(id string) (bool, error) {
		cb, err := d.store.GetCaptureBuffer(ctx, id)
		if err != nil || cb.Status != domain.CaptureProcessed {
			return false, err
		}
		if len(cb.ObjectiveIDs) != 1 {
			return true, fmt.Errorf("capture %s became %d objectives, not 1", id, len(cb.ObjectiveIDs))
		}
		o, err := d.store.GetObjective(ctx, cb.ObjectiveIDs[0])
		if err != nil {
			return true, fmt.Errorf("objective of capture %s: %w", id, err)
		}
		if o.Status != domain.StatusNew {
			return true, fmt.Errorf("objective %s of capture %s is %s, not NEW", o.ObjectiveID, id, o.Status)
		}
		return true, nil
	}
	waitProcessed := func(ids ...string) error {
		deadline := time.Now().Add(time.Minute)
		for _, id := range ids {
			for {
				done, err := processed(id)
				if err != nil {
					return err
				}
				if done {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("capture %s not processed within a minute", id)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		return nil
	}
	// waitIdle waits until the track has nothing active or waiting, so a
	// capture measured alone finds it idle.
	waitIdle := func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			st, err := s.TrackState(ctx, track)
			if err == nil && st.Active == nil && len(st.WaitingTriage)+len(st.WaitingManifest) == 0 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		b.Fatalf("track %s never idle\n%s", track, d.out.String())
	}

	if err := add("cap-bench-warmup"); err != nil {
		b.Fatal(err)
	}
	if err := waitProcessed("cap-bench-warmup"); err != nil {
		b.Fatalf("%v\n%s", err, d.out.String())
	}

	soloCapture := func(id string) series {
		waitIdle()
		return measure(1, func(int) (time.Duration, error) {
			start := time.Now()
			err := add(id)
			if err == nil {
				err = waitProcessed(id)
			}
			return time.Since(start), err
		})
	}
	// roundTime is how long the triage workorder woID took, from its
	// context snapshot (the round's start) to the gate's run record.
	roundTime := func(woID string) (time.Duration, error) {
		wo, err := d.store.GetWorkOrder(ctx, woID)
		if err != nil {
			return 0, err
		}
		snap, err := d.store.GetContextSnapshot(ctx, wo.ContextSnapshotID)
		if err != nil {
			return 0, err
		}
		rr, err := d.store.GetRunRecord(ctx, woID)
		if err != nil {
			return 0, err
		}
		return rr.CreatedAt.Sub(snap.CreatedAt), nil
	}
	var triageTime time.Duration // the batches' triage rounds, summed
	batch := func(k int) (series, int) {
		ids := make([]string, trackBatch)
		for i := range ids {
			ids[i] = fmt.Sprintf("cap-bench-batch-%d-%d", k, i)
		}
		waitIdle()
		errs := make([]error, trackBatch)
		start := time.Now()
		bounded(trackBatch, benchPerRound, func(i int) { errs[i] = add(ids[i]) })
		err := errors.Join(errs...)
		if err == nil {
			err = waitProcessed(ids...)
		}
		wall := time.Since(start)
		// The triage rounds the batch took: its captures' workorders.
		rounds := map[string]bool{}
		var proposed []string
		for _, id := range ids {
			if cb, gerr := d.store.GetCaptureBuffer(ctx, id); gerr == nil {
				rounds[cb.WorkOrderID] = true
				proposed = append(proposed, cb.ObjectiveIDs...)
			}
		}
		for woID := range rounds {
			if err == nil {
				var took time.Duration
				took, err = roundTime(woID)
				triageTime += took
			}
		}
		// The poller hands the proposals over after the batch: wait for it,
		// so that load falls on no measured window.
		if err == nil {
			for _, id := range proposed {
				waitAwaitingApproval(b, s, id)
			}
		}
		return series{lat: []time.Duration{wall}, wall: wall, err: err}, len(rounds)
	}

	b.ResetTimer()
	var lifecycle, lifeSolo, trackLat, captures series
	var batchRounds int
	for r := range benchRounds {
		lifecycle = lifecycle.add(approveAll(c, s, batchIDs[r*benchPerRound:(r+1)*benchPerRound]))
		for i := range trackSolo {
			capID := fmt.Sprintf("cap-bench-solo-%d-%d", r, i)
			lifeID := soloIDs[r*trackSolo+i]
			if (r+i)%2 == 0 {
				trackLat = trackLat.add(soloCapture(capID))
				lifeSolo = lifeSolo.add(approveAll(c, s, []string{lifeID}))
			} else {
				lifeSolo = lifeSolo.add(approveAll(c, s, []string{lifeID}))
				trackLat = trackLat.add(soloCapture(capID))
			}
		}
		if r < trackBatches {
			se, rounds := batch(r)
			captures, batchRounds = captures.add(se), batchRounds+rounds
		}
	}
	b.StopTimer()
	for _, se := range []series{lifecycle, lifeSolo, trackLat, captures} {
		if se.err != nil {
			b.Fatalf("%v\n%s", se.err, d.out.String())
		}
	}

	capturesPerS := float64(len(captures.lat)*trackBatch) / captures.wall.Seconds() // one latency per batch
	latRatio := float64(trackLat.p(50)) / float64(lifeSolo.p(50))
	// T2: a capture's share of its triage round against a lifecycle's share
	// of the lifecycles' wall time at benchPerRound at once. Under 1, the
	// one serial track proposes objectives faster than the workers finish
	// lifecycles, so triage is not what holds them back.
	triagePerCapture := triageTime / time.Duration(len(captures.lat)*trackBatch)
	perLifecycle := time.Duration(float64(time.Second) / lifecycle.throughput())
	t2 := float64(triagePerCapture) / float64(perLifecycle)
	b.ReportMetric(capturesPerS, "captures/s")
	b.ReportMetric(lifecycle.throughput(), "lifecycles/s")
	b.ReportMetric(capturesPerS/lifecycle.throughput(), "captures-per-s-ratio")
	b.ReportMetric(float64(batchRounds), "batch-triage-rounds")
	b.ReportMetric(float64(triagePerCapture.Microseconds())/1000, "triage-ms-per-capture")
	b.ReportMetric(t2, "triage-share-ratio")
	b.ReportMetric(float64(trackLat.p(50).Milliseconds()), "track-p50-ms")
	b.ReportMetric(float64(trackLat.p(95).Milliseconds()), "track-p95-ms")
	b.ReportMetric(float64(lifeSolo.p(50).Milliseconds()), "lifecycle-alone-p50-ms")
	b.ReportMetric(float64(lifeSolo.p(95).Milliseconds()), "lifecycle-alone-p95-ms")
	b.ReportMetric(float64(lifecycle.p(50).Milliseconds()), "lifecycle-p50-ms")
	b.ReportMetric(latRatio, "track-latency-ratio")
	fmt.Printf(`
task-management track vs objective lifecycle, same azolla dev server
  %-44s %10s %10s %10s
  %-44s %10.1f %10s %10s   (%d triage rounds)
  %-44s %10.1f %10s %10s
  %-44s %10s %10s %10s
  %-44s %10s %10s %10s
  ratio: captures/s / lifecycles/s %.2f; track p50 / lifecycle alone p50 %.2f (/ %d at once p50 %.2f)
  triage %s per capture within its round / %s per lifecycle at %d at once: %.2f
`, "", "per second", "p50", "p95",
		fmt.Sprintf("%d x %d captures, add -> PROCESSED, %d at once", trackBatches, trackBatch, benchPerRound), capturesPerS, "", "", batchRounds,
		fmt.Sprintf("lifecycles approve -> DONE, %d at once", benchPerRound), lifecycle.throughput(),
		lifecycle.p(50).Round(time.Millisecond), lifecycle.p(95).Round(time.Millisecond),
		fmt.Sprintf("one capture on an idle track (%d)", len(trackLat.lat)), "",
		trackLat.p(50).Round(time.Millisecond), trackLat.p(95).Round(time.Millisecond),
		fmt.Sprintf("one lifecycle alone (%d)", len(lifeSolo.lat)), "",
		lifeSolo.p(50).Round(time.Millisecond), lifeSolo.p(95).Round(time.Millisecond),
		capturesPerS/lifecycle.throughput(), latRatio, benchPerRound,
		float64(trackLat.p(50))/float64(lifecycle.p(50)),
		triagePerCapture.Round(10*time.Microsecond), perLifecycle.Round(10*time.Microsecond), benchPerRound, t2)
}
