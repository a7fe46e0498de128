package activities

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// BudgetSpentError refuses a run of an objective whose runs have spent its
// budget_usd: no round starts until a human raises it.
type BudgetSpentError struct {
	ObjectiveID string
	Spend       domain.Spend
	Budget      float64
}

func (e *BudgetSpentError) Error() string {
	return fmt.Sprintf("objective %s has spent %s of its %s budget over %s: raise it first with `objective budget %s --add <dollars>`",
		e.ObjectiveID, domain.USD(e.Spend.USD), domain.USD(e.Budget), e.Spend.RunsLine(), e.ObjectiveID)
}

// budgetLeft is what is left of o's budget for its next run, nil when o
// has none, or a *BudgetSpentError when nothing is.
func budgetLeft(ctx context.Context, q store.Querier, o *domain.Objective) (*float64, error) {
	if o.BudgetUSD == nil {
		return nil, nil
	}
	spend, err := q.ObjectiveSpend(ctx, o.ObjectiveID)
	if err != nil {
		return nil, err
	}
	if spend.Exhausted(o.BudgetUSD) {
		return nil, &BudgetSpentError{ObjectiveID: o.ObjectiveID, Spend: spend, Budget: *o.BudgetUSD}
	}
	return spend.Remaining(o.BudgetUSD), nil
}
