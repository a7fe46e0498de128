package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// hostile holds what a terminal would obey: an OSC that retitles the
// window (ended by BEL), CSI colour sequences, NUL and a right-to-left
// override. escapedHostile is how textsafe shows it.
const (
	hostile        = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m nul\x00 rlo\u202e"
	escapedHostile = `\x1b]0;pwned\x07\x1b[31mred\x1b[0m nul\x00 rlo\u202e`
)

// requireNoRawControls fails if out holds a byte a terminal would act on:
// anything but newline and tab below 0x20, DEL, a C1 control or a bidi
// control.
func requireNoRawControls(t *testing.T, out string) {
	t.Helper()
	for i, r := range out {
		bad := (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) ||
			r == '\u061c' || r == '\u200e' || r == '\u200f' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
		require.False(t, bad, "raw %U at byte %d of:\n%s", r, i, out)
	}
}

// offline points env at a Temporal address nobody listens on, so show and
// list read the store and never a real server that happens to run here.
func offline(t *testing.T, env map[string]string) map[string]string {
	t.Helper()
	env["AZOLLA_TEMPORAL_ADDRESS"] = offlineEnv(t)["AZOLLA_TEMPORAL_ADDRESS"]
	return env
}

// failedWithHostileOutput writes objective id through a run whose
// multi-line content (the diff, the notes, the gate's reason) holds hostile
// text: fields that are legitimately multi-line and never refused.
func failedWithHostileOutput(t *testing.T, s store.Store, id string) {
	t.Helper()
	ctx, at := context.Background(), executedAt
	wo := executed(t, s, id, domain.OutputBundle{Title: "Patch for " + id,
		Content: "diff --git a/x b/x\n+\tfmt.Println(\"" + hostile + "\")\n", Notes: "generator said:\n" + hostile,
		RunnerStatus: domain.RunnerOK})
	reason := "gate command exited 1: " + hostile + "\n--- FAIL: " + hostile
	_, err := s.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: id,
		GateResult: domain.GateFail, GateReason: reason, CreatedAt: at, UpdatedAt: at})
	require.NoError(t, err)
	moved, err := s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: id, To: domain.StatusTodo, Now: at})
	require.NoError(t, err)
	ps := pause.GateFailed(id, moved.StatusSeq, wo.WorkOrderID, reason, nil, nil, at)
	require.NoError(t, s.CreatePauseState(ctx, &ps))
}

// rawSQL runs a statement on the store's database file directly, as an
// operator or another program could: past the schema validation of every
// store write.
func rawSQL(t *testing.T, env map[string]string, query string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(env["AZOLLA_DATA_DIR"], "azolla.db"))
	require.NoError(t, err)
	defer db.Close()
	res, err := db.ExecContext(t.Context(), query, args...)
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "%s", query)
}

func TestObjectiveShow_RendersHostileStoredTextVisibly(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	failedWithHostileOutput(t, s, "obj-1")

	res := azolla(t, env, "objective", "show", "obj-1")
	require.Equal(t, 0, res.code, res.stderr)
	requireNoRawControls(t, res.stdout)
	requireNoRawControls(t, res.stderr)
	out := res.stdout
	require.Contains(t, out, "  notes     generator said:\n            "+escapedHostile+"\n", "notes keep their lines")
	require.Contains(t, out, "  gate      FAIL  gate command exited 1: "+escapedHostile+"\n            --- FAIL: "+escapedHostile)
	require.Contains(t, out, "content of wo-obj-1:\n  diff --git a/x b/x\n  +\tfmt.Println(\""+escapedHostile+"\")\n",
		"the diff keeps its lines and tabs")
	require.Contains(t, out, "  1. Review gate failure reason: gate command exited 1: "+escapedHostile+"\n")

	// --output json carries the text as it is, for programs; encoding/json
	// escapes the C0 controls (ESC, BEL, NUL) on the way.
	res = azolla(t, env, "objective", "show", "obj-1", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stdout, "\x1b")
	require.NotContains(t, res.stdout, "\x00")
	var d objectiveDetail
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &d))
	require.Equal(t, "generator said:\n"+hostile, d.WorkOrders[0].OutputBundle.Notes)
}

// Rows written straight into the database skip the schema; show and list
// still print their single-line fields on one safe line.
func TestObjectiveListAndShow_RenderATitleWrittenPastTheSchema(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	require.NoError(t, s.CreateObjective(context.Background(), storetest.Objective("obj-1")))
	rawSQL(t, env, "UPDATE objectives SET title = ?, acceptance_criteria = ?, blockers = ? WHERE objective_id = 'obj-1'",
		"x"+hostile+"\nsecond line", `["a\u202ecriterion\ttab"]`, `["blocked\r\u001b[2Jnow"]`)

	res := azolla(t, env, "objective", "list")
	require.Equal(t, 0, res.code, res.stderr)
	requireNoRawControls(t, res.stdout)
	require.Contains(t, res.stdout, "x"+escapedHostile+`\x0asecond line`+"\n")
	require.Equal(t, 2, countLines(res.stdout), "one line per objective after the header:\n%s", res.stdout)

	res = azolla(t, env, "objective", "show", "obj-1")
	require.Equal(t, 0, res.code, res.stderr)
	requireNoRawControls(t, res.stdout)
	require.Contains(t, res.stdout, "title       x"+escapedHostile+`\x0asecond line`+"\n")
	require.Contains(t, res.stdout, `criterion   a\u202ecriterion\x09tab`+"\n")
	require.Contains(t, res.stdout, `blocker     blocked\x0d\x1b[2Jnow`+"\n")
}

// verify quotes the rows it finds wrong; a row with hostile ids is reported
// with them escaped.
func TestVerify_RendersAHostileClaimRowVisibly(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	_, ok, err := s.AcquireClaim(t.Context(), store.AcquireClaimParams{ResourceType: domain.ResourceEvent,
		ResourceID: "ev-1", OwnerID: "w1", TTL: time.Hour})
	require.NoError(t, err)
	require.True(t, ok)
	rawSQL(t, env, "UPDATE claims SET resource_id = ?, owner_id = ? WHERE resource_id = 'ev-1'",
		"ev-1"+hostile, "w1\u202e")

	res := verify(t, env)
	require.Equal(t, 1, res.code, res.stderr)
	requireNoRawControls(t, res.stdout)
	require.Contains(t, res.stdout, "claim-schema  claim EVENT ev-1"+escapedHostile+"  ")
	require.Contains(t, res.stdout, "/owner_id: must be one line without control characters: control character U+202E at byte 2")
}

// Errors quote what they are about, here a path (os.PathError does not
// quote it): the error line shows its controls escaped.
func TestRun_ErrorsAreOneSafeLine(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	path := filepath.Join(t.TempDir(), "x\x1b]0;pwned\x07.json")
	res := azolla(t, env, "objective", "create", "--file", path)
	require.Equal(t, exitUsage, res.code, res.stderr)
	require.Equal(t, "azolla: open "+filepath.Dir(path)+`/x\x1b]0;pwned\x07.json: no such file or directory`+"\n", res.stderr,
		"an unreadable file is the input's fault: no usage text")
}
