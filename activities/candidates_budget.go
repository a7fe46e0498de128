package activities

import (
	"context"
	"slices"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
)

// recordUnstarted records as SKIPPED, with why, each of the workorder's
// candidates that was never started (patch.parallel_candidates held it
// back until another passed or the budget ran out), and returns every
// record in attempt order.
func (a *Candidates) recordUnstarted(ctx context.Context, req diazotroph.Request, recs []*domain.Candidate,
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
			Generator: a.Runner.GeneratorName(req.Objective), Status: domain.CandidateSkipped, Why: why,
			GateResults: []domain.CandidateGateResult{}, CreatedAt: a.now()}
		if _, err := a.putCandidate(ctx, c); err != nil {
			return nil, err
		}
		recs = append(recs, c)
	}
	slices.SortFunc(recs, func(x, y *domain.Candidate) int { return x.Attempt - y.Attempt })
	return recs, nil
}
