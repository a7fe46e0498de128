package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
)

func TestReportLine_SaysWhatTheRunReported(t *testing.T) {
	t.Parallel()
	cost := 0.125
	require.Equal(t, "model m-1, $0.1250, 1200 in / 80 out tokens (cache 10 read, 0 written), 3 turns, from claude-code: renamed",
		reportLine(&domain.RunReport{Model: "m-1", CostUSD: &cost, Tokens: &domain.Tokens{Input: 1200, Output: 80, CacheRead: 10},
			Turns: 3, Summary: "renamed", Source: domain.ReportFromClaudeCode}))
	require.Equal(t, "cost unknown, 5 turns", reportLine(&domain.RunReport{Turns: 5}), "no cost is unknown, not free")
}
