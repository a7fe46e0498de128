package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// While manifest B1 runs, triage A1 and manifest B2 are enqueued and wait
// (the state query shows them); B1 finishes, then A1 (triage first), then
// B2, never two at once.
func TestTrack_TriageGoesBeforeManifestOneAtATime(t *testing.T) {
	t.Parallel()
	b := setupTrack(t)
	b1, a1, b2 := manifest("ev-b1", 0), capture("ev-a1", 1), manifest("ev-b2", 2)
	b.runs(b1.EventID, time.Hour, nil, domain.GatePass)
	b.runs(a1.EventID, time.Minute, nil, domain.GatePass)
	b.runs(b2.EventID, time.Minute, nil, domain.GatePass)

	u1 := b.enqueueAt(time.Minute, a1)
	u2 := b.enqueueAt(2*time.Minute, b2)
	during := b.queryAt(3 * time.Minute)
	b.cancelAt(24 * time.Hour)
	b.execute(workflows.TrackInput{Track: trackName, Waiting: []activities.TrackEvent{b1}, Recovered: true})

	b.canceled()
	require.Equal(t, []string{b1.EventID, a1.EventID, b2.EventID}, b.scheduled)
	require.Equal(t, workflows.EnqueueResult{Waiting: 1}, u1.result, u1)
	require.Equal(t, workflows.EnqueueResult{Waiting: 2}, u2.result, u2)
	require.Equal(t, workflows.TrackState{Track: trackName, WaitingTriage: []string{a1.EventID},
		WaitingManifest: []string{b2.EventID}, Active: &workflows.TrackActive{EventID: b1.EventID,
			EventType: domain.EventManifestRequested, WorkOrderID: trackWO(b1.EventID).WorkOrderID,
			Step: workflows.StepRunning}}, *during, "the state query shows what waits and what runs")
	require.Equal(t, workflows.TrackState{Track: trackName, Completed: 3, Last: gated(b2, domain.GatePass)}, b.state())
	require.Equal(t, map[string]string{"AzollaTrack": trackName}, b.attrs)
}

// Among events of one kind, the oldest (by creation) goes first, whatever
// the order they arrived in.
func TestTrack_OldestOfAKindFirst(t *testing.T) {
	t.Parallel()
	b := setupTrack(t)
	m1, m2, c1, c2 := manifest("ev-m1", 1), manifest("ev-m2", 2), capture("ev-c1", 3), capture("ev-c2", 4)
	for _, ev := range []activities.TrackEvent{c1, c2, m1, m2} {
		b.runs(ev.EventID, time.Minute, nil, domain.GatePass)
	}
	b.cancelAt(24 * time.Hour)
	b.execute(workflows.TrackInput{Track: trackName, Waiting: []activities.TrackEvent{m2, c2, m1, c1}, Recovered: true})

	b.canceled()
	require.Equal(t, []string{c1.EventID, c2.EventID, m1.EventID, m2.EventID}, b.scheduled)
}

// An event the track has, waiting, active or done, is a duplicate: it is
// scheduled once.
func TestTrack_DuplicateEnqueueChangesNothing(t *testing.T) {
	t.Parallel()
	b := setupTrack(t)
	x, y, old := capture("ev-x", 0), manifest("ev-y", 1), capture("ev-old", -60)
	b.runs(x.EventID, time.Hour, nil, domain.GatePass)
	b.runs(y.EventID, time.Minute, nil, domain.GatePass)

	first := b.enqueueAt(time.Minute, x)
	active := b.enqueueAt(2*time.Minute, x)
	y1 := b.enqueueAt(3*time.Minute, y)
	waiting := b.enqueueAt(4*time.Minute, y)
	done := b.enqueueAt(3*time.Hour, x)
	doneEarlier := b.enqueueAt(3*time.Hour, old)
	b.cancelAt(24 * time.Hour)
	b.execute(workflows.TrackInput{Track: trackName, Done: []string{old.EventID}, Recovered: true})

	b.canceled()
	require.Equal(t, []string{x.EventID, y.EventID}, b.scheduled)
	for name, c := range map[string]struct {
		u    *enqueued
		want workflows.EnqueueResult
	}{
		"first":        {first, workflows.EnqueueResult{Waiting: 1}},
		"active":       {active, workflows.EnqueueResult{Duplicate: true}},
		"new":          {y1, workflows.EnqueueResult{Waiting: 1}},
		"waiting":      {waiting, workflows.EnqueueResult{Duplicate: true, Waiting: 1}},
		"done":         {done, workflows.EnqueueResult{Duplicate: true}},
		"done earlier": {doneEarlier, workflows.EnqueueResult{Duplicate: true}},
	} {
		require.True(t, c.u.accepted && c.u.completed, "%s: %v", name, c.u)
		require.NoError(t, c.u.err, name)
		require.Equal(t, c.want, c.u.result, name)
	}
	require.Equal(t, 2, b.state().Completed)
}

func TestTrack_ValidatorRefusesWhatNoTrackRuns(t *testing.T) {
	t.Parallel()
	b := setupTrack(t)
	unknown := b.enqueueAt(time.Minute, activities.TrackEvent{EventID: "ev-t", EventType: domain.EventTicketReady})
	noID := b.enqueueAt(2*time.Minute, activities.TrackEvent{EventType: domain.EventCaptureReady})
	after := b.queryAt(3 * time.Minute)
	b.cancelAt(time.Hour)
	b.execute(workflows.TrackInput{Track: trackName, Recovered: true})

	b.canceled()
	for _, u := range []*enqueued{unknown, noID} {
		require.Error(t, u.rejected, u)
		require.False(t, u.accepted || u.completed, u)
	}
	require.ErrorContains(t, unknown.rejected, `type "TICKET_READY"`)
	require.ErrorContains(t, noID.rejected, "without an event id")
	require.Equal(t, workflows.TrackState{Track: trackName}, *after, "a refused event is not queued")
	require.Empty(t, b.scheduled)
}

// A track's first run queues the store's unprocessed events, and an
// enqueue of one of them (before or after) is a duplicate.
func TestTrack_FirstRunRecoversPendingEvents(t *testing.T) {
	t.Parallel()
	b := setupTrack(t)
	p1, p2, p3 := capture("ev-p1", 0), manifest("ev-p2", 1), capture("ev-p3", 2)
	b.env.OnActivity(tracks.PendingTrackEvents, mock.Anything, activities.PendingTrackEventsInput{}).
		Return([]activities.TrackEvent{p1, p2}, nil).Once()
	b.runs(p1.EventID, time.Hour, nil, domain.GatePass)
	b.runs(p3.EventID, time.Minute, nil, domain.GatePass)
	b.runs(p2.EventID, time.Minute, nil, domain.GatePass)

	dup := b.enqueueAt(time.Minute, p2)
	fresh := b.enqueueAt(2*time.Minute, p3)
	b.cancelAt(24 * time.Hour)
	b.execute(workflows.TrackInput{Track: trackName})

	b.canceled()
	require.Equal(t, []string{p1.EventID, p3.EventID, p2.EventID}, b.scheduled)
	require.Equal(t, workflows.EnqueueResult{Duplicate: true, Waiting: 1}, dup.result, dup)
	require.Equal(t, workflows.EnqueueResult{Waiting: 2}, fresh.result, fresh)
	require.Equal(t, 3, b.state().Completed)
}

// A schedule that fails for good is recorded in the outcome; the track goes
// on with the next event.
func TestTrack_FailedScheduleIsRecordedAndTheTrackGoesOn(t *testing.T) {
	t.Parallel()
	b := setupTrack(t)
	c1, c2 := capture("ev-c1", 0), capture("ev-c2", 1)
	b.schedules(c1.EventID, activities.TrackScheduleResult{}, temporal.NewNonRetryableApplicationError(
		"schedule track event \"ev-c1\": event is not a track event", activities.ErrTypeInvalidRecord, nil))
	b.runs(c2.EventID, time.Hour, nil, domain.GatePass)

	during := b.queryAt(30 * time.Minute)
	b.cancelAt(24 * time.Hour)
	b.execute(workflows.TrackInput{Track: trackName, Waiting: []activities.TrackEvent{c1, c2}, Recovered: true})

	b.canceled()
	require.Equal(t, []string{c1.EventID, c2.EventID}, b.scheduled)
	require.Equal(t, &workflows.TrackOutcome{EventID: c1.EventID, EventType: domain.EventCaptureReady,
		Error: "schedule track event \"ev-c1\": event is not a track event (type: InvalidRecord, retryable: false)"}, during.Last)
	require.Equal(t, 1, during.Completed)
	require.Equal(t, gated(c2, domain.GatePass), b.state().Last)
}

// A schedule that creates no workorder (the capture already taken) ends
// the event without a run.
func TestTrack_ScheduleWithoutWorkOrderRunsNothing(t *testing.T) {
	t.Parallel()
	b := setupTrack(t)
	c1 := capture("ev-c1", 0)
	b.schedules(c1.EventID, activities.TrackScheduleResult{EventID: c1.EventID, Reason: domain.ReasonAlreadyTaken}, nil)
	b.cancelAt(time.Hour)
	b.execute(workflows.TrackInput{Track: trackName, Waiting: []activities.TrackEvent{c1}, Recovered: true})

	b.canceled()
	require.Equal(t, workflows.TrackState{Track: trackName, Completed: 1, Last: &workflows.TrackOutcome{
		EventID: c1.EventID, EventType: domain.EventCaptureReady, Reason: domain.ReasonAlreadyTaken}}, b.state())
}

// A Run that gives up is gated all the same: its failure is the gate's
// RunFailure.
func TestTrack_RunFailureIsGated(t *testing.T) {
	t.Parallel()
	b := setupTrack(t)
	m1 := manifest("ev-m1", 0)
	b.runs(m1.EventID, time.Minute, temporal.NewNonRetryableApplicationError("diazotroph exited 2", "RunFailed", nil), domain.GateFail)
	b.cancelAt(time.Hour)
	b.execute(workflows.TrackInput{Track: trackName, Waiting: []activities.TrackEvent{m1}, Recovered: true})

	b.canceled()
	require.Equal(t, gated(m1, domain.GateFail), b.state().Last)
}

// After trackEventsPerRun events the track continues as new, carrying every
// event still waiting (one enqueued while the last event ran included), in
// order, and what it has done. Not parallel: it lowers a package variable.
func TestTrack_ContinuesAsNewCarryingTheQueue(t *testing.T) {
	workflows.SetTrackEventsPerRun(t, 2)
	b := setupTrack(t)
	c1, m1, c2, m2, m3 := capture("ev-c1", 0), manifest("ev-m1", 1), capture("ev-c2", 2), manifest("ev-m2", 3), manifest("ev-m3", 4)
	m4 := manifest("ev-m4", 10)
	b.runs(c1.EventID, time.Minute, nil, domain.GatePass)
	b.runs(c2.EventID, time.Hour, nil, domain.GateFail)
	late := b.enqueueAt(30*time.Minute, m4)
	b.execute(workflows.TrackInput{Track: trackName, Waiting: []activities.TrackEvent{c1, m1, c2, m2, m3},
		Done: []string{"ev-0"}, Completed: 7, Recovered: true})

	next := b.continuedAsNew()
	require.Equal(t, workflows.EnqueueResult{Waiting: 4}, late.result, late)
	require.Equal(t, workflows.TrackInput{Track: trackName, Waiting: []activities.TrackEvent{m1, m2, m3, m4},
		Done: []string{"ev-0", c1.EventID, c2.EventID}, Completed: 9, Recovered: true,
		Last: gated(c2, domain.GateFail)}, next)
}

// The server's suggestion ends the run after the event in hand.
func TestTrack_ContinuesAsNewWhenSuggested(t *testing.T) {
	t.Parallel()
	b := setupTrack(t)
	c1, c2 := capture("ev-c1", 0), capture("ev-c2", 1)
	b.runs(c1.EventID, time.Minute, nil, domain.GatePass)
	b.env.SetContinueAsNewSuggested(true)
	b.execute(workflows.TrackInput{Track: trackName, Waiting: []activities.TrackEvent{c1, c2}, Recovered: true})

	next := b.continuedAsNew()
	require.Equal(t, []activities.TrackEvent{c2}, next.Waiting)
	require.Equal(t, []string{c1.EventID}, next.Done)
}

// An event enqueued with the start, before the pending events are loaded,
// is not queued twice when the store lists it too.
func TestTrack_RecoveryDeduplicatesAnEarlierEnqueue(t *testing.T) {
	t.Parallel()
	b := setupTrack(t)
	p1, p2 := manifest("ev-p1", 0), capture("ev-p2", 1)
	b.env.OnActivity(tracks.PendingTrackEvents, mock.Anything, activities.PendingTrackEventsInput{}).
		Return([]activities.TrackEvent{p1, p2}, nil).Once().After(time.Minute)
	b.runs(p2.EventID, time.Minute, nil, domain.GatePass)
	b.runs(p1.EventID, time.Minute, nil, domain.GatePass)

	early := b.enqueueAt(time.Second, p2)
	b.cancelAt(24 * time.Hour)
	b.execute(workflows.TrackInput{Track: trackName})

	b.canceled()
	require.Equal(t, workflows.EnqueueResult{Waiting: 1}, early.result, early)
	require.Equal(t, []string{p2.EventID, p1.EventID}, b.scheduled)
	require.Equal(t, 2, b.state().Completed)
}
