package manifest_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/textsafe"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var (
	now  = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	last = now.Add(-24 * time.Hour)
)

func at(d time.Duration) time.Time { return now.Add(d) }

func obj(id, title string, status domain.Status, urgency string, updated time.Time) domain.Objective {
	return domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: title, Status: status, Urgency: urgency,
		CreatedAt: updated.Add(-time.Hour), UpdatedAt: updated}
}

// pr is objective id's pull request number, in state since settled (its
// update time, and its merge or close time when it is not OPEN).
func pr(id string, number int, state domain.PullRequestState, rounds int, settled time.Time) domain.PullRequest {
	p := domain.PullRequest{ObjectiveID: id, WorkOrderID: "wo-" + id + "-1", Forge: "gitea", Repository: "acme/app",
		Number: number, URL: fmt.Sprintf("https://forge.example/acme/app/pulls/%d", number), HeadBranch: "azolla/" + id,
		BaseBranch: "main", HeadSHA: strings.Repeat("a", 40), State: state, Rounds: rounds,
		CreatedAt: settled.Add(-time.Hour), UpdatedAt: settled}
	switch state {
	case domain.PullRequestMerged:
		p.MergedAt = &settled
	case domain.PullRequestClosed:
		p.ClosedAt = &settled
	}
	return p
}

// input is a substrate as the manifest scheduler will freeze it, its rows
// marshalled from store records.
func input(t *testing.T) manifest.Input {
	t.Helper()
	blockedA := obj("o-blocked-a", "Migrate the *billing* DB", domain.StatusBlocked, "HIGH", at(-30*time.Hour))
	blockedA.Blockers = []string{"waiting on DBA approval"}
	blockedB := obj("o-blocked-b", "Rotate keys", domain.StatusBlocked, "LOW", at(-2*time.Hour))
	blockedB.BlockerRef = domain.GateBlocker("wo-o-blocked-b-1")
	byStatus := []domain.Objective{
		obj("o-done-old", "Done before the last manifest", domain.StatusDone, "NORMAL", at(-48*time.Hour)),
		obj("o-done-1", "Add retry to the fetcher", domain.StatusDone, "NORMAL", at(-3*time.Hour)),
		obj("o-done-2", "Fix login\x1b]0;pwned\x07 on mobile", domain.StatusDone, "HIGH", at(-1*time.Hour)),
		obj("o-doing-1", "Write the manifest", domain.StatusInProgress, "NORMAL", at(-5*time.Hour)),
		obj("o-doing-2", "# Not a heading | [link](x)", domain.StatusInProgress, "CRITICAL", at(-1*time.Hour)),
		obj("o-new-1", "Proposed from a capture", domain.StatusNew, "NORMAL", at(-10*time.Minute)),
		blockedA, blockedB,
	}
	type overdueRow struct {
		domain.Objective
		Deadline time.Time `json:"deadline"`
	}
	overdue := []overdueRow{
		{obj("o-doing-1", "Write the manifest", domain.StatusInProgress, "NORMAL", at(-5*time.Hour)), at(-26*time.Hour - 30*time.Minute)},
		{obj("o-late-crit", "Renew the TLS certificate", domain.StatusTodo, "CRITICAL", at(-10*time.Hour)), at(-90 * time.Minute)},
	}
	pauses := []domain.PauseState{
		{PauseStateID: "pause-o-new-1", ObjectiveID: "o-new-1", Reason: domain.PauseRejected, PrioritizedActions: []string{"Approve or reject o-new-1"}, CreatedAt: at(-10 * time.Minute)},
		{PauseStateID: "pause-o-done-2", ObjectiveID: "o-done-2", WorkOrderID: "wo-o-done-2-1", Reason: domain.PauseRunComplete, PrioritizedActions: []string{"Review PR on azolla/o-done-2", "Confirm completion"}, CreatedAt: at(-1 * time.Hour)},
	}
	runs := []domain.RunRecord{
		{WorkOrderID: "wo-o-blocked-b-1", ObjectiveID: "o-blocked-b", GateResult: domain.GateFail, GateReason: "tests failed:\n--- FAIL: TestRotate", CreatedAt: at(-2 * time.Hour), UpdatedAt: at(-2 * time.Hour)},
		{WorkOrderID: "wo-o-done-1-1", ObjectiveID: "o-done-1", GateResult: domain.GateFail, GateReason: "empty patch", CreatedAt: at(-4 * time.Hour), UpdatedAt: at(-4 * time.Hour)},
		{WorkOrderID: "wo-o-done-1-2", ObjectiveID: "o-done-1", GateResult: domain.GatePass, GateReason: "ok", CreatedAt: at(-3 * time.Hour), UpdatedAt: at(-3 * time.Hour)},
		{WorkOrderID: "wo-old-1", ObjectiveID: "o-done-old", GateResult: domain.GateFail, GateReason: "before the last manifest", CreatedAt: at(-40 * time.Hour), UpdatedAt: at(-40 * time.Hour)},
	}
	prs := []domain.PullRequest{
		pr("o-done-2", 12, domain.PullRequestOpen, 2, at(-1*time.Hour)),
		pr("o-closed-1", 11, domain.PullRequestClosed, 3, at(-6*time.Hour)),
		pr("o-done-1", 10, domain.PullRequestMerged, 1, at(-150*time.Minute)),
		pr("o-review-old", 3, domain.PullRequestOpen, 1, at(-50*time.Hour)),
		pr("o-done-old", 5, domain.PullRequestClosed, 1, at(-40*time.Hour)),
	}
	in := manifest.Input{Format: manifest.InputFormat, Scope: "ticket", Now: now, LastManifestAt: &last}
	spend := []manifest.SpendRow{
		spendRow("wo-triage-1", "", "", "openai", &manifest.SpendReport{Model: "gpt-5-mini", Tokens: &domain.Tokens{Input: 500, Output: 100}}, at(-1*time.Hour)),
		spendRow("wo-o-static-1", "o-static", "acme/app", "static", nil, at(-1*time.Hour)),
		spendRow("wo-o-blocked-b-1", "o-blocked-b", "acme/billing", "openai", &manifest.SpendReport{Model: "gpt-5-mini", CostUSD: usd(0.004),
			Tokens: &domain.Tokens{Input: 1200, Output: 300}}, at(-2*time.Hour)),
		spendRow("wo-o-done-1-2", "o-done-1", "acme/app", "command", nil, at(-3*time.Hour)),
		spendRow("wo-o-done-1-1", "o-done-1", "acme/app", "command", &manifest.SpendReport{Model: "claude-sonnet-4-5", CostUSD: usd(1.25),
			Tokens: &domain.Tokens{Input: 1000, Output: 200, CacheRead: 5000, CacheWrite: 300}}, at(-4*time.Hour)),
		spendRow("wo-o-doing-1-1", "o-doing-1", "", "command", &manifest.SpendReport{Model: "claude-sonnet-4-5", CostUSD: usd(0.5)}, at(-5*time.Hour)),
		spendRow("wo-old-1", "o-done-old", "acme/app", "command", &manifest.SpendReport{Model: "claude-sonnet-4-5", CostUSD: usd(9.99)}, at(-40*time.Hour)),
	}
	add := func(q manifest.QueryResult, err error) {
		t.Helper()
		require.NoError(t, err)
		in.Queries = append(in.Queries, q)
	}
	add(manifest.Rows(manifest.QueryObjectivesByStatus, 1, map[string]string{"statuses": "NEW,TODO,IN_PROGRESS,DONE,BLOCKED"}, byStatus))
	add(manifest.Rows(manifest.QueryBlockedObjectives, 1, nil, []domain.Objective{blockedA, blockedB}))
	add(manifest.Rows(manifest.QueryOverdueObjectives, 1, map[string]string{"now": now.Format(time.RFC3339)}, overdue))
	add(manifest.Rows(manifest.QueryHumanPauseStates, 1, nil, pauses))
	add(manifest.Rows(manifest.QueryRecentRunRecords, 1, map[string]string{"limit": "100"}, runs))
	add(manifest.Rows(manifest.QueryPullRequests, 1, map[string]string{"limit": "100"}, prs))
	add(manifest.Rows(manifest.QueryRunSpend, 1, map[string]string{"limit": "100", "since": "2026-10-24T12:00:00Z"}, spend))
	return in
}

func usd(v float64) *float64 { return &v }

func spendRow(wo, objective, repository, generator string, report *manifest.SpendReport, created time.Time) manifest.SpendRow {
	return manifest.SpendRow{WorkOrderID: wo, ObjectiveID: objective, Repository: repository, Generator: generator,
		RunReport: report, CreatedAt: created}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to write %s", path)
	require.Equal(t, string(want), got, "differs from %s (go test -update rewrites it)", path)
}

func request(prompt string) diazotroph.Request {
	return diazotroph.Request{
		WorkOrder: domain.WorkOrder{WorkOrderID: "wo-manifest-1", DiazotrophType: manifest.Type},
		Snapshot:  domain.ContextSnapshot{ContextSnapshotID: "ctx-m-1", ObjectiveID: "manifest-default", FullPromptText: prompt},
		Budget:    time.Minute,
	}
}

func TestManifest_ExecuteWritesTheGoldenReportThroughTheRegistry(t *testing.T) {
	t.Parallel()
	prompt, err := manifest.EncodeInput(input(t))
	require.NoError(t, err)
	golden(t, "input.json", prompt+"\n")

	d, err := diazotroph.NewRegistry(manifest.Diazotroph{}).Lookup(manifest.Type)
	require.NoError(t, err)
	res, err := d.Execute(t.Context(), request(prompt))
	require.NoError(t, err)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Equal(t, "Manifest as of 2026-11-23T12:00:00Z: 7 top action(s)", res.Title)
	golden(t, "manifest.golden.md", res.Content)
	require.Equal(t, res.Content, textsafe.Block(res.Content), "nothing a terminal would obey")
	require.True(t, strings.HasPrefix(res.Notes, "action: Finish or re-plan o-late-crit"), res.Notes)

	// The same snapshot, decoded afresh, gives the same bundle.
	again, err := manifest.Diazotroph{}.Execute(t.Context(), request(prompt))
	require.NoError(t, err)
	require.Equal(t, res, again)
}

// One action per objective, by urgency, then kind (overdue, gate failure,
// blocked, pull request to review, waiting for a human), then age; a gate
// failure of an objective DONE since is no action, and an open pull request
// names what to review better than the pause of the same objective.
func TestManifest_TopActionsRankByUrgencyThenKindOnePerObjective(t *testing.T) {
	t.Parallel()
	rep, err := manifest.Build(input(t))
	require.NoError(t, err)
	require.Equal(t, []string{
		"Finish or re-plan o-late-crit (Renew the TLS certificate): overdue by 1h 30m",
		"Unblock o-blocked-a (Migrate the *billing* DB): waiting on DBA approval",
		"Review pull request https://forge.example/acme/app/pulls/12 of o-done-2",
		"Finish or re-plan o-doing-1 (Write the manifest): overdue by 1d 2h 30m",
		"Review pull request https://forge.example/acme/app/pulls/3 of o-review-old",
		"o-new-1: Approve or reject o-new-1",
		`Review the gate failure of wo-o-blocked-b-1 for o-blocked-b: tests failed:\x0a--- FAIL: TestRotate`,
	}, rep.TopActions)
	for _, a := range rep.TopActions {
		require.NoError(t, textsafe.CheckLine(a))
	}
	require.Empty(t, rep.Notes)
}

func TestManifest_QueryOrderDoesNotChangeTheReport(t *testing.T) {
	t.Parallel()
	in := input(t)
	want, err := manifest.Build(in)
	require.NoError(t, err)
	for i, j := 0, len(in.Queries)-1; i < j; i, j = i+1, j-1 {
		in.Queries[i], in.Queries[j] = in.Queries[j], in.Queries[i]
	}
	for _, q := range in.Queries {
		for i, j := 0, len(q.Rows)-1; i < j; i, j = i+1, j-1 {
			q.Rows[i], q.Rows[j] = q.Rows[j], q.Rows[i]
		}
	}
	got, err := manifest.Build(in)
	require.NoError(t, err)
	require.Equal(t, want.TopActions, got.TopActions)
	// Only the Sources lines (row hashes) may differ with the row order.
	cut := func(s string) string { before, _, _ := strings.Cut(s, "## Sources"); return before }
	require.Equal(t, cut(want.Markdown), cut(got.Markdown))
}

func TestManifest_ContentHashIgnoresIndentationButNotContent(t *testing.T) {
	t.Parallel()
	a := manifest.QueryResult{Name: "q", Rows: []json.RawMessage{json.RawMessage(`{"a": 1,  "b": [1, 2]}`)}}
	b := manifest.QueryResult{Name: "q", Rows: []json.RawMessage{json.RawMessage("{\n\"a\":1,\"b\":[1,2]}")}}
	c := manifest.QueryResult{Name: "q", Rows: []json.RawMessage{json.RawMessage(`{"a":2,"b":[1,2]}`)}}
	ha, err := a.ContentHash()
	require.NoError(t, err)
	hb, err := b.ContentHash()
	require.NoError(t, err)
	hc, err := c.ContentHash()
	require.NoError(t, err)
	require.Equal(t, ha, hb)
	require.NotEqual(t, ha, hc)
	require.True(t, strings.HasPrefix(ha, "sha256:"), ha)
}

func TestManifest_EmptySubstrateWritesEmptySectionsAndNotesMissingQueries(t *testing.T) {
	t.Parallel()
	rep, err := manifest.Build(manifest.Input{Format: manifest.InputFormat, Now: now})
	require.NoError(t, err)
	require.Contains(t, rep.Markdown, "## Blocked (0)\n\n_None._\n")
	require.Contains(t, rep.Markdown, "- Since the last manifest: none was written before\n")
	require.Empty(t, rep.TopActions)
	require.Len(t, rep.Notes, 7)
	require.Contains(t, rep.Notes, "query pull_requests is missing: its sections are incomplete")
	require.Contains(t, rep.Notes, "query run_spend is missing: its sections are incomplete")
	require.Contains(t, rep.Markdown, "## Spend since the last manifest\n\n_Not known: query run_spend is missing._\n", "a spend not read is not $0")
	require.Contains(t, rep.Markdown, "## Pull requests waiting for review (0)\n\n_None._\n")
	require.Contains(t, rep.Notes, "query overdue_objectives is missing: its sections are incomplete")
}

func TestManifest_ExecuteRefusesASnapshotWithoutManifestInput(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"plain prompt":         "write a manifest",
		"other format":         `{"format":"azolla.triage_input/v1","now":"2026-11-23T12:00:00Z","queries":[]}`,
		"no now":               `{"format":"azolla.manifest_input/v1","queries":[]}`,
		"unknown field":        `{"format":"azolla.manifest_input/v1","now":"2026-11-23T12:00:00Z","queries":[],"colour":1}`,
		"query twice":          `{"format":"azolla.manifest_input/v1","now":"2026-11-23T12:00:00Z","queries":[{"name":"a","version":1,"parameters":{},"rows":[]},{"name":"a","version":1,"parameters":{},"rows":[]}]}`,
		"row of the wrong":     `{"format":"azolla.manifest_input/v1","now":"2026-11-23T12:00:00Z","queries":[{"name":"recent_run_records","version":1,"parameters":{},"rows":[{"created_at":"yesterday"}]}]}`,
		"pull request number":  `{"format":"azolla.manifest_input/v1","now":"2026-11-23T12:00:00Z","queries":[{"name":"pull_requests","version":1,"parameters":{},"rows":[{"objective_id":"o1","number":"twelve"}]}]}`,
		"pull request not obj": `{"format":"azolla.manifest_input/v1","now":"2026-11-23T12:00:00Z","queries":[{"name":"pull_requests","version":1,"parameters":{},"rows":[["o1",12]]}]}`,
		"overdue no deadline":  `{"format":"azolla.manifest_input/v1","now":"2026-11-23T12:00:00Z","queries":[{"name":"overdue_objectives","version":1,"parameters":{},"rows":[{"objective_id":"o1"}]}]}`,
	}
	for name, prompt := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := manifest.Diazotroph{}.Execute(t.Context(), request(prompt))
			require.ErrorIs(t, err, manifest.ErrInvalidInput)
			require.Contains(t, err.Error(), "MANIFEST_DIAZOTROPH: workorder wo-manifest-1: snapshot ctx-m-1: invalid manifest input")
			require.Equal(t, diazotroph.Result{}, res)
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := manifest.Diazotroph{}.Execute(ctx, request("x"))
	require.ErrorIs(t, err, context.Canceled)
}

func withoutQuery(in manifest.Input, name string) manifest.Input {
	var qs []manifest.QueryResult
	for _, q := range in.Queries {
		if q.Name != name {
			qs = append(qs, q)
		}
	}
	in.Queries = qs
	return in
}

// A manifest recorded before pull requests were queried still builds: its
// pull request sections are empty and a note says the query is missing.
func TestManifest_AnInputWithoutPullRequestsStillBuilds(t *testing.T) {
	t.Parallel()
	rep, err := manifest.Build(withoutQuery(input(t), manifest.QueryPullRequests))
	require.NoError(t, err)
	require.Equal(t, []string{"query pull_requests is missing: its sections are incomplete"}, rep.Notes)
	require.Contains(t, rep.Markdown, "## Pull requests waiting for review (0)\n\n_None._\n")
	require.Contains(t, rep.Markdown, "## Pull requests merged or closed since the last manifest (0)\n\n_None._\n")
	// The pause of o-done-2 is its action again.
	require.Contains(t, rep.TopActions, "o-done-2: Review PR on azolla/o-done-2")
}

// No pull requests is no note; a substrate that has no table for them is
// one, so the empty sections are not read as "none".
func TestManifest_NoPullRequestsAndNoTableForThem(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		params map[string]string
		notes  []string
	}{
		"none":     {map[string]string{"limit": "500"}, nil},
		"no table": {map[string]string{"limit": "500", manifest.ParamTableAbsent: "true"}, []string{"query pull_requests: the substrate has no table for it (its store is older): its sections are empty"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := withoutQuery(input(t), manifest.QueryPullRequests)
			q, err := manifest.Rows(manifest.QueryPullRequests, 1, tc.params, []manifest.PullRequestRow{})
			require.NoError(t, err)
			in.Queries = append(in.Queries, q)
			rep, err := manifest.Build(in)
			require.NoError(t, err)
			require.Equal(t, tc.notes, rep.Notes)
			require.Contains(t, rep.Markdown, "## Pull requests waiting for review (0)\n\n_None._\n")
			require.Contains(t, rep.Markdown, "## Pull requests merged or closed since the last manifest (0)\n\n_None._\n")
		})
	}
}

// small is an input of the given objectives (objectives_by_status), pull
// requests and pause states alone.
func small(t *testing.T, objs []domain.Objective, prs []domain.PullRequest, pauses []domain.PauseState) manifest.Input {
	t.Helper()
	in := manifest.Input{Format: manifest.InputFormat, Now: now, LastManifestAt: &last}
	for _, q := range []func() (manifest.QueryResult, error){
		func() (manifest.QueryResult, error) {
			return manifest.Rows(manifest.QueryObjectivesByStatus, 1, nil, objs)
		},
		func() (manifest.QueryResult, error) { return manifest.Rows(manifest.QueryPullRequests, 1, nil, prs) },
		func() (manifest.QueryResult, error) {
			return manifest.Rows(manifest.QueryHumanPauseStates, 1, nil, pauses)
		},
	} {
		r, err := q()
		require.NoError(t, err)
		in.Queries = append(in.Queries, r)
	}
	return in
}

// An open pull request ranks with the other actions by its objective's
// urgency (NORMAL when the objective is not in the rows), then after
// blocked and before waiting for a human, then the longest untouched first.
func TestManifest_AnOpenPullRequestRanksAfterBlockedBeforeAHumanPause(t *testing.T) {
	t.Parallel()
	blocked := obj("o-blocked", "Blocked", domain.StatusBlocked, "NORMAL", at(-time.Hour))
	blocked.Blockers = []string{"waiting"}
	objs := []domain.Objective{
		blocked,
		obj("o-pr-high", "High", domain.StatusDone, "HIGH", at(-time.Minute)),
		obj("o-pr-normal", "Normal", domain.StatusDone, "NORMAL", at(-time.Minute)),
		obj("o-paused", "Paused", domain.StatusTodo, "NORMAL", at(-time.Hour)),
	}
	prs := []domain.PullRequest{
		pr("o-pr-normal", 2, domain.PullRequestOpen, 1, at(-2*time.Hour)),
		pr("o-pr-unknown", 3, domain.PullRequestOpen, 1, at(-3*time.Hour)),
		pr("o-pr-high", 1, domain.PullRequestOpen, 4, at(-time.Minute)),
		pr("o-merged", 4, domain.PullRequestMerged, 1, at(-time.Minute)),
		pr("o-closed", 5, domain.PullRequestClosed, 1, at(-time.Minute)),
	}
	pauses := []domain.PauseState{{PauseStateID: "p-1", ObjectiveID: "o-paused", Reason: domain.PauseRejected,
		PrioritizedActions: []string{"Look at it"}, CreatedAt: at(-5 * time.Hour)}}
	rep, err := manifest.Build(small(t, objs, prs, pauses))
	require.NoError(t, err)
	require.Equal(t, []string{
		"Review pull request https://forge.example/acme/app/pulls/1 of o-pr-high",
		"Unblock o-blocked (Blocked): waiting",
		"Review pull request https://forge.example/acme/app/pulls/3 of o-pr-unknown",
		"Review pull request https://forge.example/acme/app/pulls/2 of o-pr-normal",
		"o-paused: Look at it",
	}, rep.TopActions, "merged and closed pull requests are no action")
	require.Contains(t, rep.Markdown, "## Pull requests waiting for review (3)\n\n"+
		"- objective `o-pr-high`: https://forge.example/acme/app/pulls/1 (round 4), updated 2026-11-23T11:59:00Z\n"+
		"- objective `o-pr-unknown`: https://forge.example/acme/app/pulls/3 (round 1), updated 2026-11-23T09:00:00Z\n"+
		"- objective `o-pr-normal`: https://forge.example/acme/app/pulls/2 (round 1), updated 2026-11-23T10:00:00Z\n")
	require.Contains(t, rep.Markdown, "## Pull requests merged or closed since the last manifest (2)\n")

	// A gate failure of the same objective outranks its pull request: one
	// action per objective.
	in := small(t, objs, prs, pauses)
	runs, err := manifest.Rows(manifest.QueryRecentRunRecords, 1, nil, []domain.RunRecord{{WorkOrderID: "wo-2",
		ObjectiveID: "o-pr-normal", GateResult: domain.GateFail, GateReason: "round 2 failed", CreatedAt: at(-time.Minute)}})
	require.NoError(t, err)
	in.Queries = append(in.Queries, runs)
	objs[2].Status = domain.StatusInProgress
	in.Queries[0], err = manifest.Rows(manifest.QueryObjectivesByStatus, 1, nil, objs)
	require.NoError(t, err)
	rep, err = manifest.Build(in)
	require.NoError(t, err)
	require.Contains(t, rep.TopActions, "Review the gate failure of wo-2 for o-pr-normal: round 2 failed")
	require.NotContains(t, rep.TopActions, "Review pull request https://forge.example/acme/app/pulls/2 of o-pr-normal")
}

// A pull request's URL and objective are text from a forge: they are made
// one safe line, escaped in the Markdown, and cannot forge a section.
func TestManifest_APullRequestURLIsMadeSafe(t *testing.T) {
	t.Parallel()
	p := pr("o_x", 9, domain.PullRequestOpen, 1, at(-time.Hour))
	p.URL = "https://forge.example/a_b/pulls/9\n## Top actions\x1b[31m"
	rep, err := manifest.Build(small(t, nil, []domain.PullRequest{p}, nil))
	require.NoError(t, err)
	require.Equal(t, []string{`Review pull request https://forge.example/a_b/pulls/9\x0a## Top actions\x1b[31m of o_x`}, rep.TopActions)
	require.NoError(t, textsafe.CheckLine(rep.TopActions[0]))
	require.Contains(t, rep.Markdown, "- objective `o_x`: https://forge.example/a\\_b/pulls/9\\\\x0a\\#\\# Top actions\\\\x1b\\[31m (round 1)")
	require.Equal(t, 1, strings.Count(rep.Markdown, "\n## Top actions\n"))
}
