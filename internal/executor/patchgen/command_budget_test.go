package patchgen_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/runreport"
)

// The remaining budget reaches the agent: in AZOLLA_BUDGET_USD_REMAINING,
// and on the command line of a preset whose agent takes a cap of its own.
// Without a budget, neither.
func TestCommand_TellsTheAgentTheRemainingBudget(t *testing.T) {
	t.Parallel()
	p, err := runreport.LookupPreset("claude-code")
	require.NoError(t, err)
	// The stand-in prints the cap it was given as its result.
	script := `cap=none; while [ $# -gt 0 ]; do [ "$1" = --max-budget-usd ] && cap=$2; shift; done
printf '{"type":"result","subtype":"success","result":"cap: %s; env: %s","total_cost_usd":0.1}' "$cap" "${AZOLLA_BUDGET_USD_REMAINING-unset}"`
	left := 0.35
	for _, tt := range []struct {
		name   string
		budget *float64
		want   string
	}{
		{"with a budget", &left, "cap: 0.35; env: 0.35"},
		{"without", nil, "cap: none; env: unset"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := presetCommand(t, p, "claude", "--output-format", script, 0)
			in := newInput(newRepo(t))
			in.BudgetUSDRemaining = tt.budget
			out, err := g.Generate(t.Context(), in)
			require.NoError(t, err)
			require.NotNil(t, out.Report, out.Notes)
			require.Contains(t, out.Report.Summary, tt.want)
		})
	}
}
