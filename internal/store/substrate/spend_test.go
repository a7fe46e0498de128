package substrate_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/internal/store/substrate"
	"github.com/azolla/azolla/internal/textsafe"
)

func usd(v float64) *float64 { return &v }

// bundle writes workorder wo's output bundle with metadata m, created at.
func bundle(t *testing.T, s store.Store, wo *domain.WorkOrder, m domain.BundleMetadata, at time.Time) {
	t.Helper()
	ctx := context.Background()
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	_, _, err = s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Run", Content: "x",
		Metadata: m, RunnerStatus: domain.RunnerOK, CreatedAt: at})
	require.NoError(t, err)
}

// objectiveBundle writes a new objective id of repository ("" for none)
// with one workorder and its bundle.
func objectiveBundle(t *testing.T, s store.Store, id, repository string, m domain.BundleMetadata, at time.Time) {
	t.Helper()
	o := storetest.Objective(id)
	o.Repository = repository
	bundle(t, s, storetest.ScheduledObjective(t, s, o, at), m, at)
}

// setMetadata writes a bundle's metadata as raw JSON, past the store's
// schema, as a hostile or broken substrate could hold it.
func setMetadata(t *testing.T, s *sqlstore.Store, cfg substrate.Config, workOrderID, raw string) {
	t.Helper()
	q := `UPDATE output_bundles SET metadata = ? WHERE work_order_id = ?`
	if cfg.Driver == substrate.DriverPostgres {
		q = `UPDATE output_bundles SET metadata = $1::jsonb WHERE work_order_id = $2`
	}
	res, err := s.DB().ExecContext(t.Context(), q, raw, workOrderID)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

func spendQuery(t *testing.T, cfg substrate.Config, now time.Time) (manifest.QueryResult, []manifest.QueryResult) {
	t.Helper()
	qs, err := open(t, cfg).ManifestQueries(t.Context(), "", now)
	require.NoError(t, err)
	return byName(qs)[manifest.QueryRunSpend], qs
}

func spendRows(t *testing.T, q manifest.QueryResult) []manifest.SpendRow {
	t.Helper()
	out := []manifest.SpendRow{}
	for _, r := range q.Rows {
		var v manifest.SpendRow
		require.NoError(t, json.Unmarshal(r, &v))
		out = append(out, v)
	}
	return out
}

// The bundles of the lookback whose runs could cost, newest first, each
// with its objective's repository; a track's run has no objective; a run
// of the static generator and a run before the lookback are not read.
func TestManifestQueries_RunSpendReadsTheCostlyRunsOfTheLookback(t *testing.T) {
	forEach(t, func(t *testing.T, s *sqlstore.Store, cfg substrate.Config) {
		now := t0.Add(40 * 24 * time.Hour) // the lookback (30 days) starts at t0+10d
		day := func(n int) time.Time { return t0.Add(time.Duration(n) * 24 * time.Hour) }
		tokens := &domain.Tokens{Input: 100, Output: 20, CacheRead: 5, CacheWrite: 1}
		objectiveBundle(t, s, "o-app", "acme/app", domain.BundleMetadata{Generator: "command", BranchName: "azolla/o-app",
			RunReport: &domain.RunReport{Model: "claude-sonnet-4-5", CostUSD: usd(1.25), Tokens: tokens, Turns: 3,
				Summary: "did it", Transcript: &domain.RunTranscript{Text: "long transcript"}}}, day(20))
		objectiveBundle(t, s, "o-norepo", "", domain.BundleMetadata{Generator: "command"}, day(21))
		objectiveBundle(t, s, "o-static", "acme/app", domain.BundleMetadata{Generator: "static"}, day(23))
		objectiveBundle(t, s, "o-old", "acme/app", domain.BundleMetadata{Generator: "command",
			RunReport: &domain.RunReport{CostUSD: usd(9)}}, day(5))
		bundle(t, s, storetest.TrackScheduled(t, s, "inbox", "wo-manifest-1", day(22)), domain.BundleMetadata{Generator: "openai",
			RunReport: &domain.RunReport{Model: "gpt-5-mini", Tokens: &domain.Tokens{Input: 7}}}, day(22))

		q, qs := spendQuery(t, cfg, now)
		require.Equal(t, 1, q.Version)
		require.Equal(t, "other", q.Substrate)
		require.Equal(t, map[string]string{"since": day(10).Format(time.RFC3339Nano), "limit": "500"}, q.Parameters)
		require.Equal(t, []manifest.SpendRow{
			{WorkOrderID: "wo-manifest-1", Generator: "openai", RunReport: &manifest.SpendReport{Model: "gpt-5-mini",
				Tokens: &domain.Tokens{Input: 7}}, CreatedAt: day(22)},
			{WorkOrderID: "wo-o-norepo", ObjectiveID: "o-norepo", Generator: "command", CreatedAt: day(21)},
			{WorkOrderID: "wo-o-app", ObjectiveID: "o-app", Repository: "acme/app", Generator: "command",
				RunReport: &manifest.SpendReport{Model: "claude-sonnet-4-5", CostUSD: usd(1.25), Tokens: tokens}, CreatedAt: day(20)},
		}, spendRows(t, q))
		for _, r := range q.Rows {
			require.NotContains(t, string(r), "transcript", "only what a spend reads")
			require.NotContains(t, string(r), "branch_name")
		}

		rep, err := manifest.Build(manifest.Input{Format: manifest.InputFormat, Now: now, Queries: qs})
		require.NoError(t, err)
		require.Empty(t, rep.Notes)
		require.Contains(t, rep.Markdown, "## Spend since the last manifest\n\n"+
			"- Total: at least $1.25 over 3 runs (2 of unknown cost); tokens: 107 input, 20 output, 5 cache read, 1 cache write\n\n"+
			"### By repository (3)\n\n"+
			"- acme/app: $1.25 over 1 run; tokens: 100 input, 20 output, 5 cache read, 1 cache write\n"+
			"- (no repository): cost unknown over 1 run (none reported a cost); no tokens reported\n"+
			"- (tasks): cost unknown over 1 run (none reported a cost); tokens: 7 input, 0 output, 0 cache read, 0 cache write\n\n"+
			"### By model (3)\n\n"+
			"- claude-sonnet-4-5: $1.25 over 1 run; tokens: 100 input, 20 output, 5 cache read, 1 cache write\n"+
			"- (model not reported): cost unknown over 1 run (none reported a cost); no tokens reported\n"+
			"- gpt-5-mini: cost unknown over 1 run (none reported a cost); tokens: 7 input, 0 output, 0 cache read, 0 cache write\n")
	})
}

// The cap bounds the bundles read, newest first: the costly runs among
// them are kept, and the result and the report say it was capped.
func TestManifestQueries_RunSpendCapsTheBundlesRead(t *testing.T) {
	forEach(t, func(t *testing.T, s *sqlstore.Store, cfg substrate.Config) {
		now := t0.Add(24 * time.Hour)
		for i := range 3 {
			objectiveBundle(t, s, "o-"+strconv.Itoa(i), "acme/app", domain.BundleMetadata{Generator: "command",
				RunReport: &domain.RunReport{CostUSD: usd(float64(i + 1))}}, t0.Add(time.Duration(i)*time.Minute))
		}
		objectiveBundle(t, s, "o-static", "acme/app", domain.BundleMetadata{Generator: "static"}, t0.Add(time.Hour))

		cfg.RowCap = 3
		q, qs := spendQuery(t, cfg, now)
		require.Equal(t, "true", q.Parameters["truncated"])
		require.Equal(t, "3", q.Parameters["limit"])
		got := []string{}
		for _, r := range spendRows(t, q) {
			got = append(got, r.WorkOrderID)
		}
		require.Equal(t, []string{"wo-o-2", "wo-o-1"}, got, "the static run took a place in the cap; the oldest run is left out")
		rep, err := manifest.Build(manifest.Input{Format: manifest.InputFormat, Now: now, Queries: qs})
		require.NoError(t, err)
		require.Contains(t, rep.Markdown, "- Total: $5.00 over 2 runs; no tokens reported\n"+
			"- Capped: the substrate gave only its newest 3 runs of its lookback")

		cfg.RowCap = 4
		q, _ = spendQuery(t, cfg, now)
		require.Empty(t, q.Parameters["truncated"])
		require.Len(t, q.Rows, 3)
	})
}

// A model name in a substrate is text an agent wrote, perhaps past any
// schema: the query passes it on as it is, and the report makes it one
// safe, bounded line.
func TestManifestQueries_RunSpendAHostileModelNameIsMadeSafeInTheReport(t *testing.T) {
	forEach(t, func(t *testing.T, s *sqlstore.Store, cfg substrate.Config) {
		now := t0.Add(time.Hour)
		objectiveBundle(t, s, "o-x", "acme/app", domain.BundleMetadata{Generator: "command"}, t0)
		hostile := "m\x1b]0;pwned\x07\n## Top actions\n" + strings.Repeat("z", 400)
		raw, err := json.Marshal(map[string]any{"generator": "command", "run_report": map[string]any{"model": hostile, "cost_usd": 0.5}})
		require.NoError(t, err)
		setMetadata(t, s, cfg, "wo-o-x", string(raw))

		q, qs := spendQuery(t, cfg, now)
		rows := spendRows(t, q)
		require.Len(t, rows, 1)
		require.Equal(t, hostile, rows[0].RunReport.Model, "the row keeps what the substrate holds")
		rep, err := manifest.Build(manifest.Input{Format: manifest.InputFormat, Now: now, Queries: qs})
		require.NoError(t, err)
		require.Equal(t, rep.Markdown, textsafe.Block(rep.Markdown))
		require.Equal(t, 1, strings.Count(rep.Markdown, "\n## Top actions\n"))
		require.Contains(t, rep.Markdown, "- m\\\\x1b\\]0;pwned\\\\x07\\\\x0a\\#\\# Top actions\\\\x0azzz")
		require.NotContains(t, rep.Markdown, strings.Repeat("z", 200), "the model is bounded")
	})
}

// A best-of-N workorder's runs are its candidates: each that started
// counts, a skipped one does not, and its bundle, which repeats the
// winner's report, is not read.
func TestManifestQueries_RunSpendReadsCandidatesNotTheirBundle(t *testing.T) {
	forEach(t, func(t *testing.T, s *sqlstore.Store, cfg substrate.Config) {
		ctx := t.Context()
		now := t0.Add(40 * 24 * time.Hour)
		at := t0.Add(20 * 24 * time.Hour)
		o := storetest.Objective("o-best")
		o.Repository = "acme/app"
		wo := storetest.ScheduledObjective(t, s, o, at)
		winner := &domain.RunReport{Model: "m", CostUSD: usd(0.6)}
		bundle(t, s, wo, domain.BundleMetadata{Generator: "command", RunReport: winner}, at)
		for k, c := range map[int]*domain.Candidate{
			1: {Status: domain.CandidateDone, Report: &domain.RunReport{Model: "m", CostUSD: usd(0.4)}},
			2: {Status: domain.CandidateDone, Report: winner},
			3: {Status: domain.CandidateSkipped, Why: "not started: the budget is spent"},
		} {
			c.WorkOrderID, c.Attempt, c.Generator, c.CreatedAt, c.UpdatedAt = wo.WorkOrderID, k, "command", at, at
			c.GateResults = []domain.CandidateGateResult{}
			_, err := s.PutCandidate(ctx, c)
			require.NoError(t, err)
		}
		q, _ := spendQuery(t, cfg, now)
		rows := spendRows(t, q)
		require.Len(t, rows, 2, "the two candidates that ran, not the bundle, not the skipped one")
		var sum float64
		for _, r := range rows {
			require.Equal(t, wo.WorkOrderID, r.WorkOrderID)
			require.Equal(t, "acme/app", r.Repository)
			sum += *r.RunReport.CostUSD
		}
		require.InDelta(t, 1.0, sum, 1e-9)
	})
}
