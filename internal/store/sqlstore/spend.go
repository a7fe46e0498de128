package sqlstore

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// ObjectiveSpend sums the run reports of the objective's workorders: a
// workorder's candidates when it has any, else its bundle (see
// store.SpendQuerier).
func (q *querier) ObjectiveSpend(ctx context.Context, objectiveID string) (domain.Spend, error) {
	rows, err := q.query(ctx, `SELECT b.metadata FROM output_bundles b
		JOIN workorders w ON w.work_order_id = b.work_order_id WHERE w.objective_id = $1
		AND NOT EXISTS (SELECT 1 FROM candidates c WHERE c.work_order_id = b.work_order_id)`, objectiveID)
	ms, err := collect(rows, err, func(r rowScanner) (*domain.BundleMetadata, error) {
		var m domain.BundleMetadata
		if err := r.Scan(jsonCol(&m)); err != nil {
			return nil, err
		}
		return &m, nil
	})
	if err != nil {
		return domain.Spend{}, fmt.Errorf("spend of objective %q: %w", objectiveID, err)
	}
	rows, err = q.query(ctx, `SELECT c.status, c.generator, c.report FROM candidates c
		JOIN workorders w ON w.work_order_id = c.work_order_id WHERE w.objective_id = $1`, objectiveID)
	cs, err := collect(rows, err, func(r rowScanner) (*domain.Candidate, error) {
		var c domain.Candidate
		if err := r.Scan(&c.Status, &c.Generator, jsonCol(&c.Report)); err != nil {
			return nil, err
		}
		return &c, nil
	})
	if err != nil {
		return domain.Spend{}, fmt.Errorf("spend of objective %q: candidates: %w", objectiveID, err)
	}
	var s domain.Spend
	for _, m := range ms {
		s.Add(*m)
	}
	for _, c := range cs {
		s.AddCandidate(c)
	}
	return s, nil
}

// SetObjectiveBudget sets budget_usd after validating the objective with it.
func (q *querier) SetObjectiveBudget(ctx context.Context, p store.SetObjectiveBudgetParams) (*domain.Objective, error) {
	o, err := q.GetObjective(ctx, p.ObjectiveID)
	if err != nil {
		return nil, fmt.Errorf("set objective budget: %w", err)
	}
	o.BudgetUSD = p.BudgetUSD
	o.UpdatedAt = store.NowOr(p.Now)
	if err := schemas.Validate(schemas.Objective, o); err != nil {
		return nil, fmt.Errorf("set objective budget: %w", err)
	}
	if _, err := q.exec(ctx, `UPDATE objectives SET budget_usd = $1, updated_at = $2 WHERE objective_id = $3`,
		nullFloat(o.BudgetUSD), q.t(o.UpdatedAt), o.ObjectiveID); err != nil {
		return nil, fmt.Errorf("set objective budget %q: %w", o.ObjectiveID, err)
	}
	return o, nil
}
