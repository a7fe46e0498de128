package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
)

// trackEventsPerRun is how many events one run of a track finishes before it
// continues as new, so its history stays bounded. A variable so tests can
// lower it.
var trackEventsPerRun = 200

// maxDone bounds the finished event ids a track remembers (and carries
// across runs) to answer a late duplicate enqueue.
const maxDone = 500

// trackRunLease is the heartbeat timeout of a track workorder's Run: the
// track has no objective to read the store's lease from.
const trackRunLease = time.Minute

// TrackWorkflow is one task-management track (docs/protocol/tasks.md): it serializes
// track A (triage of captures) and track B (manifest), at most one
// workorder active, the oldest waiting triage before any manifest. Events
// arrive by the TrackEnqueue update (update-with-start); the first run also
// loads the store's unprocessed events. An event whose step fails for good
// is recorded in the outcome and the track goes on with the next one.
func TrackWorkflow(ctx workflow.Context, in TrackInput) (TrackState, error) {
	t := &track{in: in, waiting: slices.Clone(in.Waiting), done: slices.Clone(in.Done),
		completed: in.Completed, recovered: in.Recovered, last: in.Last}
	if err := t.setup(ctx); err != nil {
		return t.snapshot(), err
	}
	return t.run(ctx)
}

// track is one run of a TrackWorkflow.
type track struct {
	in  TrackInput
	log log.Logger

	// waiting holds the queued events in arrival order; next picks among
	// them.
	waiting   []activities.TrackEvent
	active    *TrackActive
	done      []string
	completed int
	recovered bool
	last      *TrackOutcome
}

func (t *track) setup(ctx workflow.Context) error {
	t.log = log.With(workflow.GetLogger(ctx), "track", t.in.Track)
	if err := workflow.SetQueryHandler(ctx, TrackStateQuery, func() (TrackState, error) {
		return t.snapshot(), nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, TrackEnqueue,
		func(_ workflow.Context, ev TrackItem) (EnqueueResult, error) {
			return EnqueueResult{Duplicate: !t.add(ev), Waiting: len(t.waiting)}, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, ev TrackItem) error {
			return validTrackEvent(ev)
		}})
}

// validTrackEvent refuses what no track can run.
func validTrackEvent(ev TrackItem) error {
	if ev.EventID == "" {
		return errors.New("track event without an event id")
	}
	if !slices.Contains(domain.TrackEventTypes(), ev.EventType) {
		return fmt.Errorf("track event %s: type %q is none of %v", ev.EventID, ev.EventType, domain.TrackEventTypes())
	}
	return nil
}

// add queues ev unless the track already has it (waiting, active or done);
// it says whether ev was queued.
func (t *track) add(ev activities.TrackEvent) bool {
	id := ev.EventID
	if (t.active != nil && t.active.EventID == id) || slices.Contains(t.done, id) ||
		slices.ContainsFunc(t.waiting, func(w activities.TrackEvent) bool { return w.EventID == id }) {
		return false
	}
	t.waiting = append(t.waiting, ev)
	return true
}

// next takes the event to run from waiting: the oldest CAPTURE_READY (triage
// goes first), else the oldest MANIFEST_REQUESTED. Oldest is by CreatedAt,
// then by arrival.
func (t *track) next() (activities.TrackEvent, bool) {
	for _, kind := range domain.TrackEventTypes() {
		pick := -1
		for i, ev := range t.waiting {
			if ev.EventType == kind && (pick < 0 || ev.CreatedAt.Before(t.waiting[pick].CreatedAt)) {
				pick = i
			}
		}
		if pick >= 0 {
			ev := t.waiting[pick]
			t.waiting = slices.Delete(t.waiting, pick, pick+1)
			return ev, true
		}
	}
	return activities.TrackEvent{}, false
}

func (t *track) snapshot() TrackState {
	s := TrackState{Track: t.in.Track, Completed: t.completed, Last: t.last}
	for _, ev := range t.waiting {
		if ev.EventType == domain.EventCaptureReady {
			s.WaitingTriage = append(s.WaitingTriage, ev.EventID)
		} else {
			s.WaitingManifest = append(s.WaitingManifest, ev.EventID)
		}
	}
	if t.active != nil {
		a := *t.active
		s.Active = &a
	}
	return s
}

func (t *track) run(ctx workflow.Context) (TrackState, error) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, AttrTrack.ValueSet(t.in.Track)); err != nil {
		t.log.Warn("upsert search attributes", "error", err)
	}
	if !t.recovered {
		t.recover(ctx)
	}
	finished := 0
	for {
		if err := workflow.Await(ctx, func() bool { return len(t.waiting) > 0 }); err != nil {
			return t.snapshot(), err
		}
		ev, _ := t.next()
		if err := t.process(ctx, ev); err != nil {
			// Only a cancellation ends the track.
			return t.snapshot(), err
		}
		t.done = append(t.done, ev.EventID)
		if len(t.done) > maxDone {
			t.done = slices.Clone(t.done[len(t.done)-maxDone:])
		}
		t.completed++
		finished++
		if finished >= trackEventsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			return t.snapshot(), t.continueAsNew(ctx)
		}
	}
}

// recover queues the store's unprocessed track events: those handed over
// before the track existed, or while it was not running. A failure leaves
// the track unrecovered, so the next run tries again.
func (t *track) recover(ctx workflow.Context) {
	var evs []activities.TrackEvent
	err := workflow.ExecuteLocalActivity(withLocalOptions(ctx), tracks.PendingTrackEvents,
		activities.PendingTrackEventsInput{}).Get(ctx, &evs)
	if err != nil {
		t.log.Warn("loading pending track events failed; the next run tries again", "error", err)
		return
	}
	added := 0
	for _, ev := range evs {
		if validTrackEvent(ev) != nil {
			t.log.Warn("pending track event ignored", "event_id", ev.EventID, "event_type", ev.EventType)
			continue
		}
		if t.add(ev) {
			added++
		}
	}
	t.recovered = true
	t.log.Info("pending track events recovered", "found", len(evs), "queued", added)
}

// process schedules ev, runs its workorder and gates it, recording the
// outcome in t.last. A step that fails for good is recorded and logged; only
// a cancellation is returned.
func (t *track) process(ctx workflow.Context, ev activities.TrackEvent) error {
	lg := log.With(t.log, "event_id", ev.EventID, "event_type", ev.EventType)
	out := &TrackOutcome{EventID: ev.EventID, EventType: ev.EventType}
	t.active = &TrackActive{EventID: ev.EventID, EventType: ev.EventType, Step: StepScheduling}
	defer func() { t.active, t.last = nil, out }()

	giveUp := func(step string, err error) error {
		out.Error = rootMessage(err)
		if isCancel(err) {
			return err
		}
		lg.Error("track step failed; going on with the next event", "step", step, "error", err)
		return nil
	}

	var res activities.TrackScheduleResult
	if err := workflow.ExecuteActivity(withTrackOptions(ctx), tracks.ScheduleTrack,
		activities.TrackScheduleInput{Track: t.in.Track, EventID: ev.EventID}).Get(ctx, &res); err != nil {
		return giveUp(StepScheduling, err)
	}
	out.Reason = res.Reason
	if res.Reason != domain.ReasonScheduled || res.WorkOrder == nil {
		lg.Info("track event processed without a workorder", "reason", res.Reason)
		return nil
	}
	wo := *res.WorkOrder
	lg = log.With(lg, "work_order_id", wo.WorkOrderID)
	out.WorkOrderID = wo.WorkOrderID
	t.active.WorkOrderID, t.active.Step = wo.WorkOrderID, StepRunning
	lg.Info("running track workorder", "diazotroph", wo.DiazotrophType)

	gin := activities.TrackGateInput{Track: t.in.Track, WorkOrderID: wo.WorkOrderID}
	var run activities.RunResult
	if err := workflow.ExecuteActivity(withRunOptions(ctx, wo, trackRunLease, 0), steps.Run,
		activities.RunInput{WorkOrderID: wo.WorkOrderID}).Get(ctx, &run); err != nil {
		if isCancel(err) {
			return giveUp(StepRunning, err)
		}
		lg.Warn("run failed; gating without a bundle", "error", err)
		gin.RunFailure = rootMessage(err)
	}

	t.active.Step = StepGating
	var g activities.TrackGateResult
	if err := workflow.ExecuteActivity(withTrackOptions(ctx), tracks.GateTrack, gin).Get(ctx, &g); err != nil {
		return giveUp(StepGating, err)
	}
	out.GateResult, out.GateReason, out.ObjectiveIDs = g.GateResult, g.GateReason, g.ObjectiveIDs
	lg.Info("track workorder gated", "gate_result", g.GateResult, "objectives", len(g.ObjectiveIDs))
	return nil
}

// continueAsNew hands everything still queued (including events enqueued
// while the last one ran) to the next run, once every handler has finished.
func (t *track) continueAsNew(ctx workflow.Context) error {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	t.log.Info("track continues as new", "waiting", len(t.waiting), "completed", t.completed)
	return workflow.NewContinueAsNewError(ctx, TrackWorkflow, TrackInput{Track: t.in.Track,
		Waiting: slices.Clone(t.waiting), Done: slices.Clone(t.done), Completed: t.completed,
		Recovered: true, Last: t.last})
}
