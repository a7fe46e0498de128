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
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/transition"
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
	v        versions
	log      log.Logger
	// wake receives the wake signal; ending is set once the run is on its
	// way out, so waiting handlers stop waiting.
	wake   workflow.ReceiveChannel
	ending bool

	// statusHeld says the objective's status has changed since its last
	// upsert: it goes in the next one.
	statusHeld bool

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
	w.v = getVersions(ctx)
	w.log = log.With(workflow.GetLogger(ctx), "objective_id", w.state.ObjectiveID)
	if err := workflow.SetQueryHandler(ctx, StateQuery, func() (State, error) { return w.snapshot(), nil }); err != nil {
		return err
	}
	for _, kind := range []string{Approve, Reject, Unblock, Retry} {
		err := workflow.SetUpdateHandlerWithOptions(ctx, kind,
			func(ctx workflow.Context, d Decision) (DecisionResult, error) {
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
				if err := workflow.Await(ctx, func() bool { return w.state.Step != StepLoading || w.ending }); err != nil {
					return
				}
				if err := w.valid(kind); err != nil {
					w.log.Warn("signal ignored", "signal", kind, "reason", err.Error())
					continue
				}
				w.accept(kind, d)
			}
		})
	}
	if w.v.overdueAttribute {
		overdue := workflow.GetSignalChannel(ctx, Overdue)
		workflow.Go(ctx, func(ctx workflow.Context) {
			overdue.Receive(ctx, nil)
			w.log.Info("objective overdue")
			if err := workflow.UpsertTypedSearchAttributes(ctx, AttrOverdue.ValueSet(true)); err != nil {
				w.log.Warn("upsert search attributes", "error", err)
			}
			// The attribute is set: repeats (a later deadline) change nothing.
			for {
				overdue.Receive(ctx, nil)
			}
		})
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
	case !slices.Contains([]string{StepAwaitingApproval, StepAwaitingRetry, StepAwaitingUnblock}, w.state.Step):
		return fmt.Errorf("objective %s is %s (%s): decisions are taken only while it waits for one", id, w.state.Status, w.state.Step)
	}
	t := transition.Name(kind)
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

func (w *objective) run(ctx workflow.Context, in ObjectiveInput) (State, error) {
	var view activities.ObjectiveView
	if err := w.load(ctx, &view); err != nil {
		return w.fail(ctx, err)
	}
	if view.LastPause != nil && w.state.LastPause == nil {
		w.state.LastPause = view.LastPause
	}
	attrs := []temporal.SearchAttributeUpdate{AttrObjectiveID.ValueSet(in.ObjectiveID)}
	if view.Found {
		attrs = append(attrs, AttrObjectiveType.ValueSet(view.ObjectiveType))
	}
	w.setStatus(ctx, view.Status, attrs...)

	pending, open, blockerRef := view.PendingEventID, view.OpenWorkOrder, view.BlockerRef
	// reload reads the objective again after a wake: the store may hold an
	// event or a status written there directly.
	reload := func() error {
		w.state.Step = StepLoading
		if err := w.load(ctx, &view); err != nil {
			return err
		}
		if view.LastPause != nil {
			w.state.LastPause = view.LastPause
		}
		w.setStatus(ctx, view.Status)
		pending, open, blockerRef = view.PendingEventID, view.OpenWorkOrder, view.BlockerRef
		w.log.Info("lifecycle woken: objective reloaded", "status", view.Status, "pending_event", view.PendingEventID)
		return nil
	}
	for {
		switch {
		case pending != "":
			res, err := w.schedule(ctx, pending)
			if err != nil {
				return w.fail(ctx, err)
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
				return w.complete(ctx)
			}
			if w.v.oneUpsertPerRun && view.Found && res.Status == store.StatusInProgress && res.WorkOrder != nil {
				// The workorder runs next, in this workflow task: its
				// upsert carries the status too.
				w.holdStatus(res.Status)
			} else {
				w.setStatus(ctx, res.Status)
			}

		case !view.Found:
			w.state.Step = StepMissing
			w.log.Warn("objective not found in the store; lifecycle ends")
			return w.complete(ctx)

		case w.state.Status == store.StatusInProgress && open != nil:
			g, err := w.runAndGate(ctx, *open)
			if err != nil {
				return w.fail(ctx, err)
			}
			open, blockerRef = nil, g.BlockerRef
			w.state.LastPause = &g.Pause
			attrs := []temporal.SearchAttributeUpdate{AttrGateResult.ValueSet(g.GateResult)}
			if w.v.provenanceAttrs && g.CommitSHA != "" {
				attrs = append(attrs, AttrCommitSHA.ValueSet(g.CommitSHA))
			}
			w.setStatus(ctx, g.Status, attrs...)

		case w.state.Status == store.StatusInProgress:
			return w.fail(ctx, fmt.Errorf("objective %s is IN_PROGRESS without an open workorder", in.ObjectiveID))

		case w.state.Status == store.StatusDone:
			w.state.Step = StepDone
			return w.complete(ctx)

		case transition.Approve.Allows(w.state.Status): // NEW: the human's turn
			if w.state.LastPause != nil && w.state.LastPause.Reason == store.PauseRejected {
				w.state.Step = StepRejected
				return w.complete(ctx)
			}
			d, err := w.await(ctx, StepAwaitingApproval)
			if err != nil {
				return w.fail(ctx, err)
			}
			if d == nil {
				if err := reload(); err != nil {
					return w.fail(ctx, err)
				}
				continue
			}
			if d.kind == Reject {
				var ps store.PauseState
				err := w.storeStep(ctx, act.Reject, activities.RejectInput{
					ObjectiveID: in.ObjectiveID, By: d.By, Comment: d.Comment}).Get(ctx, &ps)
				w.resolve(DecisionResult{Pause: &ps}, err)
				if err != nil {
					return w.fail(ctx, err)
				}
				w.state.LastPause, w.state.Step = &ps, StepRejected
				return w.complete(ctx)
			}
			w.log.Info("objective approved", "by", d.By, "comment", d.Comment)
			r, err := w.ready(ctx, activities.ReadyApprove, d)
			w.resolve(DecisionResult{EventID: r.EventID}, err)
			if err != nil {
				return w.fail(ctx, err)
			}
			pending = r.EventID

		case w.state.Status == store.StatusTodo && blockerRef == "":
			r, err := w.ready(ctx, activities.ReadyResume, nil)
			if err != nil {
				return w.fail(ctx, err)
			}
			pending = r.EventID

		default: // BLOCKED, or TODO after a failed gate
			step := StepAwaitingRetry
			if w.state.Status == store.StatusBlocked {
				step = StepAwaitingUnblock
			}
			d, err := w.await(ctx, step)
			if err != nil {
				return w.fail(ctx, err)
			}
			if d == nil {
				if err := reload(); err != nil {
					return w.fail(ctx, err)
				}
				continue
			}
			mode := activities.ReadyRetry
			if d.kind == Unblock {
				mode = activities.ReadyUnblock
			}
			w.log.Info("objective re-emitted", "decision", d.kind, "by", d.By, "comment", d.Comment)
			r, err := w.ready(ctx, mode, d)
			w.resolve(DecisionResult{EventID: r.EventID}, err)
			if err != nil {
				// The decision was refused (the objective changed under us):
				// keep waiting rather than end the lifecycle.
				w.log.Warn("re-emit failed", "error", err)
				continue
			}
			return w.snapshot(), w.continueAsNew(ctx, in)
		}
	}
}

// load runs the Load activity into view. Wakes received before it are
// answered by it, so they are consumed first.
func (w *objective) load(ctx workflow.Context, view *activities.ObjectiveView) error {
	if w.v.wakeReloads {
		for w.wake.ReceiveAsync(nil) {
		}
	}
	err := w.storeStep(ctx, act.Load, w.state.ObjectiveID).Get(ctx, view)
	if err == nil {
		w.leaseTTL = view.LeaseTTL
	}
	return err
}

// storeStep runs one of the short store steps (Load, Ready, Reject). Runs
// on the local-store-steps version run it as a local activity, within the
// workflow task that asked for it: no activity task to dispatch, and no
// workflow task to pick the result up. Its result is recorded as a marker,
// and a workflow task that fails after it runs it again, which these steps
// allow: Load only reads, Ready and Reject find their own earlier commit.
func (w *objective) storeStep(ctx workflow.Context, step, in any) workflow.Future {
	if w.v.localStoreSteps {
		return workflow.ExecuteLocalActivity(withLocalOptions(ctx), step, in)
	}
	return workflow.ExecuteActivity(withShortOptions(ctx), step, in)
}

// await waits in step for a human decision or, in runs that read wakes, a
// wake: then it returns a nil decision, and the caller reloads.
func (w *objective) await(ctx workflow.Context, step string) (*pendingDecision, error) {
	w.state.Step = step
	if err := workflow.Await(ctx, func() bool {
		return w.decision != nil || (w.v.wakeReloads && w.wake.Len() > 0)
	}); err != nil {
		return nil, err
	}
	return w.decision, nil
}

func (w *objective) ready(ctx workflow.Context, mode string, d *pendingDecision) (activities.ReadyResult, error) {
	w.state.Step = StepReadying
	in := activities.ReadyInput{ObjectiveID: w.state.ObjectiveID, Mode: mode}
	if d != nil {
		in.By, in.Comment = d.By, d.Comment
	}
	var r activities.ReadyResult
	err := w.storeStep(ctx, act.Ready, in).Get(ctx, &r)
	switch {
	case err != nil:
	case w.v.localSchedule:
		// Schedule follows in this workflow task: one upsert for both.
		w.holdStatus(r.Status)
	default:
		w.setStatus(ctx, r.Status)
	}
	return r, err
}

// schedule runs Schedule on the event. Runs on version 2 of
// local-store-steps try it as a local activity first, which schedules
// objectives that name no repository (a few store statements) and hands
// back the others untouched: reading a repository can take longer than a
// workflow task should wait, so they are scheduled by the activity, which
// heartbeats.
func (w *objective) schedule(ctx workflow.Context, eventID string) (activities.ScheduleResult, error) {
	w.state.Step = StepScheduling
	var res activities.ScheduleResult
	if w.v.localSchedule {
		err := workflow.ExecuteLocalActivity(withLocalOptions(ctx), act.Schedule,
			activities.ScheduleInput{EventID: eventID, Local: true}).Get(ctx, &res)
		if err != nil || !res.NeedsRepository {
			return res, err
		}
		res = activities.ScheduleResult{}
	}
	err := workflow.ExecuteActivity(withRepoOptions(ctx, w.leaseTTL), act.Schedule, activities.ScheduleInput{EventID: eventID}).Get(ctx, &res)
	return res, err
}

// runAndGate runs the workorder and gates it. A Run that fails for good is
// gated too: its failure becomes the FAIL verdict, so every workorder ends in
// a run record and a pause state.
func (w *objective) runAndGate(ctx workflow.Context, wo activities.WorkOrderRef) (activities.GateResult, error) {
	log := log.With(w.log, "work_order_id", wo.WorkOrderID)
	w.state.Step, w.state.CurrentWorkOrderID = StepRunning, wo.WorkOrderID
	if !slices.Contains(w.state.WorkOrderIDs, wo.WorkOrderID) {
		w.state.WorkOrderIDs = append(w.state.WorkOrderIDs, wo.WorkOrderID)
	}
	attrs := []temporal.SearchAttributeUpdate{AttrDiazotroph.ValueSet(wo.DiazotrophType)}
	if w.v.provenanceAttrs {
		attrs = append(attrs, AttrWorkOrderID.ValueSet(wo.WorkOrderID))
		if wo.BranchName != "" {
			attrs = append(attrs, AttrBranch.ValueSet(wo.BranchName))
		}
	}
	attrs = w.withHeldStatus(attrs)
	_ = workflow.UpsertTypedSearchAttributes(ctx, attrs...)
	log.Info("running workorder", "diazotroph", wo.DiazotrophType)

	in := activities.GateInput{WorkOrderID: wo.WorkOrderID}
	var run activities.RunResult
	if err := workflow.ExecuteActivity(withRunOptions(ctx, wo, w.leaseTTL), act.Run,
		activities.RunInput{WorkOrderID: wo.WorkOrderID}).Get(ctx, &run); err != nil {
		if isCancel(err) {
			return activities.GateResult{}, err
		}
		log.Warn("run failed; gating without a bundle", "error", err)
		in.RunFailure = rootMessage(err)
	}

	w.state.Step = StepGating
	var g activities.GateResult
	if err := workflow.ExecuteActivity(withRepoOptions(ctx, w.leaseTTL), act.Gate, in).Get(ctx, &g); err != nil {
		return g, err
	}
	w.state.GateResult, w.state.GateReason, w.state.CurrentWorkOrderID = g.GateResult, g.GateReason, ""
	log.Info("workorder gated", "gate_result", g.GateResult, "status", g.Status)
	return g, nil
}

// holdStatus records the objective's status and keeps its search
// attribute for the next upsert.
func (w *objective) holdStatus(status string) {
	if status != "" && status != w.state.Status {
		w.state.Status, w.statusHeld = status, true
	}
}

// withHeldStatus adds the status to attrs if it has not been upserted yet.
func (w *objective) withHeldStatus(attrs []temporal.SearchAttributeUpdate) []temporal.SearchAttributeUpdate {
	if w.statusHeld {
		attrs, w.statusHeld = append(attrs, AttrStatus.ValueSet(w.state.Status)), false
	}
	return attrs
}

// setStatus records the objective's status and upserts it (and attrs, and a
// held status) as search attributes, so the Web UI filters by it. With no
// status and no attrs it upserts a held status, if any.
func (w *objective) setStatus(ctx workflow.Context, status string, attrs ...temporal.SearchAttributeUpdate) {
	w.holdStatus(status)
	if attrs = w.withHeldStatus(attrs); len(attrs) == 0 {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, attrs...); err != nil {
		w.log.Warn("upsert search attributes", "error", err)
	}
}

// continueAsNew starts the next round once every update has been answered.
func (w *objective) continueAsNew(ctx workflow.Context, in ObjectiveInput) error {
	w.setStatus(ctx, "")
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

// complete ends the run with its state as the result, once every handler
// has finished.
func (w *objective) complete(ctx workflow.Context) (State, error) {
	w.setStatus(ctx, "")
	if err := w.finish(ctx, nil); err != nil {
		return w.snapshot(), err
	}
	return w.snapshot(), nil
}

// fail records the error in the state and fails the workflow with it, once
// every handler has finished.
func (w *objective) fail(ctx workflow.Context, err error) (State, error) {
	w.state.Error = rootMessage(err)
	w.setStatus(ctx, "")
	if ferr := w.finish(ctx, err); ferr != nil && !isCancel(ferr) {
		w.log.Warn("waiting for handlers before failing", "error", ferr)
	}
	return w.snapshot(), err
}

// finish lets the handlers finish before the run ends (in runs that do):
// a decision still pending is answered with cause, and handlers waiting to
// judge a decision are told the lifecycle ended.
func (w *objective) finish(ctx workflow.Context, cause error) error {
	if !w.v.finishHandlers {
		return nil
	}
	w.ending = true
	if w.decision != nil {
		if cause == nil {
			cause = fmt.Errorf("objective %s: the lifecycle ended (%s)", w.state.ObjectiveID, w.state.Step)
		}
		w.resolve(DecisionResult{}, cause)
	}
	return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
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
