package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/store"
)

// ObjectiveInput starts (or continues) one objective's lifecycle.
type ObjectiveInput struct {
	ObjectiveID string
	// Round counts the lifecycle's rounds: each retry or unblock continues
	// as new with the next round, so history stays bounded.
	Round int
	// WorkOrderIDs and LastPause carry the query state across rounds.
	WorkOrderIDs []string
	LastPause    *store.PauseState
}

// Decision is a human's word on the objective: who and why.
type Decision struct {
	By      string
	Comment string
}

// DecisionResult answers a decision sent as an update.
type DecisionResult struct {
	// EventID is the TICKET_READY event emitted (approve, retry, unblock).
	EventID string
	// Pause is the pause state written (reject).
	Pause *store.PauseState
}

// State is what the state query returns, and the workflow's result.
type State struct {
	ObjectiveID string
	// Status is the objective's status as last written by the lifecycle.
	Status string
	// Step is what the lifecycle is doing or waiting for (Step* constants).
	Step  string
	Round int
	// WorkOrderIDs lists this lifecycle's workorders, oldest first (the last
	// maxCarried across rounds).
	WorkOrderIDs       []string
	CurrentWorkOrderID string
	GateResult         string
	GateReason         string
	LastPause          *store.PauseState
	// Error is the last step failure the lifecycle gave up on.
	Error string
}

// maxCarried bounds the workorder ids carried into the next round.
const maxCarried = 20

// act is the nil receiver the lifecycle's activities are named through.
var act *activities.Lifecycle

// ObjectiveWorkflow is one objective's lifecycle (seeds 001 and 003): it
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

func (w *objective) setup(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, StateQuery, func() (State, error) { return w.snapshot(), nil }); err != nil {
		return err
	}
	for _, kind := range []string{Approve, Reject, Unblock, Retry} {
		err := workflow.SetUpdateHandlerWithOptions(ctx, kind,
			func(ctx workflow.Context, d Decision) (DecisionResult, error) {
				// Accepted while loading: judge it once Load has told.
				if err := workflow.Await(ctx, func() bool { return w.state.Step != StepLoading }); err != nil {
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
			},
			workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, _ Decision) error {
				if w.state.Step == StepLoading {
					return nil // too early to tell; the handler judges it
				}
				return w.valid(kind)
			}})
		if err != nil {
			return err
		}
		ch := workflow.GetSignalChannel(ctx, kind)
		workflow.Go(ctx, func(ctx workflow.Context) {
			for {
				var d Decision
				ch.Receive(ctx, &d)
				// A signal sent with or just after the start must not be judged
				// before Load has said what the objective is waiting for.
				if err := workflow.Await(ctx, func() bool { return w.state.Step != StepLoading }); err != nil {
					return
				}
				if err := w.valid(kind); err != nil {
					workflow.GetLogger(ctx).Warn("signal ignored", "signal", kind, "reason", err.Error())
					continue
				}
				w.accept(kind, d)
			}
		})
	}
	wake := workflow.GetSignalChannel(ctx, Wake)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			wake.Receive(ctx, nil)
		}
	})
	return nil
}

// valid says whether a decision of kind is acceptable now.
func (w *objective) valid(kind string) error {
	if w.decision != nil {
		return fmt.Errorf("objective %s: a %s decision is already being handled", w.state.ObjectiveID, w.decision.kind)
	}
	var steps []string
	switch kind {
	case Approve, Reject:
		steps = []string{StepAwaitingApproval}
	case Retry, Unblock:
		steps = []string{StepAwaitingRetry, StepAwaitingUnblock}
	}
	if !slices.Contains(steps, w.state.Step) {
		return fmt.Errorf("objective %s is %s (%s): %s is only possible while %v",
			w.state.ObjectiveID, w.state.Status, w.state.Step, kind, steps)
	}
	return nil
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

func (w *objective) run(ctx workflow.Context, in ObjectiveInput) (State, error) {
	log := workflow.GetLogger(ctx)
	var view activities.ObjectiveView
	if err := workflow.ExecuteActivity(withShortOptions(ctx), act.Load, in.ObjectiveID).Get(ctx, &view); err != nil {
		return w.fail(err)
	}
	w.leaseTTL = view.LeaseTTL
	if view.LastPause != nil && w.state.LastPause == nil {
		w.state.LastPause = view.LastPause
	}
	attrs := []temporal.SearchAttributeUpdate{AttrObjectiveID.ValueSet(in.ObjectiveID)}
	if view.Found {
		attrs = append(attrs, AttrObjectiveType.ValueSet(view.ObjectiveType))
	}
	w.setStatus(ctx, view.Status, attrs...)

	pending, open, blockerRef := view.PendingEventID, view.OpenWorkOrder, view.BlockerRef
	for {
		switch {
		case pending != "":
			res, err := w.schedule(ctx, pending)
			if err != nil {
				return w.fail(err)
			}
			// Only SCHEDULED names a workorder: a stale event's other outcome
			// must not drop the open workorder Load found.
			pending = ""
			if res.WorkOrder != nil {
				open = res.WorkOrder
			}
			if res.Pause != nil {
				w.state.LastPause = res.Pause
			}
			if res.Status == "" {
				w.state.Step = StepMissing
				return w.snapshot(), nil
			}
			w.setStatus(ctx, res.Status)

		case !view.Found:
			w.state.Step = StepMissing
			log.Warn("objective not found in the store; lifecycle ends")
			return w.snapshot(), nil

		case w.state.Status == store.StatusInProgress && open != nil:
			g, err := w.runAndGate(ctx, *open)
			if err != nil {
				return w.fail(err)
			}
			open, blockerRef = nil, g.BlockerRef
			w.state.LastPause = &g.Pause
			w.setStatus(ctx, g.Status, AttrGateResult.ValueSet(g.GateResult))

		case w.state.Status == store.StatusInProgress:
			return w.fail(fmt.Errorf("objective %s is IN_PROGRESS without an open workorder", in.ObjectiveID))

		case w.state.Status == store.StatusDone:
			w.state.Step = StepDone
			return w.snapshot(), nil

		case w.state.Status == store.StatusNew:
			if w.state.LastPause != nil && w.state.LastPause.Reason == store.PauseRejected {
				w.state.Step = StepRejected
				return w.snapshot(), nil
			}
			d, err := w.await(ctx, StepAwaitingApproval)
			if err != nil {
				return w.fail(err)
			}
			if d.kind == Reject {
				var ps store.PauseState
				err := workflow.ExecuteActivity(withShortOptions(ctx), act.Reject, activities.RejectInput{
					ObjectiveID: in.ObjectiveID, By: d.By, Comment: d.Comment}).Get(ctx, &ps)
				w.resolve(DecisionResult{Pause: &ps}, err)
				if err != nil {
					return w.fail(err)
				}
				w.state.LastPause, w.state.Step = &ps, StepRejected
				return w.snapshot(), nil
			}
			log.Info("objective approved", "by", d.By, "comment", d.Comment)
			r, err := w.ready(ctx, activities.ReadyApprove)
			w.resolve(DecisionResult{EventID: r.EventID}, err)
			if err != nil {
				return w.fail(err)
			}
			pending = r.EventID

		case w.state.Status == store.StatusTodo && blockerRef == "":
			r, err := w.ready(ctx, activities.ReadyResume)
			if err != nil {
				return w.fail(err)
			}
			pending = r.EventID

		default: // BLOCKED, or TODO after a failed gate
			step := StepAwaitingRetry
			if w.state.Status == store.StatusBlocked {
				step = StepAwaitingUnblock
			}
			d, err := w.await(ctx, step)
			if err != nil {
				return w.fail(err)
			}
			mode := activities.ReadyRetry
			if d.kind == Unblock {
				mode = activities.ReadyUnblock
			}
			log.Info("objective re-emitted", "decision", d.kind, "by", d.By, "comment", d.Comment)
			r, err := w.ready(ctx, mode)
			w.resolve(DecisionResult{EventID: r.EventID}, err)
			if err != nil {
				// The decision was refused (the objective changed under us):
				// keep waiting rather than end the lifecycle.
				log.Warn("re-emit failed", "error", err)
				continue
			}
			return w.snapshot(), w.continueAsNew(ctx, in)
		}
	}
}

// await waits in step for a human decision.
func (w *objective) await(ctx workflow.Context, step string) (*pendingDecision, error) {
	w.state.Step = step
	if err := workflow.Await(ctx, func() bool { return w.decision != nil }); err != nil {
		return nil, err
	}
	return w.decision, nil
}

func (w *objective) ready(ctx workflow.Context, mode string) (activities.ReadyResult, error) {
	w.state.Step = StepReadying
	var r activities.ReadyResult
	err := workflow.ExecuteActivity(withShortOptions(ctx), act.Ready, activities.ReadyInput{
		ObjectiveID: w.state.ObjectiveID, Mode: mode}).Get(ctx, &r)
	if err == nil {
		w.setStatus(ctx, r.Status)
	}
	return r, err
}

func (w *objective) schedule(ctx workflow.Context, eventID string) (activities.ScheduleResult, error) {
	w.state.Step = StepScheduling
	var res activities.ScheduleResult
	err := workflow.ExecuteActivity(withRepoOptions(ctx, w.leaseTTL), act.Schedule, activities.ScheduleInput{EventID: eventID}).Get(ctx, &res)
	return res, err
}

// runAndGate runs the workorder and gates it. A Run that fails for good is
// gated too: its failure becomes the FAIL verdict, so every workorder ends in
// a run record and a pause state.
func (w *objective) runAndGate(ctx workflow.Context, wo activities.WorkOrderRef) (activities.GateResult, error) {
	w.state.Step, w.state.CurrentWorkOrderID = StepRunning, wo.WorkOrderID
	if !slices.Contains(w.state.WorkOrderIDs, wo.WorkOrderID) {
		w.state.WorkOrderIDs = append(w.state.WorkOrderIDs, wo.WorkOrderID)
	}
	_ = workflow.UpsertTypedSearchAttributes(ctx, AttrDiazotroph.ValueSet(wo.DiazotrophType))

	in := activities.GateInput{WorkOrderID: wo.WorkOrderID}
	var run activities.RunResult
	if err := workflow.ExecuteActivity(withRunOptions(ctx, wo, w.leaseTTL), act.Run,
		activities.RunInput{WorkOrderID: wo.WorkOrderID}).Get(ctx, &run); err != nil {
		if isCancel(err) {
			return activities.GateResult{}, err
		}
		workflow.GetLogger(ctx).Warn("run failed; gating without a bundle", "workorder", wo.WorkOrderID, "error", err)
		in.RunFailure = rootMessage(err)
	}

	w.state.Step = StepGating
	var g activities.GateResult
	if err := workflow.ExecuteActivity(withRepoOptions(ctx, w.leaseTTL), act.Gate, in).Get(ctx, &g); err != nil {
		return g, err
	}
	w.state.GateResult, w.state.GateReason, w.state.CurrentWorkOrderID = g.GateResult, g.GateReason, ""
	return g, nil
}

// setStatus records the objective's status and upserts it (and attrs) as
// search attributes, so the Web UI filters by it.
func (w *objective) setStatus(ctx workflow.Context, status string, attrs ...temporal.SearchAttributeUpdate) {
	if status != "" && status != w.state.Status {
		w.state.Status = status
		attrs = append(attrs, AttrStatus.ValueSet(status))
	}
	if len(attrs) == 0 {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, attrs...); err != nil {
		workflow.GetLogger(ctx).Warn("upsert search attributes", "error", err)
	}
}

// continueAsNew starts the next round once every update has been answered.
func (w *objective) continueAsNew(ctx workflow.Context, in ObjectiveInput) error {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	ids := w.state.WorkOrderIDs
	if len(ids) > maxCarried {
		ids = ids[len(ids)-maxCarried:]
	}
	return workflow.NewContinueAsNewError(ctx, ObjectiveWorkflow, ObjectiveInput{ObjectiveID: in.ObjectiveID,
		Round: in.Round + 1, WorkOrderIDs: ids, LastPause: w.state.LastPause})
}

// fail records the error in the state and fails the workflow with it.
func (w *objective) fail(err error) (State, error) {
	w.state.Error = rootMessage(err)
	return w.snapshot(), err
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
