package budget_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/schemas"
)

// spentOn writes objective id with budget capUSD (nil: none) and one run
// that reported cost.
func spentOn(t *testing.T, s store.Store, id string, capUSD *float64, cost float64) {
	t.Helper()
	ctx := context.Background()
	o := storetest.Objective(id)
	o.BudgetUSD = capUSD
	wo := storetest.ScheduledObjective(t, s, o, storetest.T0)
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	_, _, err = s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Fix", Content: "x",
		RunnerStatus: domain.RunnerOK, CreatedAt: storetest.T0, Metadata: domain.BundleMetadata{Generator: "command",
			RunReport: &domain.RunReport{Model: "m", CostUSD: &cost}}})
	require.NoError(t, err)
}

func budgetOf(t *testing.T, s store.Store, id string) *float64 {
	t.Helper()
	o, err := s.GetObjective(context.Background(), id)
	require.NoError(t, err)
	return o.BudgetUSD
}

func TestChange_RaisesSetsAndRemovesAndSaysWhereItStands(t *testing.T) {
	t.Parallel()
	s := storetest.NewSQLite(t)
	ctx := context.Background()
	spentOn(t, s, "over", dollars(4), 5)
	spent := domain.Spend{USD: 5, Runs: 1}

	for _, step := range []struct {
		name   string
		edit   budget.Edit
		budget *float64
		left   *float64
	}{
		{"read only", budget.Edit{}, dollars(4), dollars(0)},
		{"raise", budget.Edit{Add: dollars(2.5)}, dollars(6.5), dollars(1.5)},
		{"set", budget.Edit{Set: dollars(1)}, dollars(1), dollars(0)},
		{"remove", budget.Edit{Remove: true}, nil, nil},
	} {
		st, err := budget.Change(ctx, s, "over", step.edit)
		require.NoError(t, err, step.name)
		require.Equal(t, budget.Standing{ObjectiveID: "over", Budget: step.budget, Spend: spent}, st, step.name)
		require.Equal(t, step.left, st.Left(), step.name)
		require.Equal(t, step.budget, budgetOf(t, s, "over"), "%s: written", step.name)
	}
}

func TestChange_RefusesAndChangesNothing(t *testing.T) {
	t.Parallel()
	s := storetest.NewSQLite(t)
	ctx := context.Background()
	spentOn(t, s, "capped", dollars(4), 1)
	spentOn(t, s, "uncapped", nil, 1)

	_, err := budget.Change(ctx, s, "uncapped", budget.Edit{Add: dollars(1)})
	require.ErrorIs(t, err, budget.ErrNoBudget, "nothing to raise")
	require.Nil(t, budgetOf(t, s, "uncapped"))

	_, err = budget.Change(ctx, s, "capped", budget.Edit{Set: dollars(5000000)})
	var ve *schemas.ValidationError
	require.ErrorAs(t, err, &ve, "the schema refuses it")
	require.Equal(t, dollars(4), budgetOf(t, s, "capped"))

	_, err = budget.Change(ctx, s, "capped", budget.Edit{Add: dollars(1), Remove: true})
	require.Error(t, err, "one change at a time")
	require.Equal(t, dollars(4), budgetOf(t, s, "capped"))

	_, err = budget.Change(ctx, s, "nope", budget.Edit{Set: dollars(1)})
	require.ErrorIs(t, err, domain.ErrNotFound)
}
