package manifest_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/diazotroph"
	"github.com/azolla/azolla/internal/diazotroph/manifest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var (
	now  = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	last = now.Add(-24 * time.Hour)
)

func at(d time.Duration) time.Time { return now.Add(d) }

func obj(id, title string, status store.Status, urgency string, updated time.Time) store.Objective {
	return store.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: title, Status: status, Urgency: urgency,
		CreatedAt: updated.Add(-time.Hour), UpdatedAt: updated}
}

// input is a substrate as the manifest scheduler will freeze it, its rows
// marshalled from store records.
func input(t *testing.T) manifest.Input {
	t.Helper()
	blockedA := obj("o-blocked-a", "Migrate the *billing* DB", store.StatusBlocked, "HIGH", at(-30*time.Hour))
	blockedA.Blockers = []string{"waiting on DBA approval"}
	blockedB := obj("o-blocked-b", "Rotate keys", store.StatusBlocked, "LOW", at(-2*time.Hour))
	blockedB.BlockerRef = store.GateBlocker("wo-o-blocked-b-1")
	byStatus := []store.Objective{
		obj("o-done-old", "Done before the last manifest", store.StatusDone, "NORMAL", at(-48*time.Hour)),
		obj("o-done-1", "Add retry to the fetcher", store.StatusDone, "NORMAL", at(-3*time.Hour)),
		obj("o-done-2", "Fix login\x1b]0;pwned\x07 on mobile", store.StatusDone, "HIGH", at(-1*time.Hour)),
		obj("o-doing-1", "Write the manifest", store.StatusInProgress, "NORMAL", at(-5*time.Hour)),
		obj("o-doing-2", "# Not a heading | [link](x)", store.StatusInProgress, "CRITICAL", at(-1*time.Hour)),
		obj("o-new-1", "Proposed from a capture", store.StatusNew, "NORMAL", at(-10*time.Minute)),
		blockedA, blockedB,
	}
	type overdueRow struct {
		store.Objective
		Deadline time.Time `json:"deadline"`
	}
	overdue := []overdueRow{
		{obj("o-doing-1", "Write the manifest", store.StatusInProgress, "NORMAL", at(-5*time.Hour)), at(-26*time.Hour - 30*time.Minute)},
		{obj("o-late-crit", "Renew the TLS certificate", store.StatusTodo, "CRITICAL", at(-10*time.Hour)), at(-90 * time.Minute)},
	}
	pauses := []store.PauseState{
		{PauseStateID: "pause-o-new-1", ObjectiveID: "o-new-1", Reason: store.PauseRejected, PrioritizedActions: []string{"Approve or reject o-new-1"}, CreatedAt: at(-10 * time.Minute)},
		{PauseStateID: "pause-o-done-2", ObjectiveID: "o-done-2", WorkOrderID: "wo-o-done-2-1", Reason: store.PauseRunComplete, PrioritizedActions: []string{"Review PR on azolla/o-done-2", "Confirm completion"}, CreatedAt: at(-1 * time.Hour)},
	}
	runs := []store.RunRecord{
		{WorkOrderID: "wo-o-blocked-b-1", ObjectiveID: "o-blocked-b", GateResult: store.GateFail, GateReason: "tests failed:\n--- FAIL: TestRotate", CreatedAt: at(-2 * time.Hour), UpdatedAt: at(-2 * time.Hour)},
		{WorkOrderID: "wo-o-done-1-1", ObjectiveID: "o-done-1", GateResult: store.GateFail, GateReason: "empty patch", CreatedAt: at(-4 * time.Hour), UpdatedAt: at(-4 * time.Hour)},
		{WorkOrderID: "wo-o-done-1-2", ObjectiveID: "o-done-1", GateResult: store.GatePass, GateReason: "ok", CreatedAt: at(-3 * time.Hour), UpdatedAt: at(-3 * time.Hour)},
		{WorkOrderID: "wo-old-1", ObjectiveID: "o-done-old", GateResult: store.GateFail, GateReason: "before the last manifest", CreatedAt: at(-40 * time.Hour), UpdatedAt: at(-40 * time.Hour)},
	}
	in := manifest.Input{Format: manifest.InputFormat, Scope: "ticket", Now: now, LastManifestAt: &last}
	add := func(q manifest.QueryResult, err error) {
		t.Helper()
		require.NoError(t, err)
		in.Queries = append(in.Queries, q)
	}
	add(manifest.Rows(manifest.QueryObjectivesByStatus, 1, map[string]string{"statuses": "NEW,TODO,IN_PROGRESS,DONE,BLOCKED"}, byStatus))
	add(manifest.Rows(manifest.QueryBlockedObjectives, 1, nil, []store.Objective{blockedA, blockedB}))
	add(manifest.Rows(manifest.QueryOverdueObjectives, 1, map[string]string{"now": now.Format(time.RFC3339)}, overdue))
	add(manifest.Rows(manifest.QueryHumanPauseStates, 1, nil, pauses))
	add(manifest.Rows(manifest.QueryRecentRunRecords, 1, map[string]string{"limit": "100"}, runs))
	return in
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
		WorkOrder: store.WorkOrder{WorkOrderID: "wo-manifest-1", DiazotrophType: manifest.Type},
		Snapshot:  store.ContextSnapshot{ContextSnapshotID: "ctx-m-1", ObjectiveID: "manifest-default", FullPromptText: prompt},
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
	require.Equal(t, store.RunnerOK, res.RunnerStatus)
	require.Equal(t, "Manifest as of 2026-11-23T12:00:00Z: 6 top action(s)", res.Title)
	golden(t, "manifest.golden.md", res.Content)
	require.Equal(t, res.Content, textsafe.Block(res.Content), "nothing a terminal would obey")
	require.True(t, strings.HasPrefix(res.Notes, "action: Finish or re-plan o-late-crit"), res.Notes)

	// The same snapshot, decoded afresh, gives the same bundle.
	again, err := manifest.Diazotroph{}.Execute(t.Context(), request(prompt))
	require.NoError(t, err)
	require.Equal(t, res, again)
}

// One action per objective, by urgency, then kind (overdue, gate failure,
// blocked, waiting for a human), then age; a gate failure of an objective
// DONE since is no action.
func TestManifest_TopActionsRankByUrgencyThenKindOnePerObjective(t *testing.T) {
	t.Parallel()
	rep, err := manifest.Build(input(t))
	require.NoError(t, err)
	require.Equal(t, []string{
		"Finish or re-plan o-late-crit (Renew the TLS certificate): overdue by 1h 30m",
		"Unblock o-blocked-a (Migrate the *billing* DB): waiting on DBA approval",
		"o-done-2: Review PR on azolla/o-done-2",
		"Finish or re-plan o-doing-1 (Write the manifest): overdue by 1d 2h 30m",
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
	require.Len(t, rep.Notes, 5)
	require.Contains(t, rep.Notes, "query overdue_objectives is missing: its sections are incomplete")
}

func TestManifest_ExecuteRefusesASnapshotWithoutManifestInput(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"plain prompt":        "write a manifest",
		"other format":        `{"format":"azolla.triage_input/v1","now":"2026-11-23T12:00:00Z","queries":[]}`,
		"no now":              `{"format":"azolla.manifest_input/v1","queries":[]}`,
		"unknown field":       `{"format":"azolla.manifest_input/v1","now":"2026-11-23T12:00:00Z","queries":[],"colour":1}`,
		"query twice":         `{"format":"azolla.manifest_input/v1","now":"2026-11-23T12:00:00Z","queries":[{"name":"a","version":1,"parameters":{},"rows":[]},{"name":"a","version":1,"parameters":{},"rows":[]}]}`,
		"row of the wrong":    `{"format":"azolla.manifest_input/v1","now":"2026-11-23T12:00:00Z","queries":[{"name":"recent_run_records","version":1,"parameters":{},"rows":[{"created_at":"yesterday"}]}]}`,
		"overdue no deadline": `{"format":"azolla.manifest_input/v1","now":"2026-11-23T12:00:00Z","queries":[{"name":"overdue_objectives","version":1,"parameters":{},"rows":[{"objective_id":"o1"}]}]}`,
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
