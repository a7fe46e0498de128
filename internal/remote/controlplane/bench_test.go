package controlplane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
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

// The workload of BenchmarkRemoteJobs: jobsRounds rounds per transport,
// each taking jobsPerRound jobs through jobsWorkers remote workers.
const (
	jobsWorkers   = 4
	jobsRounds    = 4
	jobsPerRound  = 150
	jobsWarmup    = 20
	jobsClaimWait = 5 * time.Second
	benchStream   = "bench"
)

// BenchmarkRemoteJobs (B5) is a fixed-size load test, not a b.N benchmark:
// run it with -benchtime 1x. It takes jobs through the control plane's worker path
// over real HTTP (an httptest server on the Service's Router, the remote
// worker's Client) with the Redis Streams transport, and the same path with
// the database transport, both on one PostgreSQL store (the production
// pairing), in rounds that alternate which transport goes first so drift in
// the machine's load falls on both.
//
// Each round starts jobsWorkers workers, each looping claim (long-poll) →
// one heartbeat → complete for its share of the round's jobs, and at the
// same moment a producer that enqueues the round's jobs with
// Service.Enqueue as fast as it returns. Enqueue is in the timed path: a
// round runs from that start to the last completion, so the workers' first
// claims wait on the long-poll and are woken by the transport, as in
// production. Claim latency is each claim that got a job, from request to
// answer.
func BenchmarkRemoteJobs(b *testing.B) {
	ctx := context.Background()
	st := storetest.NewPostgres(b)
	redisURL := redistest.URL(b)
	rtr, err := redisstream.New(ctx, redisstream.Options{URL: redisURL, Prefix: redistest.Prefix(b, redisURL)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rtr.Close() })
	dtr, err := dbqueue.New(st, dbqueue.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = dtr.Close() })
	redisSide := newJobsSide(b, controlplane.New(st, rtr, nil, nil, controlplane.Config{InstanceID: "bench-redis"}))
	dbSide := newJobsSide(b, controlplane.New(st, dtr, nil, nil, controlplane.Config{InstanceID: "bench-db"}))

	// Connections, consumer groups and query plans, on neither side's clock.
	for _, s := range []*jobsSide{redisSide, dbSide} {
		if _, err := s.round(ctx, jobsWarmup); err != nil {
			b.Fatalf("warm-up: %v", err)
		}
	}
	b.ResetTimer()
	var redis, db jobsResult
	for r := range jobsRounds {
		sides := []*jobsSide{redisSide, dbSide}
		totals := []*jobsResult{&redis, &db}
		if r%2 == 1 {
			slices.Reverse(sides)
			slices.Reverse(totals)
		}
		for i, s := range sides {
			res, err := s.round(ctx, jobsPerRound)
			if err != nil {
				b.Fatalf("round %d: %v", r, err)
			}
			totals[i].add(res)
		}
	}
	b.StopTimer()

	b.ReportMetric(redis.perSecond(), "redis-jobs/s")
	b.ReportMetric(db.perSecond(), "db-jobs/s")
	b.ReportMetric(redis.perSecond()/db.perSecond(), "jobs-ratio")
	b.ReportMetric(ms(redis.claimP(50)), "redis-claim-p50-ms")
	b.ReportMetric(ms(db.claimP(50)), "db-claim-p50-ms")
	fmt.Printf(`
remote jobs, claim -> heartbeat -> complete over HTTP, %d workers, %d rounds of %d jobs per transport, alternating, PostgreSQL store
  %-22s %10s %14s %14s
  %-22s %10.1f %14.2f %14.2f
  %-22s %10.1f %14.2f %14.2f
  %-22s %10.2f   (redis / database)
`, jobsWorkers, jobsRounds, jobsPerRound, "transport", "jobs/s", "claim p50 ms", "claim p95 ms",
		"redis streams", redis.perSecond(), ms(redis.claimP(50)), ms(redis.claimP(95)),
		"database", db.perSecond(), ms(db.claimP(50)), ms(db.claimP(95)),
		"ratio", redis.perSecond()/db.perSecond())
}

// jobsSide is one transport's Service, served over HTTP, and its workers'
// clients.
type jobsSide struct {
	svc     *controlplane.Service
	workers []*remoteworker.Client
}

func newJobsSide(b *testing.B, svc *controlplane.Service) *jobsSide {
	url := serveWorkerAPI(b, svc)
	s := &jobsSide{svc: svc}
	for range jobsWorkers {
		s.workers = append(s.workers, newWorkerClient(b, url))
	}
	return s
}

// jobsResult is one side's jobs, wall time and claim latencies.
type jobsResult struct {
	jobs   int
	wall   time.Duration
	claims []time.Duration
}

func (r *jobsResult) add(o jobsResult) {
	r.jobs += o.jobs
	r.wall += o.wall
	r.claims = append(r.claims, o.claims...)
}

func (r *jobsResult) perSecond() float64 { return float64(r.jobs) / r.wall.Seconds() }

func (r *jobsResult) claimP(q int) time.Duration {
	l := slices.Clone(r.claims)
	slices.Sort(l)
	return l[(len(l)-1)*q/100]
}

// round enqueues n jobs while the workers take them through, each worker
// its share, and returns once every one is complete.
func (s *jobsSide) round(ctx context.Context, n int) (jobsResult, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex
	var res jobsResult
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		for i := range n {
			_, err := s.svc.Enqueue(ctx, controlplane.EnqueueParams{JobType: "BENCH", Stream: benchStream,
				Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
			if err != nil {
				cancel(fmt.Errorf("enqueue: %w", err))
				return
			}
		}
	})
	for w, c := range s.workers {
		share := n / len(s.workers)
		if w < n%len(s.workers) {
			share++
		}
		wg.Go(func() {
			id := fmt.Sprintf("bench-worker-%d", w)
			for done := 0; done < share; {
				t := time.Now()
				job, err := c.Claim(ctx, controlplane.ClaimRequest{WorkerID: id, Streams: []string{benchStream},
					MaxWaitMS: int(jobsClaimWait / time.Millisecond)})
				lat := time.Since(t)
				if err == nil && job.Claimed {
					err = runJob(ctx, c, id, job)
					done++
				}
				if err != nil {
					cancel(err)
					return
				}
				if job.Claimed {
					mu.Lock()
					res.claims = append(res.claims, lat)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	res.jobs, res.wall = n, time.Since(start)
	return res, context.Cause(ctx)
}

// runJob is a worker's part after a claim: one heartbeat, then complete.
func runJob(ctx context.Context, c *remoteworker.Client, workerID string, job *controlplane.ClaimResponse) error {
	if _, err := c.Heartbeat(ctx, controlplane.HeartbeatRequest{WorkerID: workerID, JobID: job.JobID,
		LeaseToken: job.LeaseToken}); err != nil {
		return err
	}
	return complete(ctx, c, workerID, job)
}

func complete(ctx context.Context, c *remoteworker.Client, workerID string, job *controlplane.ClaimResponse) error {
	resp, err := c.Complete(ctx, controlplane.CompleteRequest{WorkerID: workerID, JobID: job.JobID,
		AttemptID: job.AttemptID, LeaseToken: job.LeaseToken, Stream: job.Stream.Name,
		MessageID: job.Stream.MessageID, Result: json.RawMessage(`{"ok":true}`)})
	if err == nil && !resp.Ack {
		err = fmt.Errorf("complete job %s: not acknowledged", job.JobID)
	}
	return err
}

// serveWorkerAPI serves svc's worker API, without tokens, on a loopback
// httptest server closed at cleanup, and returns its URL.
func serveWorkerAPI(b *testing.B, svc *controlplane.Service) string {
	srv := httptest.NewServer(svc.Router(controlplane.AllowUnauthenticated))
	b.Cleanup(srv.Close)
	return srv.URL
}

// newWorkerClient is a remote worker's client of url. The server takes any
// token; the client insists on one.
func newWorkerClient(b *testing.B, url string) *remoteworker.Client {
	c, err := remoteworker.NewClient(remoteworker.ClientOptions{BaseURL: url, Token: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// ms is d in (fractional) milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
