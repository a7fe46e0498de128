package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/slots"
)

// changeBestOfN: a workorder of an objective with attempts > 1 runs its
// candidates (RunCandidate, in parallel) and delivers the best one
// (SelectCandidate) instead of one Run. Like changePullRequest it is
// asked where it applies, before such a workorder runs: runs of
// objectives with one attempt, every run recorded before the change
// among them, carry no marker. Version 2 starts at most the workorder's
// Parallel candidates at a time; version 1 started them all at once.
const changeBestOfN = "best-of-n"

// bestOfNParallel is the version of changeBestOfN that honours
// WorkOrderRef.Parallel.
const bestOfNParallel = 2

// bestOfN returns the version of changeBestOfN the workorder runs its
// candidates under, or DefaultVersion when it runs as one Run.
func (w *objective) bestOfN(ctx workflow.Context, wo activities.WorkOrderRef) workflow.Version {
	if wo.Attempts < 2 {
		return workflow.DefaultVersion
	}
	return workflow.GetVersion(ctx, changeBestOfN, workflow.DefaultVersion, bestOfNParallel)
}

// runCandidates runs the workorder's candidates in parallel, each its own
// activity with its own lease, at most wo.Parallel at a time when that is
// set (from version bestOfNParallel), and then has the best delivered as
// the workorder's one bundle. With early stop, the first candidate that
// passes every gate command with a diff within the allowed size cancels
// the others, which are recorded as cancelled, and no more are started;
// so does the first whose cost uses up the objective's budget. A
// candidate that fails for good is one that lost; the selection decides
// with the others.
func (w *objective) runCandidates(ctx workflow.Context, wo activities.WorkOrderRef, v workflow.Version) (activities.RunResult, error) {
	cctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	cctx = w.onRunQueue(withRunOptions(cctx, wo, w.leaseTTL, runAllowance(ctx, wo)), wo)
	sel := workflow.NewSelector(ctx)
	in := activities.SelectInput{WorkOrderID: wo.WorkOrderID}
	next, started := 1, 0
	var start func()
	start = func() {
		cin := activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: next}
		var f workflow.Future
		if *w.runSlots >= runSlotsQueue {
			f = w.slottedCandidate(ctx, cctx, cin)
		} else {
			f = workflow.ExecuteActivity(cctx, candidates.RunCandidate, cin)
		}
		next, started = next+1, started+1
		sel.AddFuture(f, func(f workflow.Future) {
			var r activities.CandidateResult
			if in.EarlyStopped || in.BudgetStopped {
				return
			}
			if f.Get(ctx, &r) == nil {
				in.EarlyStopped, in.BudgetStopped = wo.EarlyStop && r.PassedAll && r.Small, r.BudgetSpent
			}
			if in.EarlyStopped || in.BudgetStopped {
				cancel()
			} else if next <= wo.Attempts {
				start()
			}
		})
	}
	width := wo.Attempts
	if v >= bestOfNParallel && wo.Parallel > 0 {
		width = min(width, wo.Parallel)
	}
	for next <= width {
		start()
	}
	// A cancelled candidate's future resolves as soon as the cancellation
	// is asked for: SelectCandidate records the candidates still running
	// as cancelled, and each learns it at its next heartbeat, when its
	// processes are killed. Candidates never started have no record
	// until SelectCandidate writes them as not started.
	for waited := 0; waited < started; waited++ {
		sel.Select(ctx)
	}
	if err := ctx.Err(); err != nil {
		return activities.RunResult{}, err
	}
	var run activities.RunResult
	err := workflow.ExecuteActivity(withRepoOptions(ctx, w.leaseTTL), candidates.SelectCandidate, in).Get(ctx, &run)
	return run, err
}

// slottedCandidate runs candidate in as slotted runs a workorder, in a
// coroutine of its own so that the others run (and queue) beside it; the
// future resolves with its CandidateResult. cctx carries the candidates'
// options and their cancellation, which stops its queueing too.
func (w *objective) slottedCandidate(ctx, cctx workflow.Context, in activities.CandidateInput) workflow.Future {
	f, set := workflow.NewFuture(ctx)
	in.Queue = true
	workflow.Go(cctx, func(gctx workflow.Context) {
		var r activities.CandidateResult
		err := w.slotted(gctx, domain.CandidateResource(in.WorkOrderID, in.Attempt), func(g *slots.Grant) (bool, error) {
			in.Slot, r = g, activities.CandidateResult{}
			err := workflow.ExecuteActivity(gctx, candidates.RunCandidate, in).Get(gctx, &r)
			return r.SlotBusy, err
		})
		set.Set(r, err)
	})
	return f
}
