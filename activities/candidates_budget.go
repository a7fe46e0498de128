package activities

import (
	"context"
	"fmt"
	"slices"

	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// cannotCoverAnother says why candidate attempt of workorderID is not to
// start with left dollars of its objective's budget: less is left than
// the candidates of the workorder that ran before it cost on average. ""
// lets it start: no cap, or no other candidate with a known cost yet.
func cannotCoverAnother(ctx context.Context, q store.Querier, workOrderID string, attempt int, left *float64) (string, error) {
	if left == nil {
		return "", nil
	}
	recs, err := q.ListCandidates(ctx, workOrderID)
	if err != nil {
		return "", err
	}
	var sum float64
	n := 0
	for _, c := range recs {
		if c.Attempt == attempt || c.Report == nil || c.Report.CostUSD == nil {
			continue
		}
		sum, n = sum+*c.Report.CostUSD, n+1
	}
	if n == 0 || *left >= sum/float64(n) {
		return "", nil
	}
	return fmt.Sprintf("not started: %s is left of the objective's budget, less than the %s a candidate has cost so far (%d of them)",
		domain.USD(*left), domain.USD(sum/float64(n)), n), nil
}

// recordUnstarted records as SKIPPED, with why, each of the workorder's
// candidates that was never started (patch.parallel_candidates held it
// back until another passed or the budget ran out), and returns every
// record in attempt order.
func (a *Lifecycle) recordUnstarted(ctx context.Context, req diazotroph.Request, recs []*domain.Candidate,
	in SelectInput) ([]*domain.Candidate, error) {
	attempts := 0
	if req.Objective.Attempts != nil {
		attempts = *req.Objective.Attempts
	}
	have := map[int]bool{}
	for _, c := range recs {
		have[c.Attempt] = true
	}
	why := "not started: its run never began"
	switch {
	case in.BudgetStopped:
		why = "not started: the objective's budget ran out first"
	case in.EarlyStopped:
		why = "not started: another candidate passed every gate command first"
	}
	for k := 1; k <= attempts; k++ {
		if have[k] {
			continue
		}
		c := &domain.Candidate{WorkOrderID: req.WorkOrder.WorkOrderID, Attempt: k,
			Generator: a.Candidates.GeneratorName(req.Objective), Status: domain.CandidateSkipped, Why: why,
			GateResults: []domain.CandidateGateResult{}, CreatedAt: a.now()}
		if _, err := a.putCandidate(ctx, c); err != nil {
			return nil, err
		}
		recs = append(recs, c)
	}
	slices.SortFunc(recs, func(x, y *domain.Candidate) int { return x.Attempt - y.Attempt })
	return recs, nil
}
