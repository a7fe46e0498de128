package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store"
)

// HistoryParams shapes a claim history run: Workers goroutines, each with
// a clock skewed by up to Skew, make Ops operations on Resources
// workorders through the claim bridge, with leases of TTL. The clock is
// logical (a millisecond a reading), so leases lapse as operations go,
// whatever the machine's speed. Every store call has OpTimeout.
type HistoryParams struct {
	Seed                    uint64
	Workers, Resources, Ops int
	TTL, Skew, OpTimeout    time.Duration
	// CancelEvery, above 0, cancels about one operation in CancelEvery
	// within its first two milliseconds: a caller that gives up mid-call
	// (its outcome unknown), on either backend.
	CancelEvery int
	// Faults, when set, runs beside the workers until they are done (a
	// FaultProxy's Schedule, paced by the history's answered operations).
	Faults func(ctx context.Context, h *History)
}

// RunClaimHistory runs the workers of p on st, recording every claim
// operation, fenced write (a run record whose gate reason names its
// writer) and read of it into a new History, and returns it.
func RunClaimHistory(t testing.TB, st store.Store, p HistoryParams) *History {
	t.Helper()
	ctx := context.Background()
	wos := make([]string, p.Resources)
	for r := range wos {
		wo := Scheduled(t, st, fmt.Sprintf("lin-%d-%d", p.Seed, r))
		_, _, err := st.CreateWorkOrder(ctx, wo)
		require.NoError(t, err)
		wos[r] = wo.WorkOrderID
	}
	h := NewHistory()
	rec := h.Store(st)
	clock := &StepClock{Start: T0, Step: time.Millisecond}
	fctx, stopFaults := context.WithCancel(ctx)
	var faults sync.WaitGroup
	if p.Faults != nil {
		faults.Go(func() { p.Faults(fctx, h) })
	}
	var wg sync.WaitGroup
	for w := range p.Workers {
		rng := rand.New(rand.NewPCG(p.Seed, uint64(w)))
		skew := time.Duration(0)
		if p.Skew > 0 {
			skew = time.Duration(rng.Int64N(int64(2*p.Skew/time.Millisecond)+1))*time.Millisecond - p.Skew
		}
		br := claim.NewBridge(rec, claim.WithClock(func() time.Time { return clock.Now().Add(skew) }))
		wg.Go(func() { historyWorker(st, rec, h, br, rng, fmt.Sprintf("w%d", w), wos, p) })
	}
	wg.Wait()
	stopFaults()
	faults.Wait()
	return h
}

// historyWorker is one worker's operations. Besides what a holder does
// through its lease, it sometimes acts on a hold it let go as a paused
// process whose clock lags would: a renewal or a fenced write straight
// to the store with the old version, which only the store's guards stop.
func historyWorker(st store.RunQuerier, rec *RecordingStore, h *History, br *claim.Bridge, rng *rand.Rand, owner string,
	wos []string, p HistoryParams) {
	var lease *claim.Lease
	var wo string
	var past []domain.ClaimRecord
	drop := func() {
		if lease != nil {
			past = append(past, lease.Record())
		}
		lease = nil
	}
	call := func() (context.Context, context.CancelFunc) {
		if p.CancelEvery > 0 && rng.IntN(p.CancelEvery) == 0 {
			return context.WithTimeout(context.Background(), time.Duration(rng.IntN(2000))*time.Microsecond)
		}
		return context.WithTimeout(context.Background(), p.OpTimeout)
	}
	for i := range p.Ops {
		ctx, cancel := call()
		switch r := rng.IntN(100); {
		case r >= 92 && len(past) > 0:
			stale := past[rng.IntN(len(past))]
			at := T0.Add(time.Duration(i) * time.Millisecond)
			if rng.IntN(2) == 0 {
				_, _ = rec.RenewClaim(ctx, store.RenewClaimParams{ResourceType: stale.ResourceType, ResourceID: stale.ResourceID,
					OwnerID: stale.OwnerID, ClaimVersion: stale.ClaimVersion, TTL: p.TTL, Now: at})
				break
			}
			written := fmt.Sprintf("%s@v%d#%d-stale", owner, stale.ClaimVersion, i)
			pause := time.Duration(5+rng.IntN(20)) * time.Millisecond
			_ = rec.InTx(Writing(ctx, written), func(q store.Querier) error {
				if err := q.CheckFence(ctx, store.Fence{ResourceType: stale.ResourceType, ResourceID: stale.ResourceID,
					OwnerID: stale.OwnerID, ClaimVersion: stale.ClaimVersion}); err != nil {
					return err
				}
				// Paused between its check and its write, as a process
				// is by a collector or a scheduler: the fence must hold
				// the claim still meanwhile, or a takeover commits in
				// between and the write lands after it.
				time.Sleep(pause)
				_, err := q.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: stale.ResourceID, ObjectiveID: "obj",
					GateResult: domain.GatePass, GateReason: written, CreatedAt: T0, UpdatedAt: T0})
				return err
			})
		case r < 15:
			// Anyone may read what the last fenced write wrote.
			read := wos[rng.IntN(len(wos))]
			_, _ = h.Read(owner, resourceOf(domain.ResourceWorkOrder, read), func() (string, error) {
				rr, err := st.GetRunRecord(ctx, read)
				if errors.Is(err, domain.ErrNotFound) {
					return "", nil
				}
				if err != nil {
					return "", err
				}
				return rr.GateReason, nil
			})
		case lease == nil:
			wo = wos[rng.IntN(len(wos))]
			l, ok, err := br.Acquire(ctx, domain.ResourceWorkOrder, wo, owner, p.TTL)
			if err == nil && ok {
				lease = l
			}
		case r < 55:
			written := fmt.Sprintf("%s@v%d#%d", owner, lease.Record().ClaimVersion, i)
			err := lease.Fenced(Writing(ctx, written), func(q store.Querier) error {
				_, err := q.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: wo, ObjectiveID: "obj",
					GateResult: domain.GatePass, GateReason: written, CreatedAt: T0, UpdatedAt: T0})
				return err
			})
			if errors.Is(err, claim.ErrLeaseLost) {
				drop()
			}
		case r < 80:
			if err := lease.Renew(ctx); errors.Is(err, claim.ErrLeaseLost) {
				drop()
			}
		case r < 90:
			_ = lease.Release(ctx)
			drop()
		default:
			drop() // abandoned: it lapses
		}
		cancel()
	}
}

// CheckClaimHistory checks h against ClaimModel and fails t on a
// violation, naming the file its visualization was written to
// (linearizable). It returns how many operations it checked.
func CheckClaimHistory(t testing.TB, h *History, name string) int {
	t.Helper()
	return mustLinearize(t, ClaimModel(), h.Operations(), "claims-"+name)
}

// ClaimHistoryLinearizable says whether h is linearizable against
// ClaimModel, and, when it is not, where its visualization was written.
func ClaimHistoryLinearizable(t testing.TB, h *History, name string) (bool, string) {
	t.Helper()
	return linearizable(t, ClaimModel(), h.Operations(), "claims-"+name)
}

// mustLinearize is linearizable that fails t on a violation, and returns
// how many operations it checked.
func mustLinearize(t testing.TB, model porcupine.Model, ops []porcupine.Operation, name string) int {
	t.Helper()
	if ok, path := linearizable(t, model, ops, name); !ok {
		t.Fatalf("%s: the history of %d operations is not linearizable against its model; its visualization: %s",
			name, len(ops), path)
	}
	return len(ops)
}

// linearizable checks ops against model. A history it cannot explain has
// porcupine's visualization written as an HTML file in
// $AZOLLA_TEST_ARTIFACTS, or the system's temporary directory, whose path
// it returns; a check that times out fails t.
func linearizable(t testing.TB, model porcupine.Model, ops []porcupine.Operation, name string) (bool, string) {
	t.Helper()
	res, info := porcupine.CheckOperationsVerbose(model, ops, 2*time.Minute)
	if res != porcupine.Illegal {
		require.Equal(t, porcupine.Ok, res, "the checker timed out")
		return true, ""
	}
	dir := os.Getenv("AZOLLA_TEST_ARTIFACTS")
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, strings.NewReplacer("/", "-", " ", "_").Replace(name)+".html")
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		t.Logf("visualize: %v", err)
	}
	return false, path
}

// HistoryOutcomes counts a history's operations by kind and outcome, for
// reports: "acquire ok", "renew refused", "fenced ?", ...
func HistoryOutcomes(h *History) map[string]int {
	out := map[string]int{}
	for _, op := range h.Operations() {
		in, res := op.Input.(ClaimInput), op.Output.(ClaimOutput)
		what := "refused"
		switch {
		case res.Unknown:
			what = "unknown"
		case res.OK:
			what = "ok"
		}
		out[in.Kind+" "+what]++
	}
	return out
}
