package starter

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// Enqueue hands a track event (CAPTURE_READY, MANIFEST_REQUESTED) to the
// track's TrackWorkflow by update-with-start: the track is started if it
// does not run, and the call returns once the track has the event queued
// (an event it already has is a duplicate, and changes nothing). Then the
// event is marked handed over in the store, so the poller leaves it.
func (s *Starter) Enqueue(ctx context.Context, track string, e *domain.Event) (workflows.EnqueueResult, error) {
	if s.Client == nil {
		return workflows.EnqueueResult{}, ErrNotConnected
	}
	item := TrackEvent(e)
	opts := client.StartWorkflowOptions{
		ID:                       workflows.TrackWorkflowID(track),
		TaskQueue:                s.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    temporal.NewSearchAttributes(workflows.AttrTrack.ValueSet(track)),
	}
	var res workflows.EnqueueResult
	err := s.untilAttributesKnown(ctx, func() error {
		op := s.Client.NewWithStartWorkflowOperation(opts, workflows.TrackWorkflowName, workflows.TrackInput{Track: track})
		h, err := s.Client.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: op,
			UpdateOptions: client.UpdateWorkflowOptions{UpdateName: workflows.TrackEnqueue, Args: []any{item},
				WaitForStage: client.WorkflowUpdateStageCompleted},
		})
		if err != nil {
			return err
		}
		return h.Get(ctx, &res)
	})
	if err != nil {
		return res, fmt.Errorf("hand event %s to track %s: %w", e.EventID, track, err)
	}
	if s.Store != nil {
		// As with MarkHandedOver: the mark only spares the poller a call;
		// the track has the event either way.
		_ = s.Store.MarkEventHandedOver(ctx, store.MarkEventHandedOverParams{EventID: e.EventID})
	}
	return res, nil
}

// TrackState asks the track's TrackWorkflow for its state.
func (s *Starter) TrackState(ctx context.Context, track string) (workflows.TrackState, error) {
	var st workflows.TrackState
	if s.Client == nil {
		return st, ErrNotConnected
	}
	v, err := s.Client.QueryWorkflow(ctx, workflows.TrackWorkflowID(track), "", workflows.TrackStateQuery)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return st, fmt.Errorf("track %s: %w (it starts with the first capture or manifest request)", track, ErrNoLifecycle)
	}
	if err != nil {
		return st, fmt.Errorf("query track %s: %w", track, err)
	}
	if err := v.Get(&st); err != nil {
		return st, fmt.Errorf("decode state of track %s: %w", track, err)
	}
	return st, nil
}

// TrackEvent is the track event of e, as TrackWorkflow queues it.
func TrackEvent(e *domain.Event) activities.TrackEvent {
	return activities.TrackEvent{EventID: e.EventID, EventType: e.EventType, CreatedAt: e.CreatedAt}
}
