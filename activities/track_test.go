package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/internal/store/substrate"
	"github.com/azolla/azolla/schemas"
)

const testTrack = "tasks"

// forEachTrackBackend runs test on a bundle whose lifecycle runs the real
// triage and manifest diazotrophs (the fake stands in for neither).
func forEachTrackBackend(t *testing.T, edit func(tracks *activities.Tracks), test func(t *testing.T, tb *testBundle)) {
	t.Helper()
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		tb.steps.Diazotrophs = diazotroph.NewRegistry(tb.fake, triage.Diazotroph{}, manifest.Diazotroph{})
		tb.tracks.Tasks = activities.TaskOptions{Budget: 30 * time.Second}
		tb.steps.TaskBudget = tb.tracks.Tasks.Budget
		if edit != nil {
			edit(tb.tracks)
		}
		test(t, tb)
	})
}

// capture stores a PENDING capture created at T0+offset and emits its
// CAPTURE_READY event.
func (tb *testBundle) capture(t *testing.T, id, content string, offset time.Duration) *domain.Event {
	t.Helper()
	ctx := context.Background()
	c := storetest.Capture(id, storetest.T0.Add(offset))
	c.Content = content
	require.NoError(t, tb.store.CreateCaptureBuffer(ctx, c))
	ev, _, err := store.EmitCaptureReady(ctx, tb.store, id, storetest.T0.Add(offset))
	require.NoError(t, err)
	return ev
}

func (tb *testBundle) manifestRequest(t *testing.T, id string, offset time.Duration) *domain.Event {
	t.Helper()
	ev, _, err := tb.store.EmitEvent(context.Background(), &domain.Event{EventID: id, EventType: domain.EventManifestRequested,
		SubjectID: "mr-" + id, Scope: "ticket", CreatedAt: storetest.T0.Add(offset)})
	require.NoError(t, err)
	return ev
}

func (tb *testBundle) scheduleTrack(t *testing.T, eventID string) activities.TrackScheduleResult {
	t.Helper()
	res, err := tb.tracks.ScheduleTrack(context.Background(), activities.TrackScheduleInput{Track: testTrack, EventID: eventID})
	require.NoError(t, err)
	return res
}

func (tb *testBundle) captureRec(t *testing.T, id string) *domain.CaptureBuffer {
	t.Helper()
	c, err := tb.store.GetCaptureBuffer(context.Background(), id)
	require.NoError(t, err)
	return c
}

func (tb *testBundle) trackClaim(t *testing.T) *domain.ClaimRecord {
	t.Helper()
	c, err := tb.store.GetClaim(context.Background(), domain.ResourceTrack, domain.TrackResource(testTrack))
	require.NoError(t, err)
	require.NoError(t, schemas.Validate(schemas.ClaimRecord, c))
	return c
}

func (tb *testBundle) trackWorkOrders(t *testing.T) []*domain.WorkOrder {
	t.Helper()
	wos, err := tb.store.ListWorkOrders(context.Background(), store.ListWorkOrdersParams{Track: testTrack})
	require.NoError(t, err)
	return wos
}

func (tb *testBundle) objectiveCount(t *testing.T) int {
	t.Helper()
	os, err := tb.store.ListObjectives(context.Background(), store.ListObjectivesParams{})
	require.NoError(t, err)
	return len(os)
}

func snapshotCaptures(t *testing.T, snap *domain.ContextSnapshot) []string {
	t.Helper()
	in, err := triage.DecodeInput(snap.FullPromptText)
	require.NoError(t, err)
	var ids []string
	for i, c := range in.Captures {
		ids = append(ids, c.CaptureBufferID)
		require.Equal(t, domain.YieldRef{Kind: domain.YieldCapture, Ref: c.CaptureBufferID}, snap.RelatedYieldRefs[i])
	}
	require.Len(t, snap.RelatedYieldRefs, len(ids))
	return ids
}

func TestPendingTrackEvents_MergesBothKindsOldestFirst(t *testing.T) {
	forEachTrackBackend(t, nil, func(t *testing.T, tb *testBundle) {
		c2 := tb.capture(t, "cap-2", "Second", 2*time.Second)
		m1 := tb.manifestRequest(t, "ev-manifest-1", time.Second)
		c3 := tb.capture(t, "cap-3", "Third", 3*time.Second)
		evs, err := tb.tracks.PendingTrackEvents(t.Context(), activities.PendingTrackEventsInput{})
		require.NoError(t, err)
		var ids []string
		for _, e := range evs {
			ids = append(ids, e.EventID)
		}
		require.Equal(t, []string{m1.EventID, c2.EventID, c3.EventID}, ids)
		evs, err = tb.tracks.PendingTrackEvents(t.Context(), activities.PendingTrackEventsInput{Limit: 2})
		require.NoError(t, err)
		require.Len(t, evs, 2)
	})
}

func TestScheduleTrack_TriageFreezesOldestFirstBoundedCapturesAndTakesThem(t *testing.T) {
	forEachTrackBackend(t, func(tracks *activities.Tracks) { tracks.Tasks.TriageMaxCaptures = 3 }, func(t *testing.T, tb *testBundle) {
		ev4 := tb.capture(t, "cap-4", "Fourth", 4*time.Second)
		ev1 := tb.capture(t, "cap-1", "First\n- it works", time.Second)
		tb.capture(t, "cap-3", "Third", 3*time.Second)
		ev2 := tb.capture(t, "cap-2", "Second", 2*time.Second)

		res := tb.scheduleTrack(t, ev1.EventID)
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		require.Equal(t, "wo-"+ev1.EventID, res.WorkOrder.WorkOrderID)
		require.Equal(t, triage.Type, res.WorkOrder.DiazotrophType)
		require.Equal(t, int64(30000), res.WorkOrder.BudgetMS)
		w := tb.workOrder(t, res.WorkOrder.WorkOrderID)
		require.Equal(t, testTrack, w.Track)
		require.Empty(t, w.ObjectiveID)
		require.Empty(t, w.BranchName)
		snap, err := tb.store.GetContextSnapshot(t.Context(), w.ContextSnapshotID)
		require.NoError(t, err)
		require.Equal(t, testTrack, snap.Track)
		require.Empty(t, snap.ObjectiveID)
		require.Equal(t, []string{"cap-1", "cap-2", "cap-3"}, snapshotCaptures(t, snap), "the oldest three")
		for _, id := range []string{"cap-1", "cap-2", "cap-3"} {
			c := tb.captureRec(t, id)
			require.Equal(t, w.WorkOrderID, c.WorkOrderID, id)
			require.Equal(t, domain.CapturePending, c.Status, id)
		}
		require.Empty(t, tb.captureRec(t, "cap-4").WorkOrderID, "left for the next round")
		require.True(t, tb.event(t, ev1.EventID).Processed)

		// Retried: the same workorder, nothing more.
		again := tb.scheduleTrack(t, ev1.EventID)
		require.Equal(t, res, again)
		require.Len(t, tb.trackWorkOrders(t), 1)

		// The TRACK claim is the round's; another event waits its turn.
		c := tb.trackClaim(t)
		require.Equal(t, domain.TrackOwner(ev1.EventID), c.OwnerID)
		require.True(t, c.Live(time.Now()))
		_, err = tb.tracks.ScheduleTrack(t.Context(), activities.TrackScheduleInput{Track: testTrack, EventID: ev4.EventID})
		var claimed *activities.Claimed
		require.ErrorAs(t, err, &claimed)
		requireRetryable(t, err)
		require.False(t, tb.event(t, ev4.EventID).Processed)
		require.Empty(t, tb.captureRec(t, "cap-4").WorkOrderID)

		// cap-2 is taken: its event creates nothing.
		taken := tb.scheduleTrackAfterGate(t, res.WorkOrder.WorkOrderID, ev2.EventID)
		require.Equal(t, domain.ReasonAlreadyTaken, taken.Reason)
		require.Nil(t, taken.WorkOrder)
		require.Len(t, tb.trackWorkOrders(t), 1)
		require.NotNil(t, tb.trackClaim(t).ReleasedAt, "an ALREADY_TAKEN event leaves the track free")
	})
}

// scheduleTrackAfterGate runs and gates workorder, then schedules eventID.
func (tb *testBundle) scheduleTrackAfterGate(t *testing.T, workOrderID, eventID string) activities.TrackScheduleResult {
	t.Helper()
	_, err := tb.steps.Run(t.Context(), activities.RunInput{WorkOrderID: workOrderID})
	require.NoError(t, err)
	_, err = tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: workOrderID})
	require.NoError(t, err)
	return tb.scheduleTrack(t, eventID)
}

func TestScheduleTrack_TriageRoundIsBoundedBySizeAndKeepsTheEventsCapture(t *testing.T) {
	t.Run("own capture over the bound", func(t *testing.T) {
		forEachTrackBackend(t, func(tracks *activities.Tracks) { tracks.Tasks.TriageMaxBytes = 25 }, func(t *testing.T, tb *testBundle) {
			tb.capture(t, "cap-1", strings.Repeat("a", 10), time.Second)
			tb.capture(t, "cap-2", strings.Repeat("b", 10), 2*time.Second)
			tb.capture(t, "cap-3", strings.Repeat("c", 10), 3*time.Second)
			big := tb.capture(t, "cap-big", strings.Repeat("d", 100), 4*time.Second)
			res := tb.scheduleTrack(t, big.EventID)
			snap, err := tb.store.GetContextSnapshot(t.Context(), "cs-"+big.EventID)
			require.NoError(t, err)
			require.Equal(t, domain.ReasonScheduled, res.Reason)
			require.Equal(t, []string{"cap-big"}, snapshotCaptures(t, snap), "its own capture, alone over the bound")
		})
	})
	t.Run("oldest within the bound", func(t *testing.T) {
		forEachTrackBackend(t, func(tracks *activities.Tracks) { tracks.Tasks.TriageMaxBytes = 25 }, func(t *testing.T, tb *testBundle) {
			ev := tb.capture(t, "cap-1", strings.Repeat("a", 10), time.Second)
			tb.capture(t, "cap-2", strings.Repeat("b", 10), 2*time.Second)
			tb.capture(t, "cap-3", strings.Repeat("c", 10), 3*time.Second)
			tb.scheduleTrack(t, ev.EventID)
			snap, err := tb.store.GetContextSnapshot(t.Context(), "cs-"+ev.EventID)
			require.NoError(t, err)
			require.Equal(t, []string{"cap-1", "cap-2"}, snapshotCaptures(t, snap))
		})
	})
}

func TestTrack_TriageGateCreatesNewObjectivesProcessesCapturesAndPausesOnce(t *testing.T) {
	forEachTrackBackend(t, nil, func(t *testing.T, tb *testBundle) {
		ev := tb.capture(t, "cap-1", "Fix the login page\n- it loads under 1s", time.Second)
		tb.capture(t, "cap-2", "   \n", 2*time.Second)
		res := tb.scheduleTrack(t, ev.EventID)
		wo := res.WorkOrder.WorkOrderID
		before := tb.trackClaim(t)

		_, err := tb.steps.Run(t.Context(), activities.RunInput{WorkOrderID: wo})
		require.NoError(t, err)
		during := tb.trackClaim(t)
		require.Equal(t, domain.TrackOwner(ev.EventID), during.OwnerID)
		require.Greater(t, during.ClaimVersion, before.ClaimVersion, "Run extends the track's claim")
		require.Nil(t, during.ReleasedAt)

		gate, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: wo})
		require.NoError(t, err)
		require.Equal(t, domain.GatePass, gate.GateResult)
		id := activities.ProposalObjectiveID("cap-1", 0)
		require.Regexp(t, `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`, id)
		require.Equal(t, []string{id}, gate.ObjectiveIDs)
		o := tb.objective(t, id)
		require.Equal(t, domain.StatusNew, o.Status)
		require.Equal(t, "TICKET", o.ObjectiveType)
		require.Equal(t, "Fix the login page", o.Title)
		require.Equal(t, []string{id}, tb.captureRec(t, "cap-1").ObjectiveIDs)
		for _, c := range []string{"cap-1", "cap-2"} {
			require.Equal(t, domain.CaptureProcessed, tb.captureRec(t, c).Status, c)
		}
		require.Empty(t, tb.captureRec(t, "cap-2").ObjectiveIDs, "skipped: it became nothing")

		rr, err := tb.store.GetRunRecord(t.Context(), wo)
		require.NoError(t, err)
		require.Equal(t, testTrack, rr.Track)
		require.Equal(t, domain.GatePass, rr.GateResult)
		p, err := tb.store.GetPauseState(t.Context(), gate.Pause.PauseStateID)
		require.NoError(t, err)
		require.Equal(t, domain.PauseProposalsReview, p.Reason)
		require.Equal(t, domain.SubjectTriage, p.SubjectType)
		require.Equal(t, wo, p.SubjectID)
		require.Equal(t, "Review 1 proposed objectives", p.PrioritizedActions[0])
		require.Equal(t, []string{pause.ReviewProposals, pause.Approve}, p.ActionKinds)
		require.Contains(t, p.PrioritizedActions[1], "azolla objective approve "+id)
		require.NotNil(t, tb.trackClaim(t).ReleasedAt, "the gate frees the track")

		// Run again: the stored verdict, nothing more.
		again, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: wo})
		require.NoError(t, err)
		require.Equal(t, gate.GateResult, again.GateResult)
		require.Equal(t, gate.ObjectiveIDs, again.ObjectiveIDs)
		require.Equal(t, gate.Pause.PauseStateID, again.Pause.PauseStateID)
		require.Equal(t, 1, tb.objectiveCount(t))
	})
}

func TestTrack_AnInvalidProposalFailsTheGateAndCreatesNothing(t *testing.T) {
	forEachTrackBackend(t, nil, func(t *testing.T, tb *testBundle) {
		set := triage.Set{Proposals: []triage.Proposal{
			{CaptureBufferID: "cap-1", Title: "Fine", AcceptanceCriteria: []string{}, Urgency: "NORMAL"},
			{CaptureBufferID: "cap-2", Title: "Not of this round", AcceptanceCriteria: []string{}, Urgency: "NORMAL"},
		}, Skipped: []triage.Skipped{}}
		content, err := json.Marshal(set)
		require.NoError(t, err)
		tb.steps.Diazotrophs = diazotroph.NewRegistry(newFake(triage.Type, returning(diazotroph.Result{Title: "Triage",
			Content: string(content), RunnerStatus: domain.RunnerOK})))
		ev := tb.capture(t, "cap-1", "Fine", time.Second)
		wo := tb.scheduleTrack(t, ev.EventID).WorkOrder.WorkOrderID
		_, err = tb.steps.Run(t.Context(), activities.RunInput{WorkOrderID: wo})
		require.NoError(t, err)
		gate, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: wo})
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, gate.GateResult)
		require.Contains(t, gate.GateReason, "cap-2")
		require.Empty(t, gate.ObjectiveIDs)
		require.Equal(t, 0, tb.objectiveCount(t))
		require.Equal(t, domain.PauseGateFailed, gate.Pause.Reason)
		require.Equal(t, domain.SubjectTriage, gate.Pause.SubjectType)
		c := tb.captureRec(t, "cap-1")
		require.Equal(t, domain.CapturePending, c.Status)
		require.Empty(t, c.WorkOrderID, "the capture goes back to triage")
		require.Contains(t, gate.Pause.PrioritizedActions[1], "cap-1")
		require.Contains(t, gate.Pause.PrioritizedActions[1], "went back to triage")
		next := tb.pendingCaptureEvent(t, "cap-1")
		require.Equal(t, int64(1), next.TransitionSeq, "the capture's second CAPTURE_READY event")
		rr, err := tb.store.GetRunRecord(t.Context(), wo)
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, rr.GateResult)
		require.NotNil(t, tb.trackClaim(t).ReleasedAt)
	})
}

// pendingCaptureEvent is the one unprocessed CAPTURE_READY event of a
// capture, as the poller would hand it to the track.
func (tb *testBundle) pendingCaptureEvent(t *testing.T, id string) *domain.Event {
	t.Helper()
	evs, err := tb.store.ListUnprocessedEvents(t.Context(), store.ListEventsParams{EventType: domain.EventCaptureReady,
		SubjectID: id})
	require.NoError(t, err)
	require.Len(t, evs, 1, "capture %s has one CAPTURE_READY event waiting", id)
	return evs[0]
}

func TestTrack_ARunFailureFailsTheGate(t *testing.T) {
	forEachTrackBackend(t, nil, func(t *testing.T, tb *testBundle) {
		ev := tb.capture(t, "cap-1", "Fine", time.Second)
		wo := tb.scheduleTrack(t, ev.EventID).WorkOrder.WorkOrderID
		gate, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: wo, RunFailure: "worker lost"})
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, gate.GateResult)
		require.Contains(t, gate.GateReason, "worker lost")
		require.Equal(t, 0, tb.objectiveCount(t))
	})
}

// fixedSubstrate answers the manifest's queries with fixed results, or err.
type fixedSubstrate struct {
	results []manifest.QueryResult
	err     error
	scopes  []string
}

func (f *fixedSubstrate) ManifestQueries(_ context.Context, scope string, _ time.Time) ([]manifest.QueryResult, error) {
	f.scopes = append(f.scopes, scope)
	return f.results, f.err
}

func manifestResults(t *testing.T) []manifest.QueryResult {
	t.Helper()
	blocked := domain.Objective{ObjectiveID: "o-b", Title: "Blocked one", Status: domain.StatusBlocked, Urgency: "HIGH",
		Blockers: []string{"waiting"}, CreatedAt: storetest.T0, UpdatedAt: storetest.T0}
	var out []manifest.QueryResult
	add := func(q manifest.QueryResult, err error) {
		require.NoError(t, err)
		q.Substrate = "other"
		out = append(out, q)
	}
	add(manifest.Rows(manifest.QueryObjectivesByStatus, 1, map[string]string{"statuses": "NEW,TODO"}, []domain.Objective{blocked}))
	// Every query has parameters (the substrate's always carry its limit).
	limit := func() map[string]string { return map[string]string{"limit": "500"} }
	add(manifest.Rows(manifest.QueryBlockedObjectives, 1, limit(), []domain.Objective{blocked}))
	add(manifest.Rows(manifest.QueryOverdueObjectives, 1, limit(), []manifest.ObjectiveRow{}))
	add(manifest.Rows(manifest.QueryHumanPauseStates, 1, limit(), []manifest.PauseRow{}))
	add(manifest.Rows(manifest.QueryRecentRunRecords, 1, map[string]string{"limit": "500"}, []manifest.RunRow{}))
	return out
}

func TestTrack_ManifestFreezesTheQueriesAndPausesWithTheTopActions(t *testing.T) {
	forEachTrackBackend(t, nil, func(t *testing.T, tb *testBundle) {
		sub := &fixedSubstrate{results: manifestResults(t)}
		tb.tracks.Tasks.Substrate = sub
		ev := tb.manifestRequest(t, "ev-manifest-1", time.Second)
		res := tb.scheduleTrack(t, ev.EventID)
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		require.Equal(t, manifest.Type, res.WorkOrder.DiazotrophType)
		require.Equal(t, []string{"ticket"}, sub.scopes)
		w := tb.workOrder(t, res.WorkOrder.WorkOrderID)
		snap, err := tb.store.GetContextSnapshot(t.Context(), w.ContextSnapshotID)
		require.NoError(t, err)
		require.Len(t, snap.RelatedYieldRefs, 5)
		for i, r := range snap.RelatedYieldRefs {
			q := sub.results[i]
			hash, err := q.ContentHash()
			require.NoError(t, err)
			require.Equal(t, domain.YieldSubstrateQuery, r.Kind)
			require.Equal(t, q.Name, r.Ref)
			require.Equal(t, 1, r.Version)
			require.Equal(t, "other", r.Substrate)
			require.Equal(t, len(q.Rows), *r.RowCount)
			require.Equal(t, hash, r.ContentHash)
		}
		in, err := manifest.DecodeInput(snap.FullPromptText)
		require.NoError(t, err)
		require.Equal(t, "ticket", in.Scope)
		require.Nil(t, in.LastManifestAt, "no manifest before")

		_, err = tb.steps.Run(t.Context(), activities.RunInput{WorkOrderID: w.WorkOrderID})
		require.NoError(t, err)
		gate, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: w.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GatePass, gate.GateResult)
		p := gate.Pause
		require.Equal(t, domain.PauseManifestReady, p.Reason)
		require.Equal(t, domain.SubjectManifest, p.SubjectType)
		require.Equal(t, "Review the manifest: azolla manifest show "+w.WorkOrderID, p.PrioritizedActions[0])
		require.Equal(t, []string{pause.ReviewManifest, pause.ManifestAction}, p.ActionKinds)
		require.Contains(t, p.PrioritizedActions[1], "Unblock o-b")
		require.NotNil(t, tb.trackClaim(t).ReleasedAt)
		again, err := tb.tracks.GateTrack(t.Context(), activities.TrackGateInput{Track: testTrack, WorkOrderID: w.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, gate.Pause.PauseStateID, again.Pause.PauseStateID)

		// The next manifest knows when the last one was written.
		ev2 := tb.manifestRequest(t, "ev-manifest-2", 2*time.Second)
		tb.scheduleTrack(t, ev2.EventID)
		snap2, err := tb.store.GetContextSnapshot(t.Context(), "cs-"+ev2.EventID)
		require.NoError(t, err)
		in2, err := manifest.DecodeInput(snap2.FullPromptText)
		require.NoError(t, err)
		require.NotNil(t, in2.LastManifestAt)
		require.Equal(t, w.CreatedAt, *in2.LastManifestAt)
	})
}

func TestTrack_AnUnreachableSubstrateBlocksTheManifestRequest(t *testing.T) {
	unreachable := func(t *testing.T) activities.SubstrateQuerier {
		s, err := substrate.Open(t.Context(), substrate.Config{Name: "gone", Driver: substrate.DriverSQLite,
			Path: t.TempDir() + "/missing.db"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	for name, sub := range map[string]func(t *testing.T) activities.SubstrateQuerier{
		"none configured": func(*testing.T) activities.SubstrateQuerier { return nil },
		"unreachable":     unreachable,
	} {
		t.Run(name, func(t *testing.T) {
			forEachTrackBackend(t, nil, func(t *testing.T, tb *testBundle) {
				tb.tracks.Tasks.Substrate = sub(t)
				ev := tb.manifestRequest(t, "ev-manifest-1", time.Second)
				res := tb.scheduleTrack(t, ev.EventID)
				require.Equal(t, domain.ReasonBlocked, res.Reason)
				require.Nil(t, res.WorkOrder)
				require.NotNil(t, res.Pause)
				require.Equal(t, domain.PauseBlocked, res.Pause.Reason)
				require.Equal(t, domain.SubjectManifest, res.Pause.SubjectType)
				require.Equal(t, ev.EventID, res.Pause.SubjectID)
				require.Contains(t, res.Pause.PrioritizedActions[1], "azolla manifest request")
				require.Equal(t, domain.ReasonBlocked, tb.event(t, ev.EventID).ProcessedReason)
				_, err := tb.store.GetWorkOrderByEvent(t.Context(), ev.EventID)
				require.True(t, errors.Is(err, domain.ErrNotFound), "no workorder")
				_, err = tb.store.GetContextSnapshot(t.Context(), "cs-"+ev.EventID)
				require.True(t, errors.Is(err, domain.ErrNotFound), "no snapshot")
				require.NotNil(t, tb.trackClaim(t).ReleasedAt, "the track is free again")
				again := tb.scheduleTrack(t, ev.EventID)
				require.Equal(t, res.Pause.PauseStateID, again.Pause.PauseStateID)
			})
		})
	}
}

func TestScanDeadlines_OneOverduePausePerObjectiveAndDeadline(t *testing.T) {
	forEachTrackBackend(t, nil, func(t *testing.T, tb *testBundle) {
		t0 := storetest.T0
		tb.newObjective(t, "o-late", func(o *domain.Objective) { o.Urgency = "CRITICAL" })
		tb.newObjective(t, "o-done", func(o *domain.Objective) { o.Urgency = "CRITICAL"; o.Status = domain.StatusDone })
		due := t0.Add(48 * time.Hour)
		tb.newObjective(t, "o-due", func(o *domain.Objective) { o.DueAt = &due })
		asOf := t0.Add(5 * time.Hour)

		res, err := tb.tracks.ScanDeadlines(t.Context(), activities.DeadlineScanInput{AsOf: asOf})
		require.NoError(t, err)
		require.Equal(t, 1, res.Scanned, "only objectives past their deadline are read: not DONE, not o-due")
		require.Nil(t, res.Next)
		require.Len(t, res.Overdue, 1)
		od := res.Overdue[0]
		require.Equal(t, "o-late", od.ObjectiveID)
		require.Equal(t, t0.Add(4*time.Hour), od.DeadlineAt)
		require.True(t, od.Created)
		p, err := tb.store.GetPauseState(t.Context(), od.PauseStateID)
		require.NoError(t, err)
		require.Equal(t, domain.PauseOverdue, p.Reason)
		require.Equal(t, "o-late", p.ObjectiveID)
		require.Equal(t, t0.Add(4*time.Hour), *p.DeadlineAt)
		require.Equal(t, asOf, p.CreatedAt)
		require.Equal(t, []string{pause.ReviewOverdue, pause.SetDueDate}, p.ActionKinds)

		again, err := tb.tracks.ScanDeadlines(t.Context(), activities.DeadlineScanInput{AsOf: asOf.Add(time.Hour)})
		require.NoError(t, err)
		require.Len(t, again.Overdue, 1)
		require.False(t, again.Overdue[0].Created)
		require.Equal(t, od.PauseStateID, again.Overdue[0].PauseStateID)
		require.Len(t, tb.pauses(t, "o-late"), 1)

		early, err := tb.tracks.ScanDeadlines(t.Context(), activities.DeadlineScanInput{AsOf: t0.Add(time.Hour)})
		require.NoError(t, err)
		require.Empty(t, early.Overdue, "before the deadline: nothing")

		// Paged.
		page, err := tb.tracks.ScanDeadlines(t.Context(), activities.DeadlineScanInput{AsOf: asOf, Limit: 1})
		require.NoError(t, err)
		require.Equal(t, 1, page.Scanned)
		require.NotNil(t, page.Next)
		rest, err := tb.tracks.ScanDeadlines(t.Context(), activities.DeadlineScanInput{AsOf: asOf, After: *page.Next, Limit: 1})
		require.NoError(t, err)
		require.Zero(t, rest.Scanned)
		require.Nil(t, rest.Next)

		// A rejected objective stays NEW but waits for nobody: not overdue.
		rej := tb.newObjective(t, "o-rejected", func(o *domain.Objective) { o.Urgency = "CRITICAL" })
		ps := pause.Rejected("o-rejected", rej.StatusSeq, "ana", "not ours", t0)
		require.NoError(t, tb.store.CreatePauseState(t.Context(), &ps))
		after, err := tb.tracks.ScanDeadlines(t.Context(), activities.DeadlineScanInput{AsOf: asOf})
		require.NoError(t, err)
		require.Len(t, after.Overdue, 1, "only o-late")
		require.Empty(t, tb.pauses(t, "o-rejected")[1:], "no OVERDUE pause beside the rejection")
	})
}

// A scheduler attempt that took the track and died before its write: the
// retry is the same owner, and extends the claim instead of waiting on it.
func TestScheduleTrack_ARetryAfterACrashExtendsItsOwnTrackClaim(t *testing.T) {
	forEachTrackBackend(t, nil, func(t *testing.T, tb *testBundle) {
		ev := tb.capture(t, "cap-1", "First", time.Second)
		_, ok, err := tb.store.AcquireClaim(t.Context(), store.AcquireClaimParams{ResourceType: domain.ResourceTrack,
			ResourceID: domain.TrackResource(testTrack), OwnerID: domain.TrackOwner(ev.EventID), TTL: time.Minute, Now: time.Now()})
		require.NoError(t, err)
		require.True(t, ok)
		before := tb.trackClaim(t)
		res := tb.scheduleTrack(t, ev.EventID)
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		after := tb.trackClaim(t)
		require.Equal(t, before.OwnerID, after.OwnerID)
		require.Greater(t, after.ClaimVersion, before.ClaimVersion)
		require.True(t, after.LeaseExpiresAt.After(before.LeaseExpiresAt))
	})
}
