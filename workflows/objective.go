package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
)

// ObjectiveInput starts (or continues) one objective's lifecycle.
type ObjectiveInput struct {
	ObjectiveID string
	// Round counts the lifecycle's rounds: each retry or unblock continues
	// as new with the next round, so history stays bounded.
	Round int
	// WorkOrderIDs and LastPause carry the query state across rounds.
	WorkOrderIDs []string
	LastPause    *domain.PauseState
}

// Decision is a human's word on the objective: who and why.
type Decision struct {
	By      string
	Comment string
	// Fresh (a retry's): the round starts from the snapshot's commit, not
	// from the partial work the round before left.
	Fresh bool `json:",omitempty"`
	// Answer (a retry's): Comment answers the question the round before's
	// agent asked; refused when no question waits.
	Answer bool `json:",omitempty"`
}

// DecisionResult answers a decision sent as an update.
type DecisionResult struct {
	// EventID is the TICKET_READY event emitted (approve, retry, unblock).
	EventID string
	// Pause is the pause state written (reject).
	Pause *domain.PauseState
}

// State is what the state query returns, and the workflow's result.
type State struct {
	ObjectiveID string
	// Status is the objective's status as last written by the lifecycle.
	Status domain.Status
	// Step is what the lifecycle is doing or waiting for (Step* constants).
	Step  string
	Round int
	// WorkOrderIDs lists this lifecycle's workorders, oldest first (the last
	// maxCarried across rounds).
	WorkOrderIDs       []string
	CurrentWorkOrderID string
	GateResult         string
	GateReason         string
	LastPause          *domain.PauseState
	// Error is the last step failure the lifecycle gave up on.
	Error string
	// PullRequest is the URL of the objective's pull request, once open;
	// PullRequestError why it could not be opened (the PASS stands).
	PullRequest      string `json:",omitempty"`
	PullRequestError string `json:",omitempty"`
	// PullRequestWaiting summarises review feedback or failed checks not
	// yet taken into a round: objective retry takes them.
	PullRequestWaiting string `json:",omitempty"`
}

// maxCarried bounds the workorder ids carried into the next round.
const maxCarried = 20

// The nil receivers the activities are named through, one per activity
// struct. Temporal names an activity after its method alone, so which
// struct holds it changes no command a workflow emits.
var (
	steps        *activities.Steps
	tracks       *activities.Tracks
	pullRequests *activities.PullRequests
	candidates   *activities.Candidates
	runSlots     *activities.RunSlots
)

// ObjectiveWorkflow is one objective's lifecycle (docs/protocol/lifecycle.md): it
// waits for human approval, makes the objective ready, and drives the
// scheduler, runner and gate activities until a pause state hands it back.
// After a block or a failed gate it waits for unblock or retry and continues
// as new. Everything it knows comes from the store through activities.
func ObjectiveWorkflow(ctx workflow.Context, in ObjectiveInput) (State, error) {
	w := &objective{state: State{ObjectiveID: in.ObjectiveID, Round: in.Round, Step: StepLoading,
		WorkOrderIDs: in.WorkOrderIDs, LastPause: in.LastPause}, results: map[int]*outcome{}}
	if err := w.setup(ctx); err != nil {
		return w.state, err
	}
	return w.run(ctx, in)
}

// objective is one run of the lifecycle.
type objective struct {
	state    State
	leaseTTL time.Duration
	v        versions
	// runSlots is changeRunSlots's version once asked (onRunQueue).
	runSlots *workflow.Version
	// slotWaits counts the runs queued for a run slot (awaitSlot).
	slotWaits int
	log       log.Logger
	// wake receives the wake signal; ending is set once the run is on its
	// way out, so waiting handlers stop waiting.
	wake   workflow.ReceiveChannel
	ending bool

	// statusHeld says the objective's status has changed since its last
	// upsert: it goes in the next one.
	statusHeld bool

	// view is the objective as Load last read it; pending, open and
	// blockerRef are what the run still has to do with it.
	view       activities.ObjectiveView
	pending    string
	open       *activities.WorkOrderRef
	blockerRef domain.BlockerRef

	// prOpen says the objective's pull request is open and followed;
	// prPoll is how often it is read.
	prOpen bool
	prPoll time.Duration

	// decision is the accepted, not yet handled human decision.
	decision *pendingDecision
	seq      int
	results  map[int]*outcome
}

type pendingDecision struct {
	kind string
	Decision
	seq int
}

type outcome struct {
	res DecisionResult
	err error
}

// setup registers the query, the decisions (each an update and a signal),
// the overdue signal and the wake channel.
func (w *objective) setup(ctx workflow.Context) error {
	w.v = getVersions(ctx)
	w.log = log.With(workflow.GetLogger(ctx), "objective_id", w.state.ObjectiveID)
	if err := workflow.SetQueryHandler(ctx, StateQuery, func() (State, error) { return w.snapshot(), nil }); err != nil {
		return err
	}
	for _, kind := range []string{Approve, Reject, Unblock, Retry} { // the keys of decisions, in a fixed order
		err := workflow.SetUpdateHandlerWithOptions(ctx, kind, w.handleDecision(kind),
			workflow.UpdateHandlerOptions{Validator: w.validateDecision(kind)})
		if err != nil {
			return err
		}
		ch := workflow.GetSignalChannel(ctx, kind)
		workflow.Go(ctx, func(ctx workflow.Context) { w.receiveDecisions(ctx, kind, ch) })
	}
	if w.v.overdueAttribute {
		overdue := workflow.GetSignalChannel(ctx, Overdue)
		workflow.Go(ctx, func(ctx workflow.Context) { w.receiveOverdue(ctx, overdue) })
	}
	w.wake = workflow.GetSignalChannel(ctx, Wake)
	if !w.v.wakeReloads {
		// Runs started before wakes were read drained them unread.
		workflow.Go(ctx, func(ctx workflow.Context) {
			for {
				w.wake.Receive(ctx, nil)
			}
		})
	}
	return nil
}

// validateDecision is the update validator of kind: it refuses, before
// anything is recorded, a decision the lifecycle cannot take now.
func (w *objective) validateDecision(kind string) func(workflow.Context, Decision) error {
	return func(_ workflow.Context, _ Decision) error {
		if w.state.Step == StepLoading {
			return nil // too early to tell; the handler judges it
		}
		return w.valid(kind)
	}
}

// handleDecision is the update handler of kind: it accepts the decision
// and answers with what the lifecycle did with it.
func (w *objective) handleDecision(kind string) func(workflow.Context, Decision) (DecisionResult, error) {
	return func(ctx workflow.Context, d Decision) (DecisionResult, error) {
		// Accepted while loading: judge it once Load has told.
		if err := workflow.Await(ctx, func() bool { return w.state.Step != StepLoading || w.ending }); err != nil {
			return DecisionResult{}, err
		}
		if err := w.valid(kind); err != nil {
			return DecisionResult{}, err
		}
		seq := w.accept(kind, d)
		if err := workflow.Await(ctx, func() bool { return w.results[seq] != nil }); err != nil {
			return DecisionResult{}, err
		}
		o := w.results[seq]
		return o.res, o.err
	}
}

// receiveDecisions takes the decisions of kind sent as signals, for as
// long as the run lasts; one it cannot take is logged and dropped.
func (w *objective) receiveDecisions(ctx workflow.Context, kind string, ch workflow.ReceiveChannel) {
	for {
		var d Decision
		ch.Receive(ctx, &d)
		// A signal sent with or just after the start must not be judged
		// before Load has said what the objective is waiting for.
		if err := workflow.Await(ctx, func() bool { return w.state.Step != StepLoading || w.ending }); err != nil {
			return
		}
		if err := w.valid(kind); err != nil {
			w.log.Warn("signal ignored", "signal", kind, "reason", err.Error())
			continue
		}
		w.accept(kind, d)
	}
}

// receiveOverdue marks the lifecycle overdue once, at the first overdue
// signal; later ones (a later deadline) change nothing.
func (w *objective) receiveOverdue(ctx workflow.Context, overdue workflow.ReceiveChannel) {
	overdue.Receive(ctx, nil)
	w.log.Info("objective overdue")
	if err := workflow.UpsertTypedSearchAttributes(ctx, AttrOverdue.ValueSet(true)); err != nil {
		w.log.Warn("upsert search attributes", "error", err)
	}
	for {
		overdue.Receive(ctx, nil)
	}
}

// valid says whether a decision of kind is acceptable now: the lifecycle
// waits for a human and the objective's status allows the decision's
// transition.
func (w *objective) valid(kind string) error {
	id := w.state.ObjectiveID
	switch {
	case w.ending:
		return fmt.Errorf("objective %s: the lifecycle has ended (%s)", id, w.state.Step)
	case w.decision != nil:
		return fmt.Errorf("objective %s: %s %s decision is already being handled", id, article(w.decision.kind), w.decision.kind)
	case w.state.Step == StepAwaitingReview && kind == Retry:
		return nil // the next round on the pull request (transition.Revise)
	case !slices.Contains([]string{StepAwaitingApproval, StepAwaitingRetry, StepAwaitingAnswer, StepAwaitingUnblock}, w.state.Step):
		return fmt.Errorf("objective %s is %s (%s): decisions are taken only while it waits for one", id, w.state.Status, w.state.Step)
	}
	t := decisions[kind]
	if !t.Allows(w.state.Status) {
		return fmt.Errorf("objective %s is %s (%s): %s is only possible while it is %v",
			id, w.state.Status, w.state.Step, kind, t.Rule().From)
	}
	return nil
}

// article is "an" before a vowel, "a" otherwise.
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "an"
	}
	return "a"
}

func (w *objective) accept(kind string, d Decision) int {
	w.seq++
	w.decision = &pendingDecision{kind: kind, Decision: d, seq: w.seq}
	return w.seq
}

// resolve answers the decision being handled.
func (w *objective) resolve(res DecisionResult, err error) {
	w.results[w.decision.seq] = &outcome{res: res, err: err}
	w.decision = nil
}

func (w *objective) snapshot() State {
	s := w.state
	s.WorkOrderIDs = slices.Clone(s.WorkOrderIDs)
	return s
}

func isCancel(err error) bool {
	var ce *temporal.CanceledError
	return errors.As(err, &ce)
}

// rootMessage is the innermost failure message, without the SDK's wrapping.
func rootMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
