package patch_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/patchgen"
)

// reporter writes no patch but reports what its run cost, and records the
// budget it was told.
type reporter struct{ told **float64 }

func (reporter) Name() string { return "command" }

func (r reporter) Generate(_ context.Context, in patchgen.Input) (patchgen.Output, error) {
	*r.told = in.BudgetUSDRemaining
	cost := 0.25
	return patchgen.Output{Notes: "nothing to change", Report: &domain.RunReport{Model: "m", CostUSD: &cost}}, nil
}

// A run that produced no patch still spent: its bundle names the
// generator and carries the report, and the generator was told the
// workorder's remaining budget.
func TestExecute_ARunWithoutAPatchStillCountsItsCost(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	var told *float64
	tb.p = tb.newPatch(map[string]patchgen.Generator{"command": reporter{told: &told}})
	req := tb.request(t, "costly", "")
	req.Objective.Generator = "command"
	left := 1.5
	req.WorkOrder.BudgetUSDRemaining = &left
	res := execute(t, tb, req)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Empty(t, res.Content)
	require.Equal(t, "command", res.Metadata.Generator)
	require.NotNil(t, res.Metadata.RunReport)
	require.Equal(t, 0.25, *res.Metadata.RunReport.CostUSD)
	require.Equal(t, &left, told)

	static := execute(t, tb, tb.request(t, "free", goodPatch))
	require.Equal(t, "static", static.Metadata.Generator)
	require.Nil(t, static.Metadata.RunReport)
	var sp domain.Spend
	sp.Add(static.Metadata)
	require.Zero(t, sp.Runs, "a static patch costs nothing")
}
