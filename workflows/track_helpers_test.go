package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

const trackName = "ops"

// t0 is when the test events were created; each event's minute orders it.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// capture and manifest are track events created minute minutes after t0.
func capture(id string, minute int) activities.TrackEvent {
	return activities.TrackEvent{EventID: id, EventType: domain.EventCaptureReady, CreatedAt: t0.Add(time.Duration(minute) * time.Minute)}
}

func manifest(id string, minute int) activities.TrackEvent {
	return activities.TrackEvent{EventID: id, EventType: domain.EventManifestRequested, CreatedAt: t0.Add(time.Duration(minute) * time.Minute)}
}

// trackWO is the workorder a track event's schedule creates.
func trackWO(eventID string) activities.WorkOrderRef {
	return activities.WorkOrderRef{WorkOrderID: "wo-" + eventID, DiazotrophType: "TRIAGE_DIAZOTROPH",
		BudgetMS: 60_000, Status: domain.WorkOrderCreated}
}

// trackBundle is one TrackWorkflow under test with mocked activities. The
// mocks record the order events are scheduled in and how many are active
// (from ScheduleTrack until the gate, or a schedule without a workorder).
type trackBundle struct {
	harness

	mu        sync.Mutex
	scheduled []string
	active    int
	maxActive int
	attrs     map[string]string
}

func setupTrack(t *testing.T) *trackBundle {
	t.Helper()
	b := &trackBundle{harness: newHarness(t, workflows.TrackWorkflow, workflows.TrackWorkflowName),
		attrs: map[string]string{}}
	b.env.OnUpsertTypedSearchAttributes(mock.Anything).Return().Maybe().Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		if v, ok := sa.GetKeyword(workflows.AttrTrack); ok {
			b.mu.Lock()
			b.attrs[workflows.AttrTrack.GetName()] = v
			b.mu.Unlock()
		}
	})
	return b
}

func (b *trackBundle) begin(eventID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.scheduled = append(b.scheduled, eventID)
	b.active++
	b.maxActive = max(b.maxActive, b.active)
}

func (b *trackBundle) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active--
}

// schedules expects one ScheduleTrack of eventID answering res (or err).
func (b *trackBundle) schedules(eventID string, res activities.TrackScheduleResult, err error) {
	b.env.OnActivity(tracks.ScheduleTrack, mock.Anything, activities.TrackScheduleInput{Track: trackName, EventID: eventID}).Return(
		func(_ context.Context, in activities.TrackScheduleInput) (activities.TrackScheduleResult, error) {
			b.begin(in.EventID)
			if err != nil || res.WorkOrder == nil {
				b.end()
			}
			return res, err
		}).Once()
}

// runs expects eventID to be scheduled, its workorder run (taking took on
// the workflow clock, failing with runErr if set) and gated with verdict.
func (b *trackBundle) runs(eventID string, took time.Duration, runErr error, verdict string) {
	wo := trackWO(eventID)
	b.schedules(eventID, activities.TrackScheduleResult{EventID: eventID, Reason: domain.ReasonScheduled, WorkOrder: &wo}, nil)
	run := b.env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: wo.WorkOrderID})
	if runErr != nil {
		run.Return(activities.RunResult{}, runErr)
	} else {
		run.Return(activities.RunResult{WorkOrderID: wo.WorkOrderID, RunnerStatus: domain.RunnerOK}, nil)
	}
	run.Once().After(took)
	gin := activities.TrackGateInput{Track: trackName, WorkOrderID: wo.WorkOrderID}
	if runErr != nil {
		gin.RunFailure = runErr.Error()
	}
	b.env.OnActivity(tracks.GateTrack, mock.Anything, gin).Return(
		func(_ context.Context, in activities.TrackGateInput) (activities.TrackGateResult, error) {
			defer b.end()
			return activities.TrackGateResult{WorkOrderID: in.WorkOrderID, GateResult: verdict,
				GateReason: "gated " + in.WorkOrderID, ObjectiveIDs: []string{"obj-of-" + eventID}}, nil
		}).Once()
}

// gated is the outcome runs records for eventID.
func gated(ev activities.TrackEvent, verdict string) *workflows.TrackOutcome {
	wo := trackWO(ev.EventID).WorkOrderID
	return &workflows.TrackOutcome{EventID: ev.EventID, EventType: ev.EventType, Reason: domain.ReasonScheduled,
		WorkOrderID: wo, GateResult: verdict, GateReason: "gated " + wo, ObjectiveIDs: []string{"obj-of-" + ev.EventID}}
}

// execute runs the track until it ends (the test cancels it or it
// continues as new). Any activity call no expectation matches fails the
// test, and the activity for good.
func (b *trackBundle) execute(in workflows.TrackInput) {
	b.t.Helper()
	env := b.env
	env.OnActivity(tracks.PendingTrackEvents, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.PendingTrackEventsInput) ([]activities.TrackEvent, error) {
			return nil, b.unexpected("PendingTrackEvents", in)
		})
	env.OnActivity(tracks.ScheduleTrack, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.TrackScheduleInput) (activities.TrackScheduleResult, error) {
			return activities.TrackScheduleResult{}, b.unexpected("ScheduleTrack", in)
		})
	env.OnActivity(steps.Run, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.RunInput) (activities.RunResult, error) {
			return activities.RunResult{}, b.unexpected("Run", in)
		})
	env.OnActivity(tracks.GateTrack, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.TrackGateInput) (activities.TrackGateResult, error) {
			return activities.TrackGateResult{}, b.unexpected("GateTrack", in)
		})
	env.ExecuteWorkflow(workflows.TrackWorkflowName, in)
	require.True(b.t, env.IsWorkflowCompleted())
	env.AssertExpectations(b.t)
	require.LessOrEqual(b.t, b.maxActive, 1, "a track never has two events active")
}

func (b *trackBundle) state() workflows.TrackState {
	return query[workflows.TrackState](b.harness, workflows.TrackStateQuery)
}

// queryAt captures the track's state at d.
func (b *trackBundle) queryAt(d time.Duration) *workflows.TrackState {
	return queryAt[workflows.TrackState](b.harness, d, workflows.TrackStateQuery)
}

// enqueued records what became of one TrackEnqueue update.
type enqueued = updateOutcome[workflows.EnqueueResult]

// enqueueAt sends ev by the TrackEnqueue update at d.
func (b *trackBundle) enqueueAt(d time.Duration, ev activities.TrackEvent) *enqueued {
	return updateAt[workflows.EnqueueResult](b.harness, d, workflows.TrackEnqueue, ev)
}

// continuedAsNew requires the track to have continued as new and returns
// the next run's input.
func (b *trackBundle) continuedAsNew() workflows.TrackInput {
	b.t.Helper()
	return continuedAsNew[workflows.TrackInput](b.harness, workflows.TrackWorkflowName)
}
