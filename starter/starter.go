package starter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// Store is what a Starter needs of the store: the objectives it creates,
// reads and marks handed over, their pause states (was one rejected?), and
// the track events it marks handed over.
type Store interface {
	store.ObjectiveQuerier
	store.PauseQuerier
	store.EventQuerier
	// GetOutputBundle tells whether an answer has a question to answer.
	GetOutputBundle(ctx context.Context, workOrderID string) (*domain.OutputBundle, error)
}

// Starter sends objectives and decisions to their lifecycles.
type Starter struct {
	Client    client.Client
	Store     Store
	TaskQueue string
	// AttributesWait bounds how long Start keeps trying while the namespace
	// refuses the lifecycle's search attributes as unknown, which it does
	// for a moment after they are registered (a cluster's frontend caches
	// them) and until they are. Zero means DefaultAttributesWait; a
	// negative value fails at once, for callers that retry anyway (the
	// poller's next pass).
	AttributesWait time.Duration
}

// DefaultAttributesWait is Starter.AttributesWait's default: long enough
// for a cluster to pick up newly registered search attributes, short enough
// for a command a user waits on.
const DefaultAttributesWait = 30 * time.Second

// Errors callers branch on.
var (
	// ErrNoLifecycle: the objective exists but no lifecycle is running.
	ErrNoLifecycle = errors.New("no running lifecycle")
	// ErrRefused: the lifecycle refused the decision in its current state.
	ErrRefused = errors.New("refused")
	// ErrNotConnected: the Starter has no Temporal client.
	ErrNotConnected = errors.New("not connected to Temporal")
	// ErrLifecycleEnded: StartFirst found that a lifecycle ran and closed.
	ErrLifecycleEnded = errors.New("a lifecycle ran and has closed")
)

// Create writes the objective, then starts its lifecycle. If the objective
// is stored but its lifecycle could not start (Temporal unreachable, or no
// Client: the caller could not dial), it returns the stored objective and an
// error saying why: the poller starts the lifecycle once Temporal is
// back, so nothing is lost. A nil objective means nothing was written.
func (s *Starter) Create(ctx context.Context, o *domain.Objective) (*domain.Objective, error) {
	if err := s.Store.CreateObjective(ctx, o); err != nil {
		return nil, err
	}
	err := ErrNotConnected
	if s.Client != nil {
		err = s.Start(ctx, o)
	}
	if err != nil {
		return o, fmt.Errorf("objective %s is stored; its lifecycle starts when the poller sees it: %w", o.ObjectiveID, err)
	}
	return o, nil
}

// Start makes sure the objective's lifecycle runs: it starts it, or wakes the
// running one (SignalWithStart), so it never runs two lifecycles of one
// objective at once. Only o.ObjectiveID is required: an event may name an
// objective the store does not have, and its lifecycle then records
// MISSING_TICKET. Once the lifecycle runs, the objective is marked handed
// over in the store, so the poller never asks Temporal about it again.
func (s *Starter) Start(ctx context.Context, o *domain.Objective) error {
	return s.start(ctx, o, enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE)
}

// StartFirst is Start for an objective thought never to have had a
// lifecycle: if one ran and has closed meanwhile (say it ran to DONE
// between a look at Temporal and this call), it starts nothing and returns
// an error wrapping ErrLifecycleEnded. A running lifecycle is woken as by
// Start.
func (s *Starter) StartFirst(ctx context.Context, o *domain.Objective) error {
	return s.start(ctx, o, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
}

func (s *Starter) start(ctx context.Context, o *domain.Objective, reuse enumspb.WorkflowIdReusePolicy) error {
	attrs := []temporal.SearchAttributeUpdate{workflows.AttrObjectiveID.ValueSet(o.ObjectiveID)}
	if o.ObjectiveType != "" {
		attrs = append(attrs, workflows.AttrObjectiveType.ValueSet(o.ObjectiveType))
	}
	if o.Status != "" {
		attrs = append(attrs, workflows.AttrStatus.ValueSet(string(o.Status)))
	}
	if o.Provenance != "" {
		attrs = append(attrs, workflows.AttrIssue.ValueSet([]string{o.Provenance}))
	}
	opts := client.StartWorkflowOptions{
		ID:                    workflows.ObjectiveWorkflowID(o.ObjectiveID),
		TaskQueue:             s.TaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
		WorkflowIDReusePolicy: reuse,
	}
	err := s.untilAttributesKnown(ctx, func() error {
		_, err := s.Client.SignalWithStartWorkflow(ctx, opts.ID, workflows.Wake, nil, opts,
			workflows.ObjectiveWorkflowName, workflows.ObjectiveInput{ObjectiveID: o.ObjectiveID})
		return err
	})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return fmt.Errorf("start lifecycle of %s: %w", o.ObjectiveID, ErrLifecycleEnded)
	}
	if err != nil {
		return fmt.Errorf("start lifecycle of %s: %w", o.ObjectiveID, err)
	}
	if s.Store != nil {
		// The mark only spares the poller a look at Temporal: if it cannot
		// be written, the poller looks once, finds this lifecycle and
		// marks the objective itself. An unknown objective (an event's
		// missing subject) has nothing to mark. Neither is the caller's
		// failure: the lifecycle runs.
		_ = s.Store.MarkHandedOver(ctx, store.MarkHandedOverParams{ObjectiveID: o.ObjectiveID})
	}
	return nil
}

// untilAttributesKnown runs start until it succeeds, fails otherwise than by
// unknown search attributes, or AttributesWait has passed.
func (s *Starter) untilAttributesKnown(ctx context.Context, start func() error) error {
	err := start()
	if err == nil || !attributesUnknown(err) || s.AttributesWait < 0 {
		return err
	}
	wait := s.AttributesWait
	if wait == 0 {
		wait = DefaultAttributesWait
	}
	bound := time.NewTimer(wait)
	defer bound.Stop()
	for pause := 100 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		retry := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			retry.Stop()
			return fmt.Errorf("%w (while waiting for namespace search attributes: %w)", context.Cause(ctx), err)
		case <-bound.C:
			retry.Stop()
			return fmt.Errorf("the namespace still lacks azolla's search attributes after %v; "+
				"register them (azolla dev does at start; on a cluster see README, \"Running against a real "+
				"Temporal cluster\"): %w", wait, err)
		case <-retry.C:
		}
		if err = start(); err == nil || !attributesUnknown(err) {
			return err
		}
	}
}

// attributesUnknown reports whether err is the frontend refusing a start
// because the namespace does not (yet) know a search attribute it sets.
// The type alone would not do: InvalidArgument is otherwise a request no
// retry can fix. The messages are the server's two for this refusal: the
// namespace has no alias for the attribute (SQL visibility, the dev
// server), or the attribute is not defined (Elasticsearch visibility).
func attributesUnknown(err error) bool {
	var invalid *serviceerror.InvalidArgument
	if !errors.As(err, &invalid) {
		return false
	}
	msg := invalid.Error()
	return strings.Contains(msg, "has no mapping defined for search attribute") ||
		(strings.HasPrefix(msg, "search attribute ") && strings.HasSuffix(msg, " is not defined"))
}

// Decide sends a decision (workflows.Approve, Reject, Unblock or Retry) as
// an update and returns the lifecycle's answer. A decision the lifecycle
// cannot take now wraps ErrRefused with its reason; an unknown objective
// wraps store.ErrNotFound; an objective whose lifecycle is not running
// wraps ErrNoLifecycle, or ErrRefused when it has ended for good (DONE or
// rejected). An objective that never had a lifecycle (a proposal from
// triage the poller has not handed over yet) gets its first one, which then
// takes the decision.
func (s *Starter) Decide(ctx context.Context, objectiveID, kind string, d workflows.Decision) (workflows.DecisionResult, error) {
	return s.DecideOnce(ctx, objectiveID, kind, "", d)
}

// DecideOnce is Decide for a decision that may be sent more than once (a
// command comment read again after a crash): requestID names it, and the
// lifecycle takes one decision per requestID, answering a repeat with
// the first one's result (Temporal's update id). "" is Decide.
func (s *Starter) DecideOnce(ctx context.Context, objectiveID, kind, requestID string, d workflows.Decision) (workflows.DecisionResult, error) {
	o, err := s.Store.GetObjective(ctx, objectiveID)
	if err != nil {
		return workflows.DecisionResult{}, err
	}
	if d.Answer {
		// Said here in an answer's words; Ready refuses it too, for an
		// objective that moves in between.
		if err := pause.CheckAnswer(ctx, s.Store, o, d.Comment); err != nil {
			return workflows.DecisionResult{}, fmt.Errorf("answer: %w: %w", ErrRefused, err)
		}
	}
	res, err := s.update(ctx, objectiveID, kind, requestID, d)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) && s.neverStarted(ctx, o) {
		res, err = s.update(ctx, objectiveID, kind, requestID, d)
	}
	if err != nil {
		return res, s.explain(ctx, o, kind, err)
	}
	return res, nil
}

// update sends the decision and waits for the lifecycle's answer.
func (s *Starter) update(ctx context.Context, objectiveID, kind, requestID string, d workflows.Decision) (workflows.DecisionResult, error) {
	var res workflows.DecisionResult
	h, err := s.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		UpdateID:   requestID,
		WorkflowID: workflows.ObjectiveWorkflowID(objectiveID), UpdateName: kind, Args: []any{d},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, &res)
	}
	return res, err
}

// neverStarted starts the first lifecycle of an objective that has none
// and never had one, and says whether it did. A DONE or rejected objective
// gets none, nor does one whose lifecycle ran and closed (StartFirst
// refuses): those are explained, not restarted.
func (s *Starter) neverStarted(ctx context.Context, o *domain.Objective) bool {
	if o.Status == domain.StatusDone {
		return false
	}
	if pauses, err := s.Store.ListPauseStates(ctx, o.ObjectiveID); err != nil || pause.WasRejected(pauses) {
		return false
	}
	return s.StartFirst(ctx, o) == nil
}

// explain turns an update failure into what the user can act on.
func (s *Starter) explain(ctx context.Context, o *domain.Objective, kind string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		if o.Status == domain.StatusDone {
			return fmt.Errorf("%s: %w: objective %s is DONE; its lifecycle has ended", kind, ErrRefused, o.ObjectiveID)
		}
		if pauses, perr := s.Store.ListPauseStates(ctx, o.ObjectiveID); perr == nil && pause.WasRejected(pauses) {
			return fmt.Errorf("%s: %w: objective %s was rejected; its lifecycle has ended", kind, ErrRefused, o.ObjectiveID)
		}
		return fmt.Errorf("%s %s (%s): %w; start it with: azolla objective resume %s", kind, o.ObjectiveID, o.Status,
			ErrNoLifecycle, o.ObjectiveID)
	}
	// The validator's refusal (or the decision's failure) names the state.
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return fmt.Errorf("%s: %w: %s", kind, ErrRefused, app.Message())
	}
	return fmt.Errorf("%s %s: %w", kind, o.ObjectiveID, err)
}

// State queries the lifecycle's state.
func (s *Starter) State(ctx context.Context, objectiveID string) (workflows.State, error) {
	var st workflows.State
	v, err := s.Client.QueryWorkflow(ctx, workflows.ObjectiveWorkflowID(objectiveID), "", workflows.StateQuery)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return st, fmt.Errorf("objective %s: %w", objectiveID, ErrNoLifecycle)
		}
		return st, fmt.Errorf("query lifecycle of %s: %w", objectiveID, err)
	}
	if err := v.Get(&st); err != nil {
		return st, fmt.Errorf("decode lifecycle state of %s: %w", objectiveID, err)
	}
	return st, nil
}
