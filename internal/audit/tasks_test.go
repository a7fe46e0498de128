package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

const testTrack = "default"

// capture writes a PENDING capture with its CAPTURE_READY event at at.
func capture(t *testing.T, s store.Querier, id string, at time.Time) *domain.Event {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.CreateCaptureBuffer(ctx, &domain.CaptureBuffer{CaptureBufferID: id, Source: "test",
		Content: "Do " + id, Status: domain.CapturePending, CreatedAt: at, UpdatedAt: at}))
	e, created, err := s.EmitEvent(ctx, &domain.Event{EventID: "ev-" + id, EventType: domain.EventCaptureReady,
		SubjectID: id, CreatedAt: at})
	require.NoError(t, err)
	require.True(t, created)
	return e
}

// trackWorkOrder schedules a track workorder of diazotroph typ for event
// e at at, taking captures.
func trackWorkOrder(t *testing.T, s store.Querier, e *domain.Event, typ string, at time.Time, captures ...string) *domain.WorkOrder {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.CreateContextSnapshot(ctx, &domain.ContextSnapshot{ContextSnapshotID: "cs-" + e.EventID,
		Track: testTrack, FullPromptText: "input", CreatedAt: at}))
	wo := &domain.WorkOrder{WorkOrderID: "wo-" + e.EventID, EventID: e.EventID, Track: testTrack, DiazotrophType: typ,
		ContextSnapshotID: "cs-" + e.EventID, BudgetMS: 60_000, Status: domain.WorkOrderCreated, CreatedAt: at}
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	if len(captures) > 0 {
		require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: wo.WorkOrderID,
			CaptureBufferIDs: captures, Now: at}))
	}
	_, err = s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: e.EventID, Reason: domain.ReasonScheduled, Now: at})
	require.NoError(t, err)
	return wo
}

// trackGate executes and passes a track workorder at at, with its pause.
func trackGate(t *testing.T, s store.Querier, wo *domain.WorkOrder, reason string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	_, _, err := s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Run",
		Content: "{}", RunnerStatus: domain.RunnerOK, CreatedAt: at})
	require.NoError(t, err)
	_, _, err = s.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: wo.WorkOrderID, Now: at})
	require.NoError(t, err)
	_, err = s.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: wo.WorkOrderID, Track: testTrack,
		GateResult: domain.GatePass, GateReason: "checked", CreatedAt: at, UpdatedAt: at})
	require.NoError(t, err)
	subject := domain.SubjectTriage
	if reason == domain.PauseManifestReady {
		subject = domain.SubjectManifest
	}
	require.NoError(t, s.CreatePauseState(ctx, &domain.PauseState{PauseStateID: "ps-" + wo.WorkOrderID,
		SubjectType: subject, SubjectID: wo.WorkOrderID, WorkOrderID: wo.WorkOrderID, Reason: reason,
		PrioritizedActions: []string{"Review"}, CreatedAt: at}))
}

// tasksEveryState leaves a triage run gated (its capture PROCESSED into a
// NEW objective), a manifest gated after it, and a capture waiting.
func tasksEveryState(t *testing.T, s store.Querier) {
	t.Helper()
	ctx := context.Background()
	ev := capture(t, s, "cap-1", T0)
	triage := trackWorkOrder(t, s, ev, "TRIAGE_DIAZOTROPH", T0.Add(time.Minute), "cap-1")
	require.NoError(t, s.CreateObjective(ctx, storetest.Objective("obj-from-cap-1")))
	trackGate(t, s, triage, domain.PauseProposalsReview, T0.Add(2*time.Minute))
	_, err := s.ProcessCapture(ctx, store.ProcessCaptureParams{CaptureBufferID: "cap-1", WorkOrderID: triage.WorkOrderID,
		ObjectiveIDs: []string{"obj-from-cap-1"}, Now: T0.Add(2 * time.Minute)})
	require.NoError(t, err)

	mr, created, err := s.EmitEvent(ctx, &domain.Event{EventID: "ev-mr-1", EventType: domain.EventManifestRequested,
		SubjectID: "mr-1", CreatedAt: T0.Add(2 * time.Minute)})
	require.NoError(t, err)
	require.True(t, created)
	manifest := trackWorkOrder(t, s, mr, "MANIFEST_DIAZOTROPH", T0.Add(3*time.Minute))
	trackGate(t, s, manifest, domain.PauseManifestReady, T0.Add(4*time.Minute))

	// A capture the round took whose own event came after it: a no-op.
	late := capture(t, s, "cap-3", T0.Add(30*time.Second))
	require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: triage.WorkOrderID,
		CaptureBufferIDs: []string{"cap-3"}, Now: T0.Add(time.Minute)}))
	_, err = s.ProcessCapture(ctx, store.ProcessCaptureParams{CaptureBufferID: "cap-3", WorkOrderID: triage.WorkOrderID,
		Now: T0.Add(2 * time.Minute)})
	require.NoError(t, err)
	markProcessed(t, s, late.EventID, domain.ReasonAlreadyTaken)

	capture(t, s, "cap-2", T0.Add(5*time.Minute))
}

func TestRun_ConsistentTaskManagementReportsNothing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		tasksEveryState(t, s)
		rep := audited(t, s)
		require.Empty(t, rep.Violations)
		require.Equal(t, 3, rep.Checked[audit.RuleCaptureReadyOnce], "one item per capture")
		require.Equal(t, 2, rep.Checked[audit.RuleCaptureProcessedByTriage], "one item per taken capture")
		require.Equal(t, 2, rep.Checked[audit.RuleTrackOneActive], "one item per track workorder")
	})
}

// Each case starts from tasksEveryState and breaks one guarantee with raw
// SQL, as a writer bypassing the store could.
func TestRun_ReportsEachBrokenTaskGuarantee(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		corrupt        func(t *testing.T, s *sqlstore.Store)
		rule, resource string
		opts           []audit.Option
	}{
		{"a second CAPTURE_READY event", func(t *testing.T, s *sqlstore.Store) {
			dropUnique(t, s, "events")
			raw(t, s, `INSERT INTO events (event_id, event_type, subject_id, transition_seq, processed, created_at)
				VALUES ('ev-cap-2-again', 'CAPTURE_READY', 'cap-2', 0, FALSE, $1)`, s.EncodeTime(T0))
		}, audit.RuleCaptureReadyOnce, "capture cap-2", nil},
		{"a PENDING capture never got its event", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `DELETE FROM events WHERE event_id = 'ev-cap-2'`)
		}, audit.RuleCaptureReadyOnce, "capture cap-2", nil},
		{"a PENDING capture no round holds, with every event processed", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE events SET processed = TRUE, processed_reason = 'ALREADY_TAKEN', processed_at = $1
				WHERE event_id = 'ev-cap-2'`, s.EncodeTime(T0.Add(6*time.Minute)))
		}, audit.RuleCaptureReadyOnce, "capture cap-2", nil},
		{"a capture left PENDING by a passed triage", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE capture_buffers SET status = 'PENDING', objective_ids = NULL WHERE capture_buffer_id = 'cap-1'`)
		}, audit.RuleCaptureProcessedByTriage, "capture cap-1", nil},
		{"a capture became an objective that does not exist", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE capture_buffers SET objective_ids = '["obj-ghost"]' WHERE capture_buffer_id = 'cap-1'`)
		}, audit.RuleCaptureProcessedByTriage, "capture cap-1", nil},
		{"a capture PROCESSED by a triage without a PASS", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE run_records SET gate_result = 'FAIL' WHERE work_order_id = 'wo-ev-cap-1'`)
		}, audit.RuleCaptureProcessedByTriage, "capture cap-1", nil},
		{"two track workorders active together", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE workorders SET created_at = $1 WHERE work_order_id = 'wo-ev-mr-1'`,
				s.EncodeTime(T0.Add(90*time.Second)))
		}, audit.RuleTrackOneActive, "track " + testTrack, nil},
		{"a TRACK claim left live after its gate", func(t *testing.T, s *sqlstore.Store) {
			_, ok, err := s.AcquireClaim(context.Background(), store.AcquireClaimParams{ResourceType: domain.ResourceTrack,
				ResourceID: domain.TrackResource(testTrack), OwnerID: "track:ev-mr-1", TTL: time.Hour, Now: now.Add(-time.Minute)})
			require.NoError(t, err)
			require.True(t, ok)
		}, audit.RuleNoLiveClaimOnFinished, "claim TRACK " + domain.TrackResource(testTrack), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
				tasksEveryState(t, s)
				require.Empty(t, audited(t, s).Violations, "clean before the corruption")
				tc.corrupt(t, s)
				requireReported(t, audited(t, s, tc.opts...), tc.rule, tc.resource)
			})
		})
	}
}

// A triage round that failed its gate and handed its capture back, as the
// gate does (docs/protocol/tasks.md#captures): a second CAPTURE_READY event
// for one failed round is right, a third is not.
func TestRun_ACaptureHandedBackByAFailedTriageHasOneMoreEvent(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		ev := capture(t, s, "cap-1", T0)
		at := T0.Add(time.Minute)
		require.NoError(t, s.CreateContextSnapshot(ctx, &domain.ContextSnapshot{ContextSnapshotID: "cs-" + ev.EventID,
			Track: testTrack, FullPromptText: "input", CreatedAt: at,
			RelatedYieldRefs: []domain.YieldRef{{Kind: domain.YieldCapture, Ref: "cap-1"}}}))
		wo := &domain.WorkOrder{WorkOrderID: "wo-" + ev.EventID, EventID: ev.EventID, Track: testTrack,
			DiazotrophType: "TRIAGE_DIAZOTROPH", ContextSnapshotID: "cs-" + ev.EventID, BudgetMS: 60_000,
			Status: domain.WorkOrderCreated, CreatedAt: at}
		_, _, err := s.CreateWorkOrder(ctx, wo)
		require.NoError(t, err)
		require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: wo.WorkOrderID,
			CaptureBufferIDs: []string{"cap-1"}, Now: at}))
		markProcessed(t, s, ev.EventID, domain.ReasonScheduled)
		at = at.Add(time.Minute)
		_, err = s.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: wo.WorkOrderID, Track: testTrack,
			GateResult: domain.GateFail, GateReason: "no answer", CreatedAt: at, UpdatedAt: at})
		require.NoError(t, err)
		require.NoError(t, s.CreatePauseState(ctx, &domain.PauseState{PauseStateID: "ps-" + wo.WorkOrderID,
			SubjectType: domain.SubjectTriage, SubjectID: wo.WorkOrderID, WorkOrderID: wo.WorkOrderID,
			Reason: domain.PauseGateFailed, PrioritizedActions: []string{"Review"}, CreatedAt: at}))
		require.Empty(t, audited(t, s).Violations, "a failed round may keep its captures (the last before a human)")
		evs, err := s.ReleaseCaptures(ctx, store.ReleaseCapturesParams{WorkOrderID: wo.WorkOrderID,
			CaptureBufferIDs: []string{"cap-1"}, Now: at})
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Empty(t, audited(t, s).Violations, "one failed round, two events, the second waiting")

		_, _, err = store.EmitCaptureReadyAt(ctx, s, "cap-1", 2, at)
		require.NoError(t, err)
		requireReported(t, audited(t, s), audit.RuleCaptureReadyOnce, "capture cap-1")
	})
}
