package activities_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
)

// fakeCandidates answers each candidate k with byK[k]; a candidate whose
// entry is block says so on started, when started is set, and waits for
// its context to end.
type fakeCandidates struct {
	byK     map[int]patch.Candidate
	block   map[int]bool
	started chan int

	mu        sync.Mutex
	ran       []int
	delivered *patch.Candidate
}

func (*fakeCandidates) GeneratorName(domain.Objective) string { return "command" }

func (f *fakeCandidates) RunCandidate(ctx context.Context, _ diazotroph.Request, k int) (patch.Candidate, error) {
	f.mu.Lock()
	f.ran = append(f.ran, k)
	f.mu.Unlock()
	if f.block[k] {
		if f.started != nil {
			f.started <- k
		}
		<-ctx.Done()
		return patch.Candidate{}, ctx.Err()
	}
	c := f.byK[k]
	c.Attempt = k
	return c, nil
}

func (*fakeCandidates) SelectCommand(context.Context, diazotroph.Request, []patch.Candidate, []int) (int, error) {
	return 0, patch.ErrNoSelectCommand
}

func (f *fakeCandidates) DeliverCandidate(_ context.Context, req diazotroph.Request, c patch.Candidate, why string) (diazotroph.Result, error) {
	f.mu.Lock()
	f.delivered = &c
	f.mu.Unlock()
	return diazotroph.Result{Title: fmt.Sprintf("candidate %d", c.Attempt), Content: c.Patch, Notes: why,
		Metadata:     domain.BundleMetadata{BranchName: req.WorkOrder.BranchName, Generator: c.Generator, RunReport: c.Report},
		RunnerStatus: domain.RunnerOK}, nil
}

func cand(patchText string, passed, of, lines int, at time.Duration, cost float64) patch.Candidate {
	c := patch.Candidate{Generator: "command", RunnerStatus: domain.RunnerOK, Patch: patchText, DiffLines: lines,
		CommandsPassed: passed, FinishedAt: time.Unix(1000, 0).Add(at), Report: &domain.RunReport{CostUSD: &cost}}
	for i := range of {
		c.Gate = append(c.Gate, patch.GateResult{Command: fmt.Sprintf("check-%d", i), Passed: i < passed})
	}
	return c
}

// bestOfN stores objective obj-1 with attempts and schedules it.
func (tb *testBundle) bestOfN(t *testing.T, attempts int, budget *float64) *activities.WorkOrderRef {
	t.Helper()
	tb.newObjective(t, "obj-1", func(o *domain.Objective) { o.Attempts, o.BudgetUSD = &attempts, budget })
	ev := tb.ready(t, "obj-1", activities.ReadyApprove)
	res, err := tb.steps.Schedule(context.Background(), activities.ScheduleInput{EventID: ev.EventID})
	require.NoError(t, err)
	return res.WorkOrder
}

func TestCandidates_EachRecordedThenTheBestDeliveredAsTheOneBundle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		f := &fakeCandidates{byK: map[int]patch.Candidate{
			1: cand("diff --git a/x b/x\n+wrong\n", 1, 2, 1, time.Second, 0.1),
			2: cand("diff --git a/x b/x\n+right\n", 2, 2, 1, 2*time.Second, 0.2),
			3: cand("diff --git a/x b/x\n+broken\n", 0, 2, 1, 0, 0.3),
		}}
		tb.cands.Runner = f
		rec := &spentRecorder{}
		tb.observe(rec)
		wo := tb.bestOfN(t, 3, nil)
		for k := 1; k <= 3; k++ {
			r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: k})
			require.NoError(t, err)
			require.Equal(t, domain.CandidateDone, r.Status)
			require.Equal(t, k == 2, r.PassedAll, "candidate %d", k)
			require.True(t, r.Small, "no bound on the diff: every candidate is small enough")
		}
		again, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 2})
		require.NoError(t, err)
		require.True(t, again.PassedAll)
		require.Equal(t, []int{1, 2, 3}, f.ran, "a finished candidate is not run again")

		run, err := tb.cands.SelectCandidate(ctx, activities.SelectInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.RunnerOK, run.RunnerStatus)
		require.Equal(t, 2, f.delivered.Attempt)
		b, err := tb.store.GetOutputBundle(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, "diff --git a/x b/x\n+right\n", b.Content)
		require.Contains(t, b.Notes, "candidate 1: DONE")
		require.Equal(t, domain.WorkOrderExecuted, tb.workOrder(t, wo.WorkOrderID).Status)
		cs, err := tb.store.ListCandidates(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Len(t, cs, 3)
		for _, c := range cs {
			require.Equal(t, c.Attempt == 2, c.Chosen, "candidate %d", c.Attempt)
		}
		sp, err := tb.store.ObjectiveSpend(ctx, "obj-1")
		require.NoError(t, err)
		require.InDelta(t, 0.6, sp.USD, 1e-9, "every candidate's cost, the bundle's not twice")

		again2, err := tb.cands.SelectCandidate(ctx, activities.SelectInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.True(t, again2.AlreadyExecuted)
		g, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GatePass, g.GateResult)
		var counted float64
		for _, m := range rec.spent {
			counted += *m.RunReport.CostUSD
		}
		require.Len(t, rec.spent, 3, "each candidate counted as it ran, the gated bundle not again")
		require.InDelta(t, 0.6, counted, 1e-9)
		tb.requireAuditClean(t)
	})
}

func TestCandidates_NotStartedOnceTheBudgetIsSpent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		f := &fakeCandidates{byK: map[int]patch.Candidate{1: cand("diff --git a/x b/x\n+a\n", 1, 1, 1, 0, 1.5)},
			block: map[int]bool{2: true}}
		tb.cands.Runner = f
		budget := 1.0
		wo := tb.bestOfN(t, 3, &budget)
		r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 1})
		require.NoError(t, err)
		require.True(t, r.PassedAll)
		require.True(t, r.BudgetSpent, "its $1.50 used up the $1 budget: the others are to be stopped")

		// Candidate 2 would run until cancelled: it is never started.
		r, err = tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 2})
		require.NoError(t, err)
		require.Equal(t, domain.CandidateSkipped, r.Status, "$1.50 of $1 spent: not started")

		r, err = tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 3})
		require.NoError(t, err)
		require.Equal(t, domain.CandidateSkipped, r.Status)
		c3, err := tb.store.GetCandidate(ctx, wo.WorkOrderID, 3)
		require.NoError(t, err)
		require.Contains(t, c3.Why, "not started: objective obj-1 has spent $1.50 of its $1.00 budget")
		require.Equal(t, []int{1}, f.ran)

		_, err = tb.cands.SelectCandidate(ctx, activities.SelectInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, 1, f.delivered.Attempt)
	})
}

func TestCandidates_ACancelledRunIsRecordedCancelled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		f := &fakeCandidates{block: map[int]bool{1: true}, byK: map[int]patch.Candidate{}, started: make(chan int, 1)}
		tb.cands.Runner = f
		wo := tb.bestOfN(t, 2, nil)
		cctx, cancel := context.WithCancel(ctx)
		type outcome struct {
			r   activities.CandidateResult
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			r, err := tb.cands.RunCandidate(cctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 1})
			done <- outcome{r, err}
		}()
		// Cancelled once it runs, not before it starts.
		select {
		case <-f.started:
		case o := <-done:
			require.FailNow(t, "the candidate ended before it was cancelled", "%+v", o)
		}
		c, err := tb.store.GetCandidate(ctx, wo.WorkOrderID, 1)
		require.NoError(t, err)
		require.Equal(t, domain.CandidateRunning, c.Status)
		cancel()
		o := <-done
		require.NoError(t, o.err)
		require.Equal(t, domain.CandidateCancelled, o.r.Status)

		// Nothing produced a patch: the bundle has no content, and says why.
		run, err := tb.cands.SelectCandidate(ctx, activities.SelectInput{WorkOrderID: wo.WorkOrderID, EarlyStopped: true})
		require.NoError(t, err)
		require.Equal(t, domain.RunnerOK, run.RunnerStatus)
		b, err := tb.store.GetOutputBundle(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Empty(t, b.Content)
		require.Contains(t, b.Notes, "candidate 1: CANCELLED")
		g, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, g.GateResult)
	})
}

// patch.early_stop_max_diff_lines: a passing candidate larger than it does
// not stop the others.
func TestCandidates_SmallIsWithinTheEarlyStopBound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.cands.Runner = &fakeCandidates{byK: map[int]patch.Candidate{
			1: cand("diff --git a/x b/x\n+a\n", 1, 1, 5, 0, 0), 2: cand("diff --git a/x b/x\n+b\n", 1, 1, 6, 0, 0)}}
		tb.cands.EarlyStopMaxDiffLines = 5
		wo := tb.bestOfN(t, 2, nil)
		for k, small := range map[int]bool{1: true, 2: false} {
			r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: k})
			require.NoError(t, err)
			require.True(t, r.PassedAll)
			require.Equal(t, small, r.Small, "candidate %d", k)
		}
	})
}

// A candidate cancelled after another's cost used up the budget says so.
func TestCandidates_ACancelledRunSaysTheBudgetRanOut(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		f := &fakeCandidates{block: map[int]bool{1: true}, started: make(chan int, 1),
			byK: map[int]patch.Candidate{2: cand("diff --git a/x b/x\n+b\n", 0, 1, 1, 0, 1.5)}}
		tb.cands.Runner = f
		budget := 1.0
		wo := tb.bestOfN(t, 2, &budget)
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := tb.cands.RunCandidate(cctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 1})
			done <- err
		}()
		<-f.started
		r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 2})
		require.NoError(t, err)
		require.True(t, r.BudgetSpent)
		cancel()
		require.NoError(t, <-done)
		c, err := tb.store.GetCandidate(ctx, wo.WorkOrderID, 1)
		require.NoError(t, err)
		require.Equal(t, domain.CandidateCancelled, c.Status)
		require.Contains(t, c.Why, "the objective's budget ran out")
	})
}
