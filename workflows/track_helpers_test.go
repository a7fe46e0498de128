package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

const trackName = "ops"

// t0 is when the test events were created; each event's minute orders it.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// capture and manifest are track events created minute minutes after t0.
func capture(id string, minute int) activities.TrackEvent {
	return activities.TrackEvent{EventID: id, EventType: store.EventCaptureReady, CreatedAt: t0.Add(time.Duration(minute) * time.Minute)}
}

func manifest(id string, minute int) activities.TrackEvent {
	return activities.TrackEvent{EventID: id, EventType: store.EventManifestRequested, CreatedAt: t0.Add(time.Duration(minute) * time.Minute)}
}

// trackWO is the workorder a track event's schedule creates.
func trackWO(eventID string) activities.WorkOrderRef {
	return activities.WorkOrderRef{WorkOrderID: "wo-" + eventID, DiazotrophType: "TRIAGE_DIAZOTROPH",
		BudgetMS: 60_000, Status: store.WorkOrderCreated}
}

// trackBundle is one TrackWorkflow under test with mocked activities. The
// mocks record the order events are scheduled in and how many are active
// (from ScheduleTrack until the gate, or a schedule without a workorder).
type trackBundle struct {
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment

	mu        sync.Mutex
	scheduled []string
	active    int
	maxActive int
	attrs     map[string]string
}

func setupTrack(t *testing.T) *trackBundle {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.TrackWorkflow, workflow.RegisterOptions{Name: workflows.TrackWorkflowName})
	env.RegisterActivity(&activities.Lifecycle{})
	b := &trackBundle{t: t, env: env, attrs: map[string]string{}}
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return().Maybe().Run(func(args mock.Arguments) {
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
	b.env.OnActivity(a.ScheduleTrack, mock.Anything, activities.TrackScheduleInput{Track: trackName, EventID: eventID}).Return(
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
	b.schedules(eventID, activities.TrackScheduleResult{EventID: eventID, Reason: store.ReasonScheduled, WorkOrder: &wo}, nil)
	run := b.env.OnActivity(a.Run, mock.Anything, activities.RunInput{WorkOrderID: wo.WorkOrderID})
	if runErr != nil {
		run.Return(activities.RunResult{}, runErr)
	} else {
		run.Return(activities.RunResult{WorkOrderID: wo.WorkOrderID, RunnerStatus: store.RunnerOK}, nil)
	}
	run.Once().After(took)
	gin := activities.TrackGateInput{Track: trackName, WorkOrderID: wo.WorkOrderID}
	if runErr != nil {
		gin.RunFailure = runErr.Error()
	}
	b.env.OnActivity(a.GateTrack, mock.Anything, gin).Return(
		func(_ context.Context, in activities.TrackGateInput) (activities.TrackGateResult, error) {
			defer b.end()
			return activities.TrackGateResult{WorkOrderID: in.WorkOrderID, GateResult: verdict,
				GateReason: "gated " + in.WorkOrderID, ObjectiveIDs: []string{"obj-of-" + eventID}}, nil
		}).Once()
}

// gated is the outcome runs records for eventID.
func gated(ev activities.TrackEvent, verdict string) *workflows.TrackOutcome {
	wo := trackWO(ev.EventID).WorkOrderID
	return &workflows.TrackOutcome{EventID: ev.EventID, EventType: ev.EventType, Reason: store.ReasonScheduled,
		WorkOrderID: wo, GateResult: verdict, GateReason: "gated " + wo, ObjectiveIDs: []string{"obj-of-" + ev.EventID}}
}

// execute runs the track until it ends (the test cancels it or it
// continues as new). Any activity call no expectation matches fails the
// test, and the activity for good.
func (b *trackBundle) execute(in workflows.TrackInput) {
	b.t.Helper()
	env := b.env
	env.OnActivity(a.PendingTrackEvents, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.PendingTrackEventsInput) ([]activities.TrackEvent, error) {
			return nil, b.unexpected("PendingTrackEvents", in)
		})
	env.OnActivity(a.ScheduleTrack, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.TrackScheduleInput) (activities.TrackScheduleResult, error) {
			return activities.TrackScheduleResult{}, b.unexpected("ScheduleTrack", in)
		})
	env.OnActivity(a.Run, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.RunInput) (activities.RunResult, error) {
			return activities.RunResult{}, b.unexpected("Run", in)
		})
	env.OnActivity(a.GateTrack, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.TrackGateInput) (activities.TrackGateResult, error) {
			return activities.TrackGateResult{}, b.unexpected("GateTrack", in)
		})
	env.ExecuteWorkflow(workflows.TrackWorkflowName, in)
	require.True(b.t, env.IsWorkflowCompleted())
	env.AssertExpectations(b.t)
	require.LessOrEqual(b.t, b.maxActive, 1, "a track never has two events active")
}

func (b *trackBundle) unexpected(name string, in any) error {
	b.t.Errorf("unexpected activity call %s(%+v)", name, in)
	return temporal.NewNonRetryableApplicationError("unexpected activity call "+name, "Unexpected", nil)
}

func (b *trackBundle) at(d time.Duration, fn func()) { b.env.RegisterDelayedCallback(fn, d) }

// cancelAt cancels the track at d: a track never ends by itself.
func (b *trackBundle) cancelAt(d time.Duration) { b.at(d, b.env.CancelWorkflow) }

// canceled requires the track to have ended by cancellation.
func (b *trackBundle) canceled() {
	b.t.Helper()
	var ce *temporal.CanceledError
	err := b.env.GetWorkflowError()
	require.True(b.t, errors.As(err, &ce), "want canceled, got %v", err)
}

func (b *trackBundle) state() workflows.TrackState {
	b.t.Helper()
	v, err := b.env.QueryWorkflow(workflows.TrackStateQuery)
	require.NoError(b.t, err)
	var s workflows.TrackState
	require.NoError(b.t, v.Get(&s))
	return s
}

// queryAt captures the track's state at d.
func (b *trackBundle) queryAt(d time.Duration) *workflows.TrackState {
	s := new(workflows.TrackState)
	b.at(d, func() { *s = b.state() })
	return s
}

// enqueued records what became of one TrackEnqueue update.
type enqueued struct {
	accepted  bool
	rejected  error
	completed bool
	result    workflows.EnqueueResult
	err       error
}

func (u *enqueued) String() string {
	return fmt.Sprintf("accepted=%v rejected=%v completed=%v result=%+v err=%v", u.accepted, u.rejected,
		u.completed, u.result, u.err)
}

// enqueueAt sends ev by the TrackEnqueue update at d.
func (b *trackBundle) enqueueAt(d time.Duration, ev activities.TrackEvent) *enqueued {
	u := new(enqueued)
	b.at(d, func() {
		b.env.UpdateWorkflow(workflows.TrackEnqueue, "", &testsuite.TestUpdateCallback{
			OnAccept: func() { u.accepted = true },
			OnReject: func(err error) { u.rejected = err },
			OnComplete: func(res any, err error) {
				u.completed, u.err = true, err
				if err == nil {
					r, ok := res.(workflows.EnqueueResult)
					require.True(b.t, ok, "update result is %T", res)
					u.result = r
				}
			},
		}, ev)
	})
	return u
}

// continuedAsNew requires the track to have continued as new and returns
// the next run's input.
func (b *trackBundle) continuedAsNew() workflows.TrackInput {
	b.t.Helper()
	err := b.env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.True(b.t, workflow.IsContinueAsNewError(err), "want continue-as-new, got %v", err)
	require.True(b.t, errors.As(err, &can))
	require.Equal(b.t, workflows.TrackWorkflowName, can.WorkflowType.Name)
	var next workflows.TrackInput
	require.NoError(b.t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	return next
}
