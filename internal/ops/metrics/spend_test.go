package metrics_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/ops/metrics"
)

func TestRunSpent_CountsCostTokensAndUnknownRuns(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	cost := func(v float64) *float64 { return &v }
	tb.m.RunSpent(domain.BundleMetadata{Generator: "command", RunReport: &domain.RunReport{Model: "claude-x",
		CostUSD: cost(1.5), Tokens: &domain.Tokens{Input: 100, Output: 7, CacheRead: 40}}})
	tb.m.RunSpent(domain.BundleMetadata{Generator: "command", RunReport: &domain.RunReport{Model: "claude-x", CostUSD: cost(0.25)}})
	tb.m.RunSpent(domain.BundleMetadata{Generator: "openai", RunReport: &domain.RunReport{Model: "gpt-y",
		Tokens: &domain.Tokens{Input: 9}}})
	tb.m.RunSpent(domain.BundleMetadata{Generator: "command"})
	tb.m.RunSpent(domain.BundleMetadata{Generator: "static"})

	want := `
# HELP azolla_executor_cost_usd_total Dollars the executors' runs reported spending, by model; runs of unknown cost add nothing here (see azolla_executor_runs_total).
# TYPE azolla_executor_cost_usd_total counter
azolla_executor_cost_usd_total{model="claude-x"} 1.75
# HELP azolla_executor_runs_total Gated runs of an agent or model, by whether their cost is known (cost=known, unknown).
# TYPE azolla_executor_runs_total counter
azolla_executor_runs_total{cost="known"} 2
azolla_executor_runs_total{cost="unknown"} 2
# HELP azolla_executor_tokens_total Tokens the executors' runs reported, by kind (input, output, cache_read, cache_write) and model.
# TYPE azolla_executor_tokens_total counter
azolla_executor_tokens_total{kind="cache_read",model="claude-x"} 40
azolla_executor_tokens_total{kind="input",model="claude-x"} 100
azolla_executor_tokens_total{kind="input",model="gpt-y"} 9
azolla_executor_tokens_total{kind="output",model="claude-x"} 7
`
	require.NoError(t, testutil.GatherAndCompare(tb.reg, strings.NewReader(want),
		metrics.NameExecutorCost, metrics.NameExecutorRuns, metrics.NameExecutorTokens),
		"the static run counts nothing; the openai run without a cost and the command run without a report are unknown")
}

func TestRunSpent_ModelLabelsAreBounded(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	one := 1.0
	for i := range 80 {
		tb.m.RunSpent(domain.BundleMetadata{RunReport: &domain.RunReport{Model: fmt.Sprintf("m-%d", i), CostUSD: &one}})
	}
	n, err := testutil.GatherAndCount(tb.reg, metrics.NameExecutorCost)
	require.NoError(t, err)
	require.Equal(t, 51, n, "50 models of the reports' own, the rest as other")
	require.Equal(t, 30.0, metricVec(t, tb.reg, metrics.NameExecutorCost, "model", "other"))
}
