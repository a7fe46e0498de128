package controlplane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/controlplane/dbqueue"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream/redistest"
	"github.com/azolla/azolla/internal/remote/remoteworker"
	"github.com/azolla/azolla/internal/store/storetest"
)

// The recovery benchmark's settings: short enough that the repetitions
// take seconds, long enough that the few milliseconds of HTTP and store
// work around the expiry are small beside them.
const (
	recoveryTTL      = 2 * time.Second
	recoveryInterval = 500 * time.Millisecond
	recoveryReps     = 5
)

// BenchmarkRemoteRecovery (B6) is a fixed-size test, not a b.N benchmark:
// run it with -benchtime 1x. It measures how long a job is lost when its
// remote worker dies: from the death to the job's completion by another
// worker, set against the bound the protocol promises, lease TTL + reaper
// interval. The lease lapses a TTL after the last heartbeat; the reaper
// sees it at its next pass, up to an interval later; the requeue's message
// wakes the other worker's long-poll at once (the database transport in
// process, Redis's BLOCK on the XADD). So a death costs TTL plus somewhere
// in [0, interval) by where it falls between two passes, plus the
// requeue, claim and complete: a ratio between 0.8 and 1 here, about 0.9
// on average.
//
// Each repetition: worker A claims a job over HTTP, worker B starts
// long-polling for claims, A heartbeats once and dies (sends nothing more)
// at t0; B completes the requeued job the moment it gets it, at t1. A
// repetition ends just after a reaper pass (the requeue), so a next one
// started at once would die at the same point of the reaper's cycle, just
// after a pass, the worst: instead, repetition n dies (n+½)/recoveryReps of
// an interval after the previous t1, so the deaths spread evenly over the
// cycle and the median is a typical death's, the slowest near the worst.
// An uncounted repetition comes first to line the cycle up and warm the
// connections.
//
// Reported per transport, the median and the slowest of recoveryReps: the
// database transport (recovery-ratio, recovery-ms, recovery-max-ms) and
// Redis Streams (redis-recovery-ratio, redis-recovery-ms,
// redis-recovery-max-ms), each on a PostgreSQL store of its own so each
// has its own reaper leading. The two run side by side: the time is spent
// waiting for leases to lapse, not working.
func BenchmarkRemoteRecovery(b *testing.B) {
	ctx := context.Background()
	cfg := controlplane.Config{LeaseTTL: recoveryTTL, ReaperInterval: recoveryInterval}

	dbStore := storetest.NewPostgres(b)
	dtr, err := dbqueue.New(dbStore, dbqueue.Options{LeaseTTL: recoveryTTL})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = dtr.Close() })
	redisURL := redistest.URL(b)
	rtr, err := redisstream.New(ctx, redisstream.Options{URL: redisURL, Prefix: redistest.Prefix(b, redisURL),
		LeaseTTL: recoveryTTL})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rtr.Close() })
	redisStore := storetest.NewPostgres(b)

	sides := []struct {
		name string
		svc  *controlplane.Service
	}{
		{"database", controlplane.New(dbStore, dtr, nil, nil, withInstance(cfg, "bench-recovery-db"))},
		{"redis", controlplane.New(redisStore, rtr, nil, nil, withInstance(cfg, "bench-recovery-redis"))},
	}
	times := make([][]time.Duration, len(sides))
	errs := make([]error, len(sides))
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, s := range sides {
		reaper := controlplane.NewReaper(s.svc)
		reaper.Start(ctx)
		b.Cleanup(reaper.Stop)
		url := serveWorkerAPI(b, s.svc)
		r := recoverySide{svc: s.svc, a: newWorkerClient(b, url), b: newWorkerClient(b, url)}
		wg.Go(func() {
			last, _, err := r.once(ctx, time.Time{})
			if err != nil {
				errs[i] = fmt.Errorf("%s transport, warm-up: %w", s.name, err)
				return
			}
			for n := range recoveryReps {
				phase := (2*time.Duration(n) + 1) * recoveryInterval / (2 * recoveryReps)
				var d time.Duration
				last, d, err = r.once(ctx, last.Add(phase))
				if err != nil {
					errs[i] = fmt.Errorf("%s transport, repetition %d: %w", s.name, n, err)
					return
				}
				times[i] = append(times[i], d)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}

	bound := recoveryTTL + recoveryInterval
	dbMedian, redisMedian := median(times[0]), median(times[1])
	b.ReportMetric(float64(dbMedian)/float64(bound), "recovery-ratio")
	b.ReportMetric(ms(dbMedian), "recovery-ms")
	b.ReportMetric(ms(slices.Max(times[0])), "recovery-max-ms")
	b.ReportMetric(float64(redisMedian)/float64(bound), "redis-recovery-ratio")
	b.ReportMetric(ms(redisMedian), "redis-recovery-ms")
	b.ReportMetric(ms(slices.Max(times[1])), "redis-recovery-max-ms")
	fmt.Printf("\nremote worker death -> completion by another, lease TTL %s + reaper interval %s = %s, %d repetitions\n",
		recoveryTTL, recoveryInterval, bound, recoveryReps)
	for i, s := range sides {
		fmt.Printf("  %-9s median %s (ratio %.3f), each: %s\n", s.name, median(times[i]).Round(time.Millisecond),
			float64(median(times[i]))/float64(bound), roundAll(times[i]))
	}
}

func withInstance(cfg controlplane.Config, id string) controlplane.Config {
	cfg.InstanceID = id
	return cfg
}

// recoverySide is one transport's Service with its two workers: a, who
// dies, and b, who takes the job over.
type recoverySide struct {
	svc  *controlplane.Service
	a, b *remoteworker.Client
}

// once is one repetition, A dying at dieAt or, if that has passed, as soon
// as it has heartbeated. It returns t1 and t1 - t0.
func (r recoverySide) once(ctx context.Context, dieAt time.Time) (time.Time, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*(recoveryTTL+recoveryInterval))
	defer cancel()
	j, err := r.svc.Enqueue(ctx, controlplane.EnqueueParams{JobType: "BENCH", Stream: benchStream,
		Payload: json.RawMessage(`{"n":1}`)})
	if err != nil {
		return time.Time{}, 0, err
	}
	claim := controlplane.ClaimRequest{WorkerID: "worker-a", Streams: []string{benchStream}, MaxWaitMS: 1000}
	job, err := r.a.Claim(ctx, claim)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("worker A's claim: %w", err)
	}
	if !job.Claimed || job.JobID != j.JobID {
		return time.Time{}, 0, fmt.Errorf("worker A claimed %+v, want job %s", job, j.JobID)
	}

	type taken struct {
		at  time.Time
		err error
	}
	done := make(chan taken, 1)
	go func() {
		for {
			got, err := r.b.Claim(ctx, controlplane.ClaimRequest{WorkerID: "worker-b", Streams: []string{benchStream},
				MaxWaitMS: int(jobsClaimWait / time.Millisecond)})
			switch {
			case err != nil:
				done <- taken{err: fmt.Errorf("worker B's claim: %w", err)}
				return
			case !got.Claimed:
				continue
			case got.JobID != j.JobID:
				done <- taken{err: fmt.Errorf("worker B claimed job %s, want %s", got.JobID, j.JobID)}
				return
			}
			err = complete(ctx, r.b, "worker-b", got)
			done <- taken{at: time.Now(), err: err}
			return
		}
	}()

	time.Sleep(time.Until(dieAt))
	if _, err := r.a.Heartbeat(ctx, controlplane.HeartbeatRequest{WorkerID: "worker-a", JobID: job.JobID,
		LeaseToken: job.LeaseToken}); err != nil {
		return time.Time{}, 0, fmt.Errorf("worker A's heartbeat: %w", err)
	}
	t0 := time.Now() // worker A is dead from here on
	t := <-done
	if t.err != nil {
		return time.Time{}, 0, t.err
	}
	return t.at, t.at.Sub(t0), nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func roundAll(d []time.Duration) string {
	s := make([]string, len(d))
	for i, v := range d {
		s[i] = v.Round(time.Millisecond).String()
	}
	return strings.Join(s, " ")
}
