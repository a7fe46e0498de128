package manifest_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/textsafe"
)

// spendInput is an input of the run_spend query alone, with params.
func spendInput(t *testing.T, params map[string]string, rows ...manifest.SpendRow) manifest.Input {
	t.Helper()
	q, err := manifest.Rows(manifest.QueryRunSpend, 1, params, rows)
	require.NoError(t, err)
	return manifest.Input{Format: manifest.InputFormat, Now: now, LastManifestAt: &last, Queries: []manifest.QueryResult{q}}
}

// spendOf is the report's spend section, up to the next "## " section.
func spendOf(t *testing.T, in manifest.Input) string {
	t.Helper()
	rep, err := manifest.Build(in)
	require.NoError(t, err)
	_, rest, ok := strings.Cut(rep.Markdown, "\n## Spend since the last manifest\n\n")
	require.True(t, ok, rep.Markdown)
	section, _, ok := strings.Cut(rest, "\n## ")
	require.True(t, ok, rest)
	return section
}

// Runs whose cost nobody reported are counted and said to be of unknown
// cost: never $0, neither in the total nor in a group.
func TestManifest_SpendOfUnknownCostIsNeverFree(t *testing.T) {
	t.Parallel()
	got := spendOf(t, spendInput(t, nil,
		spendRow("wo-1", "o-1", "acme/app", "command", nil, at(-time.Hour)),
		spendRow("wo-2", "o-2", "acme/app", "openai", &manifest.SpendReport{Model: "gpt-5", Tokens: &domain.Tokens{Output: 7}}, at(-2*time.Hour)),
	))
	require.Equal(t, "- Total: cost unknown over 2 runs (none reported a cost); tokens: 0 input, 7 output, 0 cache read, 0 cache write\n\n"+
		"### By repository (1)\n\n"+
		"- acme/app: cost unknown over 2 runs (none reported a cost); tokens: 0 input, 7 output, 0 cache read, 0 cache write\n\n"+
		"### By model (2)\n\n"+
		"- (model not reported): cost unknown over 1 run (none reported a cost); no tokens reported\n"+
		"- gpt-5: cost unknown over 1 run (none reported a cost); tokens: 0 input, 7 output, 0 cache read, 0 cache write\n", got)
	require.NotContains(t, got, "$0")
}

// The period is the manifest's: a run before the last manifest is not
// counted; a run that could not cost (the static generator) is no run.
func TestManifest_SpendCountsTheRunsOfThePeriodThatCouldCost(t *testing.T) {
	t.Parallel()
	got := spendOf(t, spendInput(t, map[string]string{"limit": "500"},
		spendRow("wo-static", "o-1", "acme/app", "static", nil, at(-time.Hour)),
		spendRow("wo-old", "o-1", "acme/app", "command", &manifest.SpendReport{CostUSD: usd(3)}, at(-25*time.Hour)),
	))
	require.Equal(t, "- Total: nothing recorded\n\n### By repository (0)\n\n_None._\n\n### By model (0)\n\n_None._\n", got)

	// Without a last manifest, every run the substrate gave counts.
	in := spendInput(t, nil, spendRow("wo-old", "o-1", "acme/app", "command", &manifest.SpendReport{CostUSD: usd(3)}, at(-25*time.Hour)))
	in.LastManifestAt = nil
	require.Contains(t, spendOf(t, in), "- Total: $3.00 over 1 run; no tokens reported\n")
}

// Rows the substrate capped make the figures a lower bound, and the
// section says so.
func TestManifest_SpendSaysWhenTheSubstrateCappedItsRows(t *testing.T) {
	t.Parallel()
	got := spendOf(t, spendInput(t, map[string]string{"limit": "2", "truncated": "true"},
		spendRow("wo-1", "o-1", "acme/app", "command", &manifest.SpendReport{Model: "m", CostUSD: usd(1)}, at(-time.Hour)),
		spendRow("wo-2", "o-2", "acme/app", "command", &manifest.SpendReport{Model: "m", CostUSD: usd(2)}, at(-2*time.Hour)),
	))
	require.Contains(t, got, "- Total: $3.00 over 2 runs; no tokens reported\n"+
		"- Capped: the substrate gave only its newest 2 runs of its lookback; older runs of the period are not counted, so the figures are a lower bound\n")
	require.NotContains(t, spendOf(t, spendInput(t, map[string]string{"limit": "2"})), "Capped")
}

// A model name is text an agent wrote: it becomes one bounded, escaped
// line that can neither drive a terminal nor forge a section.
func TestManifest_AHostileModelNameIsMadeSafe(t *testing.T) {
	t.Parallel()
	hostile := "evil\x1b]0;pwned\x07\n## Top actions\n1. `rm -rf` | [x](y) " + strings.Repeat("z", 500)
	in := spendInput(t, nil,
		spendRow("wo-1", "o-1", "acme/app\n## Repo", "command", &manifest.SpendReport{Model: hostile, CostUSD: usd(0.25)}, at(-time.Hour)))
	rep, err := manifest.Build(in)
	require.NoError(t, err)
	require.Equal(t, rep.Markdown, textsafe.Block(rep.Markdown), "nothing a terminal would obey")
	require.Equal(t, 1, strings.Count(rep.Markdown, "\n## Top actions\n"))
	require.NotContains(t, rep.Markdown, "\n## Repo")
	got := spendOf(t, in)
	require.Contains(t, got, "- acme/app\\\\x0a\\#\\# Repo: $0.25 over 1 run; no tokens reported\n")
	var modelLine string
	for l := range strings.Lines(got) {
		if strings.HasPrefix(l, "- evil") {
			modelLine = l
		}
	}
	require.True(t, strings.HasPrefix(modelLine, "- evil\\\\x1b\\]0;pwned\\\\x07\\\\x0a\\#\\# Top actions\\\\x0a1. \\`rm -rf\\` \\| \\[x\\](y) zzz"), modelLine)
	require.Contains(t, modelLine, "…: $0.25 over 1 run; no tokens reported\n")
	require.Less(t, utf8.RuneCountInString(modelLine), 200, "the model is bounded")
}
