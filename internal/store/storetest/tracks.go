package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// TrackScheduled writes a MANIFEST_REQUESTED event and a track snapshot and
// returns a CREATED track workorder for them: no objective, no branch.
func TrackScheduled(t testing.TB, q store.Querier, track, id string, at time.Time) *domain.WorkOrder {
	t.Helper()
	ctx := context.Background()
	ev := Event("ev-"+id, "manifest-"+id, 0, at)
	ev.EventType, ev.Scope = domain.EventManifestRequested, "objectives due this week"
	_, _, err := q.EmitEvent(ctx, ev)
	require.NoError(t, err)
	rows := 0
	snap := &domain.ContextSnapshot{ContextSnapshotID: "cs-" + id, Track: track, FullPromptText: "Write the manifest",
		Metadata: domain.SnapshotMetadata{}, CreatedAt: at,
		RelatedYieldRefs: []domain.YieldRef{
			{Kind: domain.YieldCapture, Ref: "cap-1"},
			{Kind: domain.YieldSubstrateQuery, Ref: "open_objectives", Version: 2, Substrate: "azolla-store",
				Parameters: map[string]string{"status": "TODO"}, RowCount: &rows,
				ContentHash: "sha256:" + strings.Repeat("ab", 32)},
		}}
	require.NoError(t, q.CreateContextSnapshot(ctx, snap))
	return &domain.WorkOrder{WorkOrderID: id, EventID: ev.EventID, Track: track, DiazotrophType: "MANIFEST_DIAZOTROPH",
		ContextSnapshotID: snap.ContextSnapshotID, BudgetMS: 60000, Status: domain.WorkOrderCreated, CreatedAt: at}
}

// exerciseTracks: the records of task-management tracks. A track's
// snapshot, workorder and run record have no objective and come back as
// written; pause states name a subject or a passed deadline, are written
// once per id and paged by filter; events carry a scope and a hand-over
// mark; objectives page by statuses.
func exerciseTracks(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("Track_RecordsWithoutObjectiveRoundTrip", func(t *testing.T) { testTrackRoundTrip(t, open(t)) })
	t.Run("Track_WorkOrdersFilteredByTrackAndType", func(t *testing.T) { testTrackWorkOrderFilters(t, open(t)) })
	t.Run("Track_InvalidRecordsRefusedAndNothingWritten", func(t *testing.T) { testTrackInvalid(t, open(t)) })
	t.Run("PauseState_SubjectsAndDeadlinesRoundTrip", func(t *testing.T) { testSubjectPauses(t, open(t)) })
	t.Run("PauseState_CreateOnceStoresOneRow", func(t *testing.T) { testPauseOnce(t, open(t)) })
	t.Run("PauseState_PagesByReasonAndSubject", func(t *testing.T) { testPausePages(t, open(t)) })
	t.Run("Event_HandedOverOnceAndSeenPending", func(t *testing.T) { testEventHandOver(t, open(t)) })
	t.Run("Objective_PagesByStatuses", func(t *testing.T) { testObjectivesPage(t, open(t)) })
	t.Run("Objective_PagesPastTheirDeadline", func(t *testing.T) { testObjectivesPastDeadline(t, open(t)) })
	t.Run("Migrate_RecordsBeforeTracksReadable", func(t *testing.T) { testRecordsBeforeTracksReadable(t, open(t)) })
}

func testTrackRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	w := TrackScheduled(t, s, "inbox", "wo-manifest-1", T0)
	stored, created, err := s.CreateWorkOrder(ctx, w)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, w, stored)
	got, err := s.GetWorkOrder(ctx, w.WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, w, got, "a track workorder comes back without objective and branch")
	require.Empty(t, got.ObjectiveID)
	require.Empty(t, got.BranchName)

	ev, err := s.GetEvent(ctx, w.EventID)
	require.NoError(t, err)
	require.Equal(t, "objectives due this week", ev.Scope)

	snap, err := s.GetContextSnapshot(ctx, w.ContextSnapshotID)
	require.NoError(t, err)
	require.Equal(t, "inbox", snap.Track)
	require.Empty(t, snap.ObjectiveID)
	require.Len(t, snap.RelatedYieldRefs, 2)
	q := snap.RelatedYieldRefs[1]
	require.Equal(t, 2, q.Version)
	require.Equal(t, map[string]string{"status": "TODO"}, q.Parameters)
	require.NotNil(t, q.RowCount, "a zero row count is kept")
	require.Equal(t, 0, *q.RowCount)

	executed, changed, err := s.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: w.WorkOrderID, Now: T0.Add(time.Minute)})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "inbox", executed.Track)

	rr := &domain.RunRecord{WorkOrderID: w.WorkOrderID, Track: "inbox", GateResult: "PASS", GateReason: "manifest written",
		CreatedAt: T0, UpdatedAt: T0}
	out, err := s.UpsertRunRecord(ctx, rr)
	require.NoError(t, err)
	require.Equal(t, rr, out)
	gotRR, err := s.GetRunRecord(ctx, w.WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, rr, gotRR)

	// An objective's records still carry their objective and no track.
	ow := Scheduled(t, s, "obj-1")
	_, _, err = s.CreateWorkOrder(ctx, ow)
	require.NoError(t, err)
	gotOW, err := s.GetWorkOrder(ctx, ow.WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, ow, gotOW)
	require.Empty(t, gotOW.Track)
}

func testTrackWorkOrderFilters(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i, c := range []struct{ track, id, typ string }{
		{"inbox", "wo-a", "MANIFEST_DIAZOTROPH"}, {"work", "wo-b", "MANIFEST_DIAZOTROPH"}, {"inbox", "wo-c", "TRIAGE_DIAZOTROPH"},
	} {
		w := TrackScheduled(t, s, c.track, c.id, T0.Add(time.Duration(i)*time.Second))
		w.DiazotrophType = c.typ
		_, _, err := s.CreateWorkOrder(ctx, w)
		require.NoError(t, err)
	}
	_, _, err := s.CreateWorkOrder(ctx, Scheduled(t, s, "obj-1"))
	require.NoError(t, err)

	ids := func(p store.ListWorkOrdersParams) []string {
		ws, err := s.ListWorkOrders(ctx, p)
		require.NoError(t, err)
		var out []string
		for _, w := range ws {
			out = append(out, w.WorkOrderID)
		}
		return out
	}
	require.Equal(t, []string{"wo-a", "wo-c"}, ids(store.ListWorkOrdersParams{Track: "inbox"}))
	require.Equal(t, []string{"wo-c"}, ids(store.ListWorkOrdersParams{Track: "inbox", DiazotrophType: "TRIAGE_DIAZOTROPH"}))
	require.Equal(t, []string{"wo-a", "wo-b"}, ids(store.ListWorkOrdersParams{DiazotrophType: "MANIFEST_DIAZOTROPH"}))
	require.Equal(t, []string{"wo-obj-1"}, ids(store.ListWorkOrdersParams{ObjectiveID: "obj-1"}))
	require.Empty(t, ids(store.ListWorkOrdersParams{Track: "nope"}))
	require.Len(t, ids(store.ListWorkOrdersParams{}), 4)
}

func testTrackInvalid(t *testing.T, s store.Store) {
	ctx := context.Background()
	w := TrackScheduled(t, s, "inbox", "wo-1", T0)
	both := *w
	both.ObjectiveID = "obj-1"
	_, _, err := s.CreateWorkOrder(ctx, &both)
	requireViolation(t, err, "/objective_id")
	objectiveType := *w
	objectiveType.DiazotrophType = "PATCH_DIAZOTROPH"
	_, _, err = s.CreateWorkOrder(ctx, &objectiveType)
	requireViolation(t, err, "/diazotroph_type")
	ws, err := s.ListWorkOrders(ctx, store.ListWorkOrdersParams{})
	require.NoError(t, err)
	require.Empty(t, ws, "refused workorders write nothing")

	rr := &domain.RunRecord{WorkOrderID: "wo-1", ObjectiveID: "obj-1", Track: "inbox", GateResult: "PASS", GateReason: "ok"}
	_, err = s.UpsertRunRecord(ctx, rr)
	requireViolation(t, err, "/track")
	_, err = s.GetRunRecord(ctx, "wo-1")
	require.ErrorIs(t, err, domain.ErrNotFound)

	neither := &domain.ContextSnapshot{ContextSnapshotID: "cs-neither", FullPromptText: "x", CreatedAt: T0}
	require.Error(t, s.CreateContextSnapshot(ctx, neither), "a snapshot names an objective or a track")
	_, err = s.GetContextSnapshot(ctx, "cs-neither")
	require.ErrorIs(t, err, domain.ErrNotFound)

	triage := &domain.PauseState{PauseStateID: "ps-1", ObjectiveID: "obj-1", SubjectType: domain.SubjectTriage,
		SubjectID: "wo-1", Reason: domain.PauseProposalsReview, PrioritizedActions: []string{"Review"}, CreatedAt: T0}
	requireViolation(t, s.CreatePauseState(ctx, triage), "/objective_id")
	_, _, err = s.CreatePauseStateOnce(ctx, triage)
	requireViolation(t, err, "/objective_id")
	deadline := T0
	late := &domain.PauseState{PauseStateID: "ps-2", ObjectiveID: "obj-1", Reason: domain.PauseBlocked,
		PrioritizedActions: []string{"Unblock"}, DeadlineAt: &deadline, CreatedAt: T0}
	requireViolation(t, s.CreatePauseState(ctx, late), "/deadline_at")
	ps, err := s.ListPauseStatesPage(ctx, store.ListPauseStatesParams{})
	require.NoError(t, err)
	require.Empty(t, ps, "refused pause states write nothing")
}

// Pause returns a valid pause state of an objective.
func Pause(id, objectiveID, reason string, at time.Time) *domain.PauseState {
	return &domain.PauseState{PauseStateID: id, ObjectiveID: objectiveID, Reason: reason,
		PrioritizedActions: []string{"Review " + objectiveID}, CreatedAt: at}
}

// SubjectPause returns a valid pause state of a triage or manifest run.
func SubjectPause(id, subjectType, workOrderID, reason string, at time.Time) *domain.PauseState {
	return &domain.PauseState{PauseStateID: id, SubjectType: subjectType, SubjectID: workOrderID,
		WorkOrderID: workOrderID, Reason: reason, PrioritizedActions: []string{"Review " + workOrderID}, CreatedAt: at}
}

func testSubjectPauses(t *testing.T, s store.Store) {
	ctx := context.Background()
	deadline := T0.Add(-time.Hour)
	overdue := Pause("ps-overdue", "obj-1", domain.PauseOverdue, T0)
	overdue.DeadlineAt, overdue.ActionKinds = &deadline, []string{"REVIEW_OVERDUE"}
	triage := SubjectPause("ps-triage", domain.SubjectTriage, "wo-triage", domain.PauseProposalsReview, T0)
	manifest := SubjectPause("ps-manifest", domain.SubjectManifest, "wo-manifest", domain.PauseManifestReady, T0)
	explicit := Pause("ps-explicit", "obj-2", domain.PauseRunComplete, T0)
	explicit.SubjectType = domain.SubjectObjective
	for _, p := range []*domain.PauseState{overdue, triage, manifest, explicit} {
		require.NoError(t, s.CreatePauseState(ctx, p))
		got, err := s.GetPauseState(ctx, p.PauseStateID)
		require.NoError(t, err)
		require.Equal(t, p, got, "pause state %s comes back as written", p.PauseStateID)
	}
	require.Equal(t, domain.SubjectTriage, triage.Subject())
	require.Equal(t, domain.SubjectObjective, overdue.Subject())
	ps, err := s.ListPauseStates(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, []*domain.PauseState{overdue}, ps)
	_, err = s.GetPauseState(ctx, "nope")
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func testPauseOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	deadline := T0.Add(-time.Hour)
	first := Pause("ps-overdue-obj-1", "obj-1", domain.PauseOverdue, T0)
	first.DeadlineAt = &deadline
	stored, created, err := s.CreatePauseStateOnce(ctx, first)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, first, stored)

	again := Pause("ps-overdue-obj-1", "obj-1", domain.PauseOverdue, T0.Add(time.Hour))
	again.DeadlineAt, again.PrioritizedActions = &deadline, []string{"Something else"}
	stored, created, err = s.CreatePauseStateOnce(ctx, again)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, first, stored, "the first one is kept and returned")
	ps, err := s.ListPauseStates(ctx, "obj-1")
	require.NoError(t, err)
	require.Len(t, ps, 1)

	// Inside a transaction, as a step writes it with its other records.
	require.NoError(t, s.InTx(ctx, func(q store.Querier) error {
		_, created, err := q.CreatePauseStateOnce(ctx, again)
		require.False(t, created)
		return err
	}))
	require.ErrorIs(t, s.CreatePauseState(ctx, again), domain.ErrAlreadyExists)
}

func testPausePages(t *testing.T, s store.Store) {
	ctx := context.Background()
	// ps-b and ps-c share a created_at: the id breaks the tie.
	for _, p := range []*domain.PauseState{
		Pause("ps-c", "obj-1", domain.PauseRunComplete, T0.Add(time.Second)),
		SubjectPause("ps-a", domain.SubjectTriage, "wo-1", domain.PauseProposalsReview, T0),
		Pause("ps-e", "obj-2", domain.PauseGateFailed, T0.Add(3*time.Second)),
		SubjectPause("ps-b", domain.SubjectManifest, "wo-2", domain.PauseManifestReady, T0.Add(time.Second)),
		SubjectPause("ps-d", domain.SubjectTriage, "wo-3", domain.PauseProposalsReview, T0.Add(2*time.Second)),
	} {
		require.NoError(t, s.CreatePauseState(ctx, p))
	}
	explicit := Pause("ps-f", "obj-3", domain.PauseRunComplete, T0.Add(4*time.Second))
	explicit.SubjectType = domain.SubjectObjective
	require.NoError(t, s.CreatePauseState(ctx, explicit))

	all := func(p store.ListPauseStatesParams) []string {
		var ids []string
		p.Limit = 2
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10, "the pages end")
			page, err := s.ListPauseStatesPage(ctx, p)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), 2)
			if len(page) == 0 {
				return ids
			}
			for _, ps := range page {
				ids = append(ids, ps.PauseStateID)
			}
			last := page[len(page)-1]
			p.After = domain.Cursor{CreatedAt: last.CreatedAt, ID: last.PauseStateID}
		}
	}
	require.Equal(t, []string{"ps-a", "ps-b", "ps-c", "ps-d", "ps-e", "ps-f"}, all(store.ListPauseStatesParams{}))
	require.Equal(t, []string{"ps-a", "ps-d"}, all(store.ListPauseStatesParams{SubjectType: domain.SubjectTriage}))
	require.Equal(t, []string{"ps-c", "ps-e", "ps-f"}, all(store.ListPauseStatesParams{SubjectType: domain.SubjectObjective}),
		"OBJECTIVE matches pause states without a subject type")
	require.Equal(t, []string{"ps-c", "ps-f"}, all(store.ListPauseStatesParams{Reason: domain.PauseRunComplete}))
	require.Equal(t, []string{"ps-d"}, all(store.ListPauseStatesParams{Reason: domain.PauseProposalsReview,
		After: domain.Cursor{CreatedAt: T0, ID: "ps-a"}}))
	require.Empty(t, all(store.ListPauseStatesParams{SubjectType: domain.SubjectManifest, Reason: domain.PauseGateFailed}))

	every, err := s.ListPauseStatesPage(ctx, store.ListPauseStatesParams{})
	require.NoError(t, err)
	require.Len(t, every, 6, "zero limit means no limit")
}

func testEventHandOver(t *testing.T, s store.Store) {
	ctx := context.Background()
	manifest := Event("ev-manifest", "manifest-1", 0, T0)
	manifest.EventType, manifest.Scope = domain.EventManifestRequested, "this week"
	for _, e := range []*domain.Event{manifest, Event("ev-ticket", "obj-1", 1, T0.Add(time.Second))} {
		_, _, err := s.EmitEvent(ctx, e)
		require.NoError(t, err)
	}
	handed := func() map[string]bool {
		pes, err := s.ListPendingEvents(ctx, store.PendingEventsParams{})
		require.NoError(t, err)
		out := map[string]bool{}
		for _, pe := range pes {
			out[pe.EventID] = pe.HandedOver
		}
		return out
	}
	require.Equal(t, map[string]bool{"ev-manifest": false, "ev-ticket": false}, handed())

	before, err := s.GetEvent(ctx, "ev-manifest")
	require.NoError(t, err)
	require.Equal(t, manifest, before)
	require.NoError(t, s.MarkEventHandedOver(ctx, store.MarkEventHandedOverParams{EventID: "ev-manifest", Now: T0.Add(time.Minute)}))
	require.NoError(t, s.MarkEventHandedOver(ctx, store.MarkEventHandedOverParams{EventID: "ev-manifest"}), "marking again is a no-op")
	require.ErrorIs(t, s.MarkEventHandedOver(ctx, store.MarkEventHandedOverParams{EventID: "nope"}), domain.ErrNotFound)
	require.Equal(t, map[string]bool{"ev-manifest": true, "ev-ticket": false}, handed())
	after, err := s.GetEvent(ctx, "ev-manifest")
	require.NoError(t, err)
	require.Equal(t, before, after, "the record is not touched")

	pes, err := s.ListPendingEvents(ctx, store.PendingEventsParams{EventType: domain.EventManifestRequested})
	require.NoError(t, err)
	require.Len(t, pes, 1)
	require.True(t, pes[0].HandedOver)
	require.False(t, pes[0].SubjectHandedOver, "the event's mark is not its subject's")

	_, err = s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: "ev-manifest", Reason: domain.ReasonScheduled})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"ev-ticket": false}, handed(), "a processed event is no longer pending")
}

func testObjectivesPage(t *testing.T, s store.Store) {
	ctx := context.Background()
	written := map[string]*domain.Objective{}
	// obj-b and obj-c share a created_at: the id breaks the tie.
	for _, c := range []struct {
		id     string
		at     time.Duration
		status domain.Status
	}{{"obj-c", time.Second, domain.StatusTodo}, {"obj-a", 0, domain.StatusNew}, {"obj-e", 3 * time.Second, domain.StatusBlocked},
		{"obj-b", time.Second, domain.StatusTodo}, {"obj-d", 2 * time.Second, domain.StatusDone}} {
		o := Objective(c.id)
		o.CreatedAt, o.Status = T0.Add(c.at), c.status
		require.NoError(t, s.CreateObjective(ctx, o))
		written[c.id] = o
	}
	all := func(statuses ...domain.Status) []string {
		var ids []string
		var after domain.Cursor
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10, "the pages end")
			page, err := s.ListObjectivesPage(ctx, store.ObjectivesPageParams{Statuses: statuses, After: after, Limit: 2})
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), 2)
			if len(page) == 0 {
				return ids
			}
			for _, o := range page {
				ids = append(ids, o.ObjectiveID)
			}
			last := page[len(page)-1]
			after = domain.Cursor{CreatedAt: last.CreatedAt, ID: last.ObjectiveID}
		}
	}
	require.Equal(t, []string{"obj-a", "obj-b", "obj-c", "obj-d", "obj-e"}, all())
	require.Equal(t, []string{"obj-b", "obj-c"}, all(domain.StatusTodo))
	require.Equal(t, []string{"obj-a", "obj-b", "obj-c", "obj-e"}, all(domain.StatusNew, domain.StatusTodo, domain.StatusBlocked))
	require.Empty(t, all("NO_SUCH_STATUS"))

	page, err := s.ListObjectivesPage(ctx, store.ObjectivesPageParams{Statuses: []domain.Status{domain.StatusTodo},
		After: domain.Cursor{CreatedAt: T0.Add(time.Second), ID: "obj-b"}})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, written["obj-c"], page[0], "the record comes back as written")
}

// testObjectivesPastDeadline: the deadline filter keeps exactly the
// objectives whose deadline (due_at, else created_at plus their urgency's
// SLA) is strictly before Before, to the microsecond the store keeps.
func testObjectivesPastDeadline(t *testing.T, s store.Store) {
	ctx := context.Background()
	before := T0.Add(1000 * time.Hour)
	sla := map[string]time.Duration{"CRITICAL": 4 * time.Hour, "NORMAL": 72 * time.Hour, "LOW": 168 * time.Hour}
	for _, c := range []struct {
		id      string
		urgency string
		created time.Time
		due     time.Time // zero: none
	}{
		{"due-passed", "LOW", before.Add(-time.Minute), before.Add(-time.Microsecond)},
		{"due-now", "LOW", T0, before},
		{"due-later-created-long-ago", "CRITICAL", T0, before.Add(time.Hour)},
		{"critical-past-sla", "CRITICAL", before.Add(-4*time.Hour - time.Microsecond), time.Time{}},
		{"critical-at-sla", "CRITICAL", before.Add(-4 * time.Hour), time.Time{}},
		{"normal-within-sla", "NORMAL", before.Add(-71 * time.Hour), time.Time{}},
		{"low-past-sla", "LOW", before.Add(-169 * time.Hour), time.Time{}},
		{"high-without-sla", "HIGH", T0, time.Time{}},
	} {
		o := Objective(c.id)
		o.Urgency, o.CreatedAt = c.urgency, c.created
		if !c.due.IsZero() {
			o.DueAt = &c.due
		}
		require.NoError(t, s.CreateObjective(ctx, o))
	}
	page, err := s.ListObjectivesPage(ctx, store.ObjectivesPageParams{
		PastDeadline: &store.DeadlineFilter{Before: before, SLA: sla}})
	require.NoError(t, err)
	var ids []string
	for _, o := range page {
		ids = append(ids, o.ObjectiveID)
	}
	require.ElementsMatch(t, []string{"due-passed", "critical-past-sla", "low-past-sla"}, ids)

	none, err := s.ListObjectivesPage(ctx, store.ObjectivesPageParams{
		PastDeadline: &store.DeadlineFilter{Before: before}})
	require.NoError(t, err)
	require.Len(t, none, 1, "without SLAs only due_at counts")
	require.Equal(t, "due-passed", none[0].ObjectiveID)
}

// testRecordsBeforeTracksReadable: rows written before migration 7 (its
// columns NULL) read back as the records they were: an objective's pause
// state, an untaken capture, an event without scope or hand-over mark.
func testRecordsBeforeTracksReadable(t *testing.T, s store.Store) {
	ctx := context.Background()
	raw, ok := s.(interface {
		rawStore
		EncodeTime(t time.Time) any
	})
	require.True(t, ok, "the backend exposes its database")
	exec := func(q string, args ...any) {
		_, err := raw.DB().ExecContext(ctx, raw.Rebind(q), args...)
		require.NoError(t, err)
	}
	at := raw.EncodeTime(T0)
	exec(`INSERT INTO pause_states (pause_state_id, objective_id, reason, prioritized_actions, created_at)
		VALUES ('ps-old', 'obj-1', 'RUN_COMPLETE', '["Review"]', $1)`, at)
	exec(`INSERT INTO capture_buffers (capture_buffer_id, source, content, status, created_at, updated_at)
		VALUES ('cap-old', 'test', 'Capture cap-old', 'PENDING', $1, $1)`, at)
	exec(`INSERT INTO events (event_id, event_type, subject_id, transition_seq, processed, created_at)
		VALUES ('ev-old', 'TICKET_READY', 'obj-1', 1, FALSE, $1)`, at)

	p, err := s.GetPauseState(ctx, "ps-old")
	require.NoError(t, err)
	require.Equal(t, &domain.PauseState{PauseStateID: "ps-old", ObjectiveID: "obj-1", Reason: domain.PauseRunComplete,
		PrioritizedActions: []string{"Review"}, CreatedAt: T0}, p)
	require.Equal(t, domain.SubjectObjective, p.Subject())
	ps, err := s.ListPauseStatesPage(ctx, store.ListPauseStatesParams{SubjectType: domain.SubjectObjective})
	require.NoError(t, err)
	require.Equal(t, []*domain.PauseState{p}, ps)

	require.Equal(t, []string{"cap-old"}, untaken(t, s, 0))
	c, err := s.GetCaptureBuffer(ctx, "cap-old")
	require.NoError(t, err)
	require.Equal(t, Capture("cap-old", T0), c)

	pes, err := s.ListPendingEvents(ctx, store.PendingEventsParams{})
	require.NoError(t, err)
	require.Len(t, pes, 1)
	require.Equal(t, Event("ev-old", "obj-1", 1, T0), pes[0].Event)
	require.False(t, pes[0].HandedOver)
}
