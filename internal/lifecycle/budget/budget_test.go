package budget_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
)

func dollars(v float64) *float64 { return &v }

// spendOf answers ObjectiveSpend from a map, counting the reads.
type spendOf struct {
	spend map[string]domain.Spend
	reads int
	err   error
}

func (r *spendOf) ObjectiveSpend(_ context.Context, id string) (domain.Spend, error) {
	r.reads++
	return r.spend[id], r.err
}

func TestStanding_ExhaustedLeftAndOverrun(t *testing.T) {
	t.Parallel()
	spent := domain.Spend{USD: 1.75, Runs: 3, Unknown: 1}
	for name, tc := range map[string]struct {
		budget    *float64
		exhausted bool
		left      *float64
		overrun   float64
	}{
		"no cap":          {nil, false, nil, 0},
		"reached exactly": {dollars(1.75), true, dollars(0), 0},
		"a cent short":    {dollars(1.76), false, dollars(0.01), 0},
		"past it":         {dollars(1), true, dollars(0), 0.75},
		"room left":       {dollars(2), false, dollars(0.25), 0},
	} {
		t.Run(name, func(t *testing.T) {
			st := budget.Standing{ObjectiveID: "obj-1", Budget: tc.budget, Spend: spent}
			require.Equal(t, tc.exhausted, st.Exhausted())
			require.Equal(t, tc.left, st.Left())
			require.InDelta(t, tc.overrun, st.Overrun(), 1e-9)
			if tc.exhausted {
				require.ErrorIs(t, st.Allow(), budget.ErrSpent)
			} else {
				require.NoError(t, st.Allow())
			}
		})
	}
}

func TestLeft_ReadsTheSpendOnlyForAnObjectiveWithABudget(t *testing.T) {
	t.Parallel()
	r := &spendOf{spend: map[string]domain.Spend{"capped": {USD: 3, Runs: 2}, "free": {USD: 50, Runs: 9}}}
	left, err := budget.Left(t.Context(), r, &domain.Objective{ObjectiveID: "free"})
	require.NoError(t, err)
	require.Nil(t, left, "no cap: nothing is left to count")
	require.Zero(t, r.reads, "without a budget the spend is not read")

	left, err = budget.Left(t.Context(), r, &domain.Objective{ObjectiveID: "capped", BudgetUSD: dollars(5)})
	require.NoError(t, err)
	require.Equal(t, dollars(2), left)

	_, err = budget.Left(t.Context(), r, &domain.Objective{ObjectiveID: "capped", BudgetUSD: dollars(3)})
	var spent *budget.SpentError
	require.ErrorAs(t, err, &spent)
	require.Equal(t, "objective capped has spent $3.00 of its $3.00 budget over 2 runs: "+
		"raise it first with `objective budget capped --add DOLLARS`", err.Error())

	r.err = errors.New("database gone")
	_, err = budget.Left(t.Context(), r, &domain.Objective{ObjectiveID: "capped", BudgetUSD: dollars(5)})
	require.ErrorContains(t, err, "read the spend of objective capped: database gone")
	require.NotErrorIs(t, err, budget.ErrSpent, "a read that fails refuses nothing by itself")
}

func TestSpentError_PrintsAHostileIdAsText(t *testing.T) {
	t.Parallel()
	err := &budget.SpentError{Standing: budget.Standing{ObjectiveID: "x\x1b]0;owned\x07", Budget: dollars(1),
		Spend: domain.Spend{USD: 1, Runs: 1}}}
	require.NotContains(t, err.Error(), "\x1b")
}

func TestStanding_Told(t *testing.T) {
	t.Parallel()
	require.Equal(t, "Spent $4.50 of its $4.00 budget (over by $0.50), plus 1 run(s) of unknown cost",
		budget.Standing{Budget: dollars(4), Spend: domain.Spend{USD: 4.5, Runs: 3, Unknown: 1}}.Told())
	require.Equal(t, "Spent $0.007 of its $0.005 budget (over by $0.002)",
		budget.Standing{Budget: dollars(0.005), Spend: domain.Spend{USD: 0.007, Runs: 1}}.Told())
	require.Equal(t, "Spent $2.00 of its $4.00 budget",
		budget.Standing{Budget: dollars(4), Spend: domain.Spend{USD: 2, Runs: 1}}.Told())
	require.Equal(t, "Spent $2.00 over 1 run", budget.Standing{Spend: domain.Spend{USD: 2, Runs: 1}}.Told())
}

func TestCandidateMayStart_WhenLessIsLeftThanACandidateCosts(t *testing.T) {
	t.Parallel()
	ran := func(attempt int, cost *float64) *domain.Candidate {
		c := &domain.Candidate{Attempt: attempt}
		if cost != nil {
			c.Report = &domain.RunReport{CostUSD: cost}
		}
		return c
	}
	others := []*domain.Candidate{ran(1, dollars(0.40)), ran(2, dollars(0.60)), ran(3, nil)}
	require.Empty(t, budget.CandidateMayStart(nil, others, 4), "no cap")
	require.Empty(t, budget.CandidateMayStart(dollars(0.50), others, 4), "$0.50 covers the $0.50 average")
	require.Equal(t, "not started: $0.49 is left of the objective's budget, less than the $0.50 a candidate has cost so far (2 of them)",
		budget.CandidateMayStart(dollars(0.49), others, 4))
	require.Empty(t, budget.CandidateMayStart(dollars(0.01), []*domain.Candidate{ran(1, nil), ran(2, dollars(9))}, 2),
		"no other candidate of known cost: its own cost is not counted against it")
}
