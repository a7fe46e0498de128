package store

import (
	"context"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// SpendQuerier reads and sets what objectives may spend and have spent.
type SpendQuerier interface {
	// ObjectiveSpend sums the run reports of the objective's workorders,
	// each counted as Spend.AddWorkOrder counts it. An unknown objective
	// has spent nothing.
	ObjectiveSpend(ctx context.Context, objectiveID string) (domain.Spend, error)
	// SetObjectiveBudget sets the objective's budget_usd (nil: no cap)
	// and its updated_at. An unknown objective is a *NotFoundError; a
	// budget the schema refuses changes nothing.
	SetObjectiveBudget(ctx context.Context, p SetObjectiveBudgetParams) (*domain.Objective, error)
}

// SetObjectiveBudgetParams sets one objective's budget.
type SetObjectiveBudgetParams struct {
	ObjectiveID string
	BudgetUSD   *float64
	Now         time.Time
}
