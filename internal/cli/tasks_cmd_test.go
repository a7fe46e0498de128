package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/deadline"
	"github.com/azolla/azolla/internal/lifecycle/inbox"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlite"
	"github.com/azolla/azolla/internal/store/storetest"
)

// newObjective writes a NEW objective of urgency created at, changed by
// each of with.
func newObjective(t *testing.T, s store.Store, id, urgency string, at time.Time, with ...func(*domain.Objective)) *domain.Objective {
	t.Helper()
	o := storetest.Objective(id)
	o.Urgency, o.CreatedAt, o.UpdatedAt = urgency, at, at
	for _, f := range with {
		f(o)
	}
	require.NoError(t, s.CreateObjective(context.Background(), o))
	return o
}

// moveTo transitions objective id to status and returns it.
func moveTo(t *testing.T, s store.Store, id string, status domain.Status) *domain.Objective {
	t.Helper()
	o, err := s.TransitionObjective(context.Background(), store.TransitionObjectiveParams{ObjectiveID: id, To: status,
		Now: storetest.T0})
	require.NoError(t, err)
	return o
}

func createPause(t *testing.T, s store.Store, ps domain.PauseState) {
	t.Helper()
	require.NoError(t, s.CreatePauseState(context.Background(), &ps))
}

// overduePause writes the deadline monitor's OVERDUE pause of id for
// deadlineAt.
func overduePause(t *testing.T, s store.Store, id string, deadlineAt time.Time) {
	t.Helper()
	createPause(t, s, pause.Overdue(deadline.PauseID(id, deadlineAt), id, "Fix "+id, deadlineAt, storetest.T0))
}

// trackWorkOrder writes an executed track workorder of diazotrophType,
// created at, with an output bundle of content.
func trackWorkOrder(t *testing.T, s store.Store, id, diazotrophType, content string, at time.Time) *domain.WorkOrder {
	t.Helper()
	ctx := context.Background()
	wo := storetest.TrackScheduled(t, s, "default", id, at)
	wo.DiazotrophType = diazotrophType
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	_, _, err = s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: id, Title: "Manifest", Content: content,
		RunnerStatus: domain.RunnerOK, CreatedAt: at})
	require.NoError(t, err)
	_, _, err = s.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: id, Now: at})
	require.NoError(t, err)
	return wo
}

// triageProposed writes a triage workorder that took capture capID and
// processed it into objectives, and its PROPOSALS_REVIEW pause.
func triageProposed(t *testing.T, s store.Store, woID, capID string, at time.Time, proposed ...pause.Proposed) {
	t.Helper()
	ctx := context.Background()
	trackWorkOrder(t, s, woID, "TRIAGE_DIAZOTROPH", "proposals", at)
	require.NoError(t, s.CreateCaptureBuffer(ctx, storetest.Capture(capID, at)))
	require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: woID, CaptureBufferIDs: []string{capID}, Now: at}))
	var ids []string
	for _, p := range proposed {
		ids = append(ids, p.ObjectiveID)
	}
	_, err := s.ProcessCapture(ctx, store.ProcessCaptureParams{CaptureBufferID: capID, WorkOrderID: woID, ObjectiveIDs: ids, Now: at})
	require.NoError(t, err)
	createPause(t, s, pause.ProposalsReview(woID, proposed, at))
}

// seedInbox writes one of everything the inbox lists or must leave out.
func seedInbox(t *testing.T, s store.Store) {
	t.Helper()
	at := storetest.T0
	// Approvals: by urgency, then age.
	newObjective(t, s, "appr-low", "LOW", at.Add(-time.Hour))
	newObjective(t, s, "appr-normal-old", "NORMAL", at)
	newObjective(t, s, "appr-normal-young", "NORMAL", at.Add(time.Hour))
	newObjective(t, s, "appr-high", "HIGH", at.Add(2*time.Hour))
	rejected := newObjective(t, s, "rejected", "CRITICAL", at)
	createPause(t, s, pause.Rejected("rejected", rejected.StatusSeq, "ana", "not ours", at))
	// An OVERDUE pause of a rejected objective (written before it was
	// rejected, or by hand) is not listed: it waits for nothing.
	overduePause(t, s, "rejected", deadline.Deadline(rejected, nil))

	newObjective(t, s, "blocked", "NORMAL", at)
	blocked := moveTo(t, s, "blocked", domain.StatusBlocked)
	createPause(t, s, pause.Blocked("blocked", blocked.StatusSeq, []string{"waiting on legal"}, at))

	wo := executed(t, s, "gate-failed", domain.OutputBundle{Title: "Fix", Content: "diff --git a/x b/x\n", RunnerStatus: domain.RunnerOK})
	failed := moveTo(t, s, "gate-failed", domain.StatusTodo)
	createPause(t, s, pause.GateFailed("gate-failed", failed.StatusSeq, wo.WorkOrderID, "go test failed", nil, nil, at))

	// Overdue: an open objective whose OVERDUE pause names its current
	// deadline; a NEW one carries its approval along.
	due := at.Add(-time.Hour)
	moved := at.Add(10 * time.Hour)
	for id, o := range map[string]struct {
		urgency string
		due     time.Time
	}{"overdue": {"NORMAL", due}, "overdue-new": {"HIGH", due}, "moved": {"NORMAL", moved}} {
		newObjective(t, s, id, o.urgency, at, func(ob *domain.Objective) { ob.DueAt = &o.due })
		overduePause(t, s, id, due)
	}
	moveTo(t, s, "overdue", domain.StatusTodo)
	moveTo(t, s, "moved", domain.StatusTodo)
	passedObjective(t, s, "done")
	overduePause(t, s, "done", deadline.Deadline(getObjective(t, s, "done"), nil))

	// Triage: a review waits while a proposal is NEW.
	newObjective(t, s, "prop-new", "NORMAL", at.Add(3*time.Hour))
	triageProposed(t, s, "wo-triage-1", "cap-1", at.Add(time.Hour), pause.Proposed{ObjectiveID: "prop-new", Title: "Call the bank"})
	newObjective(t, s, "prop-approved", "NORMAL", at.Add(3*time.Hour))
	moveTo(t, s, "prop-approved", domain.StatusTodo)
	triageProposed(t, s, "wo-triage-2", "cap-2", at.Add(2*time.Hour), pause.Proposed{ObjectiveID: "prop-approved", Title: "Pay"})

	// Manifests: only the latest waits.
	for i, id := range []string{"wo-manifest-1", "wo-manifest-2"} {
		ma := at.Add(time.Duration(i+1) * time.Hour)
		trackWorkOrder(t, s, id, "MANIFEST_DIAZOTROPH", "# Manifest "+id+"\n", ma)
		createPause(t, s, pause.ManifestReady(id, []string{"Close " + id}, ma))
	}
}

func getObjective(t *testing.T, s store.Store, id string) *domain.Objective {
	t.Helper()
	o, err := s.GetObjective(context.Background(), id)
	require.NoError(t, err)
	return o
}

func inboxJSON(t *testing.T, env map[string]string) []inbox.Item {
	t.Helper()
	res := azolla(t, env, "inbox", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var items []inbox.Item
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &items), res.stdout)
	return items
}

func TestInbox_ListsWhatWaitsMostUrgentFirstWithTheCommandOfEachAction(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	seedInbox(t, s)

	items := inboxJSON(t, env)
	type row struct{ kind, subject string }
	var got []row
	for _, it := range items {
		got = append(got, row{it.Kind, it.SubjectID})
	}
	require.Equal(t, []row{
		{"OVERDUE", "overdue-new"}, {"OVERDUE", "overdue"},
		{"BLOCKED", "blocked"},
		{"GATE_FAILED", "gate-failed"},
		{"APPROVAL", "appr-high"}, {"APPROVAL", "appr-normal-old"}, {"APPROVAL", "appr-normal-young"},
		{"APPROVAL", "prop-new"}, {"APPROVAL", "appr-low"},
		{"PROPOSALS", "wo-triage-1"},
		{"MANIFEST", "wo-manifest-2"},
	}, got)

	commands := func(it inbox.Item) []string {
		var out []string
		for _, a := range it.Actions {
			out = append(out, a.Command)
		}
		return out
	}
	byID := map[string]inbox.Item{}
	for _, it := range items {
		byID[it.SubjectID] = it
	}
	require.Equal(t, []string{"azolla objective show overdue-new", "", "azolla objective approve overdue-new",
		"azolla objective reject overdue-new"}, commands(byID["overdue-new"]), "an overdue NEW objective carries its approval")
	require.Equal(t, []string{"azolla objective show overdue", ""}, commands(byID["overdue"]))
	require.NotNil(t, byID["overdue"].DeadlineAt)
	require.Equal(t, storetest.T0.Add(-time.Hour), byID["overdue"].DeadlineAt.UTC())
	require.Equal(t, []string{"", "azolla objective unblock blocked"}, commands(byID["blocked"]))
	require.Equal(t, []string{"azolla objective show gate-failed", `azolla objective retry gate-failed --comment "what to do differently"`},
		commands(byID["gate-failed"]))
	require.Equal(t, []string{"azolla objective approve appr-high", "azolla objective reject appr-high"}, commands(byID["appr-high"]))
	require.Equal(t, []string{"azolla objective list --status NEW", "azolla objective approve prop-new"}, commands(byID["wo-triage-1"]))
	require.Equal(t, "TRIAGE", byID["wo-triage-1"].SubjectType)
	require.Equal(t, "Review 1 proposed objectives", byID["wo-triage-1"].Title)
	require.Equal(t, []string{"azolla manifest show wo-manifest-2", ""}, commands(byID["wo-manifest-2"]))
	require.Equal(t, "MANIFEST", byID["wo-manifest-2"].SubjectType)

	res := azolla(t, env, "inbox")
	require.Equal(t, 0, res.code, res.stderr)
	out := res.stdout
	require.True(t, strings.HasPrefix(out, "1. [OVERDUE HIGH] objective overdue-new: Fix overdue-new\n"+
		"   deadline 2026-11-21T11:00:00Z\n"+
		"   - Review overdue overdue-new (Fix overdue-new): its deadline 2026-11-21T11:00:00Z has passed\n"+
		"       azolla objective show overdue-new\n"+
		"   - Finish it, or set a new due date\n"+
		"   - approve it\n"+
		"       azolla objective approve overdue-new\n"), out)
	require.Contains(t, out, "\n11. [MANIFEST] manifest wo-manifest-2: Review the manifest: azolla manifest show wo-manifest-2\n"+
		"   - Review the manifest: azolla manifest show wo-manifest-2\n"+
		"       azolla manifest show wo-manifest-2\n"+
		"   - Close wo-manifest-2\n")
	for _, absent := range []string{"rejected", "moved", " done", "prop-approved", "wo-triage-2", "wo-manifest-1"} {
		require.NotContains(t, out, absent)
	}
}

func TestInbox_EmptySaysSo(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	res := azolla(t, env, "inbox")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "inbox is empty: nothing waits for you\n", res.stdout)
	res = azolla(t, env, "inbox", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.JSONEq(t, `[]`, res.stdout)
	res = azolla(t, env, "inbox", "--output", "yaml")
	require.Equal(t, exitUsage, res.code)
}

// A title written past the schema reaches the inbox escaped.
func TestInbox_RendersATitleWrittenPastTheSchema(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	newObjective(t, s, "obj-1", "NORMAL", storetest.T0)
	rawSQL(t, env, "UPDATE objectives SET title = ? WHERE objective_id = 'obj-1'", "x"+hostile+"\nsecond line")
	newObjective(t, s, "obj-2", "NORMAL", storetest.T0.Add(time.Hour))
	rawSQL(t, env, "UPDATE objectives SET urgency = ? WHERE objective_id = 'obj-2'", "SOON"+hostile)

	res := azolla(t, env, "inbox")
	require.Equal(t, 0, res.code, res.stderr)
	requireNoRawControls(t, res.stdout)
	require.Contains(t, res.stdout, "1. [APPROVAL NORMAL] objective obj-1: x"+escapedHostile+`\x0asecond line`+"\n")
	require.Contains(t, res.stdout, "2. [APPROVAL SOON"+escapedHostile+"] objective obj-2: Fix obj-2\n",
		"an unknown urgency ranks last, shown escaped")

	res = azolla(t, env, "inbox", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	requireNoRawControls(t, res.stdout)
	items := inboxJSON(t, env)
	require.Len(t, items, 2)
	require.Equal(t, "x"+hostile+"\nsecond line", items[0].Title, "JSON carries it as stored")
}

// openData opens the store of env's data dir.
func openData(t *testing.T, env map[string]string) store.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(env["AZOLLA_DATA_DIR"], "azolla.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestManifestRequest_StoresTheEventAndWarnsWhileTemporalIsDown(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	res := azolla(t, env, "manifest", "request", "--scope", "objectives due this week")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `^\S+\n$`, res.stdout, "the event id alone on stdout")
	require.Contains(t, res.stderr, "azolla: warning: connect to Temporal at "+env["AZOLLA_TEMPORAL_ADDRESS"])
	require.Contains(t, res.stderr, "the track gets it when a worker's poller reaches Temporal")
	require.Equal(t, 1, countLines(res.stderr), res.stderr)

	evs, err := openData(t, env).ListEvents(t.Context(), store.ListEventsParams{EventType: domain.EventManifestRequested})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, strings.TrimSpace(res.stdout), evs[0].EventID)
	require.Equal(t, "objectives due this week", evs[0].Scope)
	require.False(t, evs[0].Processed)

	res = azolla(t, env, "manifest", "request")
	require.Equal(t, 0, res.code, res.stderr)
	evs, err = openData(t, env).ListEvents(t.Context(), store.ListEventsParams{EventType: domain.EventManifestRequested})
	require.NoError(t, err)
	require.Len(t, evs, 2, "each request is an event of its own")
}

func TestManifestRequest_BadScopeIsAUsageErrorAndWritesNothing(t *testing.T) {
	t.Parallel()
	for name, scope := range map[string]string{
		"newline": "this week\nand next", "escape": "x\x1b[2J", "too long": strings.Repeat("s", maxScopeBytes+1),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := offlineEnv(t)
			res := azolla(t, env, "manifest", "request", "--scope", scope)
			require.Equal(t, exitUsage, res.code, res.stderr)
			require.Contains(t, res.stderr, "--scope must be one line of at most 200 bytes")
			require.Empty(t, res.stdout)
			require.NoFileExists(t, filepath.Join(env["AZOLLA_DATA_DIR"], "azolla.db"), "refused before the store is opened")
		})
	}
	res := azolla(t, offlineEnv(t), "manifest", "request", "--scope", strings.Repeat("s", maxScopeBytes))
	require.Equal(t, 0, res.code, "200 bytes is allowed: %s", res.stderr)
}

func TestManifestShow_NoneYetIsNotFoundWithTheHint(t *testing.T) {
	t.Parallel()
	res := azolla(t, offlineEnv(t), "manifest", "show")
	require.Equal(t, exitNotFound, res.code, res.stderr)
	require.Equal(t, "azolla: no manifest yet: request one with azolla manifest request\n", res.stderr)
}

func TestManifestShow_ShowsTheLatestManifestOrTheOneAsked(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	at := storetest.T0
	trackWorkOrder(t, s, "wo-manifest-1", "MANIFEST_DIAZOTROPH", "# Manifest one\n\nDone: 3\n", at)
	trackWorkOrder(t, s, "wo-manifest-2", "MANIFEST_DIAZOTROPH", "# Manifest two\n\nDone: 4\n"+hostile+"\n", at.Add(time.Hour))
	_, err := s.UpsertRunRecord(t.Context(), &domain.RunRecord{WorkOrderID: "wo-manifest-2", Track: "default",
		GateResult: domain.GatePass, GateReason: "ok", CreatedAt: at, UpdatedAt: at})
	require.NoError(t, err)
	passedObjective(t, s, "obj-1")

	res := azolla(t, env, "manifest", "show")
	require.Equal(t, 0, res.code, res.stderr)
	requireNoRawControls(t, res.stdout)
	require.Equal(t, "manifest wo-manifest-2 (2026-11-21T13:00:00Z), gate PASS\n\n# Manifest two\n\nDone: 4\n"+escapedHostile+"\n",
		res.stdout)

	res = azolla(t, env, "manifest", "show", "wo-manifest-1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "manifest wo-manifest-1 (2026-11-21T12:00:00Z)\n\n# Manifest one\n\nDone: 3\n", res.stdout)

	res = azolla(t, env, "manifest", "show", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var got struct {
		WorkOrder domain.WorkOrder    `json:"workorder"`
		Bundle    domain.OutputBundle `json:"output_bundle"`
		RunRecord *domain.RunRecord   `json:"run_record"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
	require.Equal(t, "wo-manifest-2", got.WorkOrder.WorkOrderID)
	require.Equal(t, "# Manifest two\n\nDone: 4\n"+hostile+"\n", got.Bundle.Content)
	require.NotNil(t, got.RunRecord)
	require.Equal(t, domain.GatePass, got.RunRecord.GateResult)

	res = azolla(t, env, "manifest", "show", "wo-obj-1")
	require.Equal(t, exitUsage, res.code, res.stderr)
	require.Equal(t, "azolla: workorder wo-obj-1 is a PATCH_DIAZOTROPH run, not a manifest\n", res.stderr)
	res = azolla(t, env, "manifest", "show", "wo-nope")
	require.Equal(t, exitNotFound, res.code, res.stderr)
}

func TestTrackShow_WhileTemporalIsDownShowsTheStore(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	ctx := t.Context()
	require.NoError(t, s.CreateCaptureBuffer(ctx, storetest.Capture("cap-1", storetest.T0)))
	_, _, err := store.EmitCaptureReady(ctx, s, "cap-1", storetest.T0)
	require.NoError(t, err)
	_, err = store.RequestManifest(ctx, s, "", storetest.T0)
	require.NoError(t, err)
	trackWorkOrder(t, s, "wo-manifest-1", "MANIFEST_DIAZOTROPH", "# M\n", storetest.T0)
	passedObjective(t, s, "obj-1")

	res := azolla(t, env, "track", "show")
	require.Equal(t, 0, res.code, res.stderr)
	out := res.stdout
	require.Contains(t, out, "track default (workflow track-default)\n")
	require.Contains(t, out, "  state unknown: connect to Temporal at "+env["AZOLLA_TEMPORAL_ADDRESS"])
	// Two events wait: the capture's and the request's; the workorder's
	// own manifest request was written unprocessed by TrackScheduled too.
	require.Contains(t, out, "  unprocessed events in the store: 3\n")
	require.Contains(t, out, "recent workorders:\n  wo-manifest-1 ")
	require.NotContains(t, out, "wo-obj-1", "only the track's workorders")

	res = azolla(t, env, "track", "show", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var v struct {
		Track      string             `json:"track"`
		State      *json.RawMessage   `json:"state"`
		StateError string             `json:"state_error"`
		Pending    []json.RawMessage  `json:"pending_events"`
		WorkOrders []domain.WorkOrder `json:"recent_workorders"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &v))
	require.Equal(t, "default", v.Track)
	require.Nil(t, v.State)
	require.Contains(t, v.StateError, "connect to Temporal")
	require.Len(t, v.Pending, 3)
	require.Len(t, v.WorkOrders, 1)
	require.Equal(t, "wo-manifest-1", v.WorkOrders[0].WorkOrderID)
}

func TestObjectiveList_OverdueListsOpenObjectivesPastTheirDeadline(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	now := time.Now().UTC().Truncate(time.Second)
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	write := func(id, urgency string, created time.Time, due *time.Time) {
		newObjective(t, s, id, urgency, created, func(o *domain.Objective) { o.DueAt = due })
	}
	write("due-past", "NORMAL", now.Add(-2*time.Hour), &past)
	write("due-future", "CRITICAL", now.Add(-48*time.Hour), &future) // due_at wins over the SLA
	write("low-old", "LOW", now.Add(-200*time.Hour), nil)            // past 168h
	write("low-young", "LOW", now.Add(-100*time.Hour), nil)
	write("done-past", "NORMAL", now.Add(-2*time.Hour), &past)
	moveTo(t, s, "done-past", domain.StatusDone)
	write("in-progress-old", "HIGH", now.Add(-30*time.Hour), nil) // past 24h
	moveTo(t, s, "in-progress-old", domain.StatusInProgress)
	rejected := newObjective(t, s, "rejected-old", "NORMAL", now.Add(-200*time.Hour))
	createPause(t, s, pause.Rejected("rejected-old", rejected.StatusSeq, "", "", now.Add(-199*time.Hour)))
	overduePause(t, s, "rejected-old", deadline.Deadline(rejected, nil))

	ids := func(env map[string]string, args ...string) []string {
		res := azolla(t, env, append([]string{"objective", "list", "--overdue", "--output", "json"}, args...)...)
		require.Equal(t, 0, res.code, res.stderr)
		var list []domain.Objective
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &list))
		out := []string{}
		for _, o := range list {
			out = append(out, o.ObjectiveID)
		}
		return out
	}
	require.ElementsMatch(t, []string{"due-past", "low-old", "in-progress-old"}, ids(env))
	require.ElementsMatch(t, []string{"due-past", "low-old"}, ids(env, "--status", "NEW"), "--status narrows it")

	longer := map[string]string{"AZOLLA_DEADLINES_SLA_LOW": "300h"}
	shorter := map[string]string{"AZOLLA_DEADLINES_SLA_LOW": "90h"}
	for k, v := range env {
		longer[k], shorter[k] = v, v
	}
	require.ElementsMatch(t, []string{"due-past", "in-progress-old"}, ids(longer))
	require.ElementsMatch(t, []string{"due-past", "low-old", "low-young", "in-progress-old"}, ids(shorter))

	res := azolla(t, env, "objective", "list", "--overdue")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, 4, countLines(res.stdout), "the header and three objectives:\n%s", res.stdout)
}

func TestSchedulesApply_TemporalDownIsExit5(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	res := azolla(t, env, "schedules", "apply")
	require.Equal(t, exitUnavailable, res.code, res.stderr)
	require.Equal(t, 1, countLines(res.stderr), res.stderr)
	require.Contains(t, res.stderr, "azolla: connect to Temporal at "+env["AZOLLA_TEMPORAL_ADDRESS"])
	require.Empty(t, res.stdout)
}

func TestCaptureAdd_StoresAndWarnsWhileTemporalIsDown(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	res := azolla(t, env, "capture", "add", "Call the bank")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `^`+captureIDPattern+`\n$`, res.stdout)
	require.Equal(t, 1, countLines(res.stderr), res.stderr)
	require.Contains(t, res.stderr, "azolla: warning: connect to Temporal at "+env["AZOLLA_TEMPORAL_ADDRESS"])
	require.Contains(t, res.stderr, "poller")
	list := listCaptures(t, env)
	require.Len(t, list, 1)
	require.Equal(t, "Call the bank", list[0].Content)
	require.Equal(t, map[string]int{list[0].CaptureBufferID: 1}, captureEvents(t, env))
}

// A triage or manifest pause without actions (written past the schema) is
// still listed, titled by its reason.
func TestInbox_SubjectPauseWithoutActions(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	trackWorkOrder(t, s, "wo-manifest-1", "MANIFEST_DIAZOTROPH", "# M\n", storetest.T0)
	createPause(t, s, pause.ManifestReady("wo-manifest-1", nil, storetest.T0))
	rawSQL(t, env, "UPDATE pause_states SET prioritized_actions = '[]', action_kinds = '[]'")

	res := azolla(t, env, "inbox")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "1. [MANIFEST] manifest wo-manifest-1: MANIFEST_READY\n", res.stdout)
}

func TestTrackShow_EmptyStoreListsNothing(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	res := azolla(t, env, "track", "show", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &v))
	require.Equal(t, []any{}, v["pending_events"])
	require.Equal(t, []any{}, v["recent_workorders"], "an empty list, not null")

	res = azolla(t, env, "track", "show")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "  unprocessed events in the store: 0\n")
	require.NotContains(t, res.stdout, "recent workorders")
}
