package claim_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// The workload of every measurement: benchWorkers goroutines, each making
// benchOps calls. Acquisitions spread over benchResources resources with a
// lease of 40 logical clock steps, so leases lapse and are taken over.
const (
	benchWorkers   = 32
	benchResources = 8
	benchOps       = 600
	benchTTL       = 40 * time.Millisecond
)

// plainTable has the claims table's shape; the baselines write it with the
// simplest SQL that could do the job.
var plainTable = map[string]string{
	"sqlite": `CREATE TABLE plain_claims (resource_type TEXT NOT NULL, resource_id TEXT NOT NULL, owner_id TEXT NOT NULL,
		lease_expires_at TEXT NOT NULL, heartbeat_at TEXT NOT NULL, claim_version INTEGER NOT NULL, released_at TEXT,
		PRIMARY KEY (resource_type, resource_id))`,
	"postgres": `CREATE TABLE plain_claims (resource_type TEXT NOT NULL, resource_id TEXT NOT NULL, owner_id TEXT NOT NULL,
		lease_expires_at TIMESTAMPTZ NOT NULL, heartbeat_at TIMESTAMPTZ NOT NULL, claim_version BIGINT NOT NULL,
		released_at TIMESTAMPTZ, PRIMARY KEY (resource_type, resource_id))`,
}

type benchRow struct {
	backend, workload       string
	azolla, baseline        float64 // operations per second
	granted, baseGranted    int
	doubleGrants, baseDoubl int
}

// BenchmarkClaims prints, per backend, the bridge's contended acquisitions
// per second next to a plain UPDATE ... WHERE lease_expires_at <= now ...
// RETURNING loop, and CAS renewals per second next to plain primary-key
// UPDATEs, all measured in this run, in alternating rounds. It reports; it
// never fails on speed. It is a fixed-size workload, not a b.N benchmark:
// run it with -benchtime=1x.
func BenchmarkClaims(b *testing.B) {
	var rows []benchRow
	for _, be := range storetest.Backends() {
		s := be.Open(b)
		setupPlain(b, s)
		acq := benchRow{backend: be.Name, workload: fmt.Sprintf("acquire, %d workers on %d resources", benchWorkers, benchResources)}
		var bridgeRec, plainRec recorder
		acq.azolla, acq.baseline = compare(b, bridgeAcquire(s, &bridgeRec), plainAcquire(s, &plainRec))
		acq.granted, acq.doubleGrants = len(bridgeRec.tenures), bridgeRec.doubleGrants()
		acq.baseGranted, acq.baseDoubl = len(plainRec.tenures), plainRec.doubleGrants()
		ren := benchRow{backend: be.Name, workload: fmt.Sprintf("renew, %d workers on own resource", benchWorkers)}
		ren.azolla, ren.baseline = compare(b, bridgeRenew(b, s), plainRenew(s))
		rows = append(rows, acq, ren)
		b.ReportMetric(acq.azolla, be.Name+"-acquire/s")
		b.ReportMetric(acq.azolla/acq.baseline, be.Name+"-acquire-ratio")
		b.ReportMetric(float64(acq.doubleGrants), be.Name+"-double-grants")
		b.ReportMetric(ren.azolla/ren.baseline, be.Name+"-renew-ratio")
	}
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "backend\tworkload\tazolla ops/s\tbaseline ops/s\tratio\tgrants (baseline)\tdouble grants (baseline)\t")
	for _, r := range rows {
		grants, doubles := "-", "-"
		if r.granted > 0 {
			grants = fmt.Sprintf("%d (%d)", r.granted, r.baseGranted)
			doubles = fmt.Sprintf("%d (%d)", r.doubleGrants, r.baseDoubl)
		}
		fmt.Fprintf(w, "%s\t%s\t%.0f\t%.0f\t%.2f\t%s\t%s\t\n", r.backend, r.workload, r.azolla, r.baseline, r.azolla/r.baseline, grants, doubles)
	}
	_ = w.Flush()
}

func setupPlain(b *testing.B, s *sqlstore.Store) {
	ctx := context.Background()
	if _, err := s.DB().ExecContext(ctx, plainTable[s.Dialect()]); err != nil {
		b.Fatalf("create plain table: %v", err)
	}
	for i := range benchWorkers {
		// Rows for the acquire baseline (the first benchResources) and one per
		// worker for the renew baseline, all expired at the clock's origin.
		_, err := s.DB().ExecContext(ctx, s.Rebind(`INSERT INTO plain_claims VALUES ($1, $2, 'nobody', $3, $3, 0, NULL)`),
			domain.ResourceWorkOrder, fmt.Sprintf("res-%d", i), s.EncodeTime(storetest.T0))
		if err != nil {
			b.Fatalf("seed plain table: %v", err)
		}
	}
}

// op is one call of a workload by one of the benchWorkers workers.
type op func(worker int, rng *rand.Rand) error

// benchRounds splits each side's calls into rounds that alternate with the
// other side's, our code first in even rounds and the baseline first in odd
// ones, so a change in the machine's load falls on both sides alike.
const benchRounds = 8

// compare runs azolla's workload and its baseline for benchOps calls per
// worker each, in alternating rounds, and returns their operations per
// second.
func compare(b *testing.B, azolla, baseline op) (azollaOps, baselineOps float64) {
	b.Helper()
	rngs := func() []*rand.Rand {
		r := make([]*rand.Rand, benchWorkers)
		for w := range r {
			r[w] = rand.New(rand.NewPCG(uint64(w), 7))
		}
		return r
	}
	var az, base time.Duration
	azRngs, baseRngs := rngs(), rngs()
	for r := range benchRounds {
		if r%2 == 0 {
			az += round(b, azolla, azRngs)
			base += round(b, baseline, baseRngs)
		} else {
			base += round(b, baseline, baseRngs)
			az += round(b, azolla, azRngs)
		}
	}
	calls := float64(benchWorkers * benchOps / benchRounds * benchRounds)
	return calls / az.Seconds(), calls / base.Seconds()
}

// round starts benchWorkers goroutines each calling o benchOps/benchRounds
// times and returns how long they took.
func round(b *testing.B, o op, rngs []*rand.Rand) time.Duration {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, benchWorkers)
	start := time.Now()
	for w := range benchWorkers {
		wg.Go(func() {
			for range benchOps / benchRounds {
				if err := o(w, rngs[w]); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatalf("benchmark op: %v", err)
	}
	return elapsed
}

// recorder collects grants for the double-grant check.
type recorder struct {
	mu      sync.Mutex
	tenures []storetest.Tenure
}

func (r *recorder) add(t storetest.Tenure) {
	r.mu.Lock()
	r.tenures = append(r.tenures, t)
	r.mu.Unlock()
}

func (r *recorder) doubleGrants() int {
	_, doubles, _ := storetest.CheckTimeline(r.tenures)
	return doubles
}

func bridgeAcquire(s *sqlstore.Store, rec *recorder) op {
	clock := &storetest.StepClock{Start: storetest.T0, Step: time.Millisecond}
	br := claim.NewBridge(s, claim.WithClock(clock.Now))
	return func(w int, rng *rand.Rand) error {
		id := fmt.Sprintf("res-%d", rng.IntN(benchResources))
		l, ok, err := br.Acquire(context.Background(), domain.ResourceWorkOrder, id, fmt.Sprintf("w%d", w), benchTTL)
		if ok {
			c := l.Record()
			rec.add(storetest.Tenure{Resource: id, Owner: c.OwnerID, First: c.ClaimVersion, Last: c.ClaimVersion, Start: c.HeartbeatAt, End: c.LeaseExpiresAt})
		}
		return err
	}
}

func plainAcquire(s *sqlstore.Store, rec *recorder) op {
	clock := &storetest.StepClock{Start: storetest.T0, Step: time.Millisecond}
	q := s.Rebind(`UPDATE plain_claims SET owner_id = $1, lease_expires_at = $2, heartbeat_at = $3, claim_version = claim_version + 1
		WHERE resource_type = $4 AND resource_id = $5 AND lease_expires_at <= $3 RETURNING claim_version`)
	return func(w int, rng *rand.Rand) error {
		id := fmt.Sprintf("res-%d", rng.IntN(benchResources))
		now := clock.Now()
		var v int64
		err := s.DB().QueryRowContext(context.Background(), q, fmt.Sprintf("w%d", w), s.EncodeTime(now.Add(benchTTL)),
			s.EncodeTime(now), domain.ResourceWorkOrder, id).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err == nil {
			rec.add(storetest.Tenure{Resource: id, Owner: fmt.Sprintf("w%d", w), First: v, Last: v, Start: now, End: now.Add(benchTTL)})
		}
		return err
	}
}

func bridgeRenew(b *testing.B, s *sqlstore.Store) op {
	br := claim.NewBridge(s)
	leases := make([]*claim.Lease, benchWorkers)
	for w := range benchWorkers {
		l, ok, err := br.Acquire(context.Background(), domain.ResourceEvent, fmt.Sprintf("renew-%d", w), fmt.Sprintf("w%d", w), time.Minute)
		if err != nil || !ok {
			b.Fatalf("acquire for renew benchmark: ok=%v err=%v", ok, err)
		}
		leases[w] = l
	}
	return func(w int, _ *rand.Rand) error { return leases[w].Renew(context.Background()) }
}

func plainRenew(s *sqlstore.Store) op {
	q := s.Rebind(`UPDATE plain_claims SET lease_expires_at = $1, heartbeat_at = $2 WHERE resource_type = $3 AND resource_id = $4`)
	return func(w int, _ *rand.Rand) error {
		now := time.Now()
		_, err := s.DB().ExecContext(context.Background(), q, s.EncodeTime(now.Add(time.Minute)), s.EncodeTime(now),
			domain.ResourceWorkOrder, fmt.Sprintf("res-%d", w))
		return err
	}
}
