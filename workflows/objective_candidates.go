package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
)

// changeBestOfN: a workorder of an objective with attempts > 1 runs its
// candidates (RunCandidate, in parallel) and delivers the best one
// (SelectCandidate) instead of one Run. Like changePullRequest it is
// asked where it applies, before such a workorder runs: runs of
// objectives with one attempt, every run recorded before the change
// among them, carry no marker.
const changeBestOfN = "best-of-n"

// bestOfN says whether the workorder runs as candidates.
func (w *objective) bestOfN(ctx workflow.Context, wo activities.WorkOrderRef) bool {
	return wo.Attempts > 1 && workflow.GetVersion(ctx, changeBestOfN, workflow.DefaultVersion, 1) == 1
}

// runCandidates runs the workorder's candidates in parallel, each its own
// activity with its own lease, and then has the best delivered as the
// workorder's one bundle. With early stop, the first candidate that
// passes every gate command with a diff within the allowed size cancels
// the others, which are recorded as cancelled; so does the first whose
// cost uses up the objective's budget. A candidate that fails for good is
// one that lost; the selection decides with the others.
func (w *objective) runCandidates(ctx workflow.Context, wo activities.WorkOrderRef) (activities.RunResult, error) {
	cctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	cctx = withRunOptions(cctx, wo, w.leaseTTL)
	sel := workflow.NewSelector(ctx)
	in := activities.SelectInput{WorkOrderID: wo.WorkOrderID}
	for k := 1; k <= wo.Attempts; k++ {
		f := workflow.ExecuteActivity(cctx, act.RunCandidate,
			activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: k})
		sel.AddFuture(f, func(f workflow.Future) {
			var r activities.CandidateResult
			if f.Get(ctx, &r) != nil || in.EarlyStopped || in.BudgetStopped {
				return
			}
			in.EarlyStopped, in.BudgetStopped = wo.EarlyStop && r.PassedAll && r.Small, r.BudgetSpent
			if in.EarlyStopped || in.BudgetStopped {
				cancel()
			}
		})
	}
	// A cancelled candidate's future resolves as soon as the cancellation
	// is asked for: SelectCandidate records the candidates still running
	// as cancelled, and each learns it at its next heartbeat, when its
	// processes are killed.
	for range wo.Attempts {
		sel.Select(ctx)
	}
	if err := ctx.Err(); err != nil {
		return activities.RunResult{}, err
	}
	var run activities.RunResult
	err := workflow.ExecuteActivity(withRepoOptions(ctx, w.leaseTTL), act.SelectCandidate, in).Get(ctx, &run)
	return run, err
}
