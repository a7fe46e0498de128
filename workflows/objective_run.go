package workflows

import (
	"fmt"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/lifecycle/transition"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// next is what the run does after a phase.
type next int

const (
	again    next = iota // look at the objective again
	complete             // the lifecycle is over: complete the run
	newRound             // a retry or unblock was taken: continue as new
	refresh              // a long wait: continue as new in the same round
)

// run takes the objective through its phases until the lifecycle ends or
// a new round begins. Each turn asks the objective what it needs: its
// pending event scheduled, its open workorder run and gated, a human's
// approval, a resume, or a human's retry or unblock.
func (w *objective) run(ctx workflow.Context, in ObjectiveInput) (State, error) {
	if err := w.begin(ctx, in); err != nil {
		return w.fail(ctx, err)
	}
	for {
		n, err := w.turn(ctx)
		switch {
		case err != nil:
			return w.fail(ctx, err)
		case n == complete:
			return w.complete(ctx)
		case n == newRound:
			return w.snapshot(), w.continueAsNew(ctx, in, in.Round+1)
		case n == refresh:
			return w.snapshot(), w.continueAsNew(ctx, in, in.Round)
		}
	}
}

// begin loads the objective and upserts what the Web UI filters by.
func (w *objective) begin(ctx workflow.Context, in ObjectiveInput) error {
	if err := w.load(ctx, &w.view); err != nil {
		return err
	}
	if w.view.LastPause != nil && w.state.LastPause == nil {
		w.state.LastPause = w.view.LastPause
	}
	attrs := []temporal.SearchAttributeUpdate{AttrObjectiveID.ValueSet(in.ObjectiveID)}
	if w.view.Found {
		attrs = append(attrs, AttrObjectiveType.ValueSet(w.view.ObjectiveType))
	}
	w.setStatus(ctx, w.view.Status, attrs...)
	w.pending, w.open, w.blockerRef = w.view.PendingEventID, w.view.OpenWorkOrder, w.view.BlockerRef
	if w.view.PullRequest != "" {
		w.state.PullRequest, w.prOpen = w.view.PullRequest, true
	}
	return nil
}

// turn runs the one phase the objective is in.
func (w *objective) turn(ctx workflow.Context) (next, error) {
	switch status := w.state.Status; {
	case w.pending != "":
		return w.scheduleEvent(ctx)
	case !w.view.Found:
		w.state.Step = StepMissing
		w.log.Warn("objective not found in the store; lifecycle ends")
		return complete, nil
	case status == domain.StatusInProgress && w.open != nil:
		return w.runRound(ctx)
	case status == domain.StatusInProgress:
		return again, fmt.Errorf("objective %s is IN_PROGRESS without an open workorder", w.state.ObjectiveID)
	case status == domain.StatusDone && w.prOpen:
		return w.awaitReview(ctx)
	case status == domain.StatusDone:
		w.state.Step = StepDone
		return complete, nil
	case transition.Approve.Allows(status): // NEW: the human's turn
		return w.awaitApproval(ctx)
	case status == domain.StatusTodo && w.blockerRef == "":
		return w.resume(ctx)
	default: // BLOCKED, or TODO after a failed gate
		return w.awaitRetryOrUnblock(ctx)
	}
}

// reload reads the objective again after a wake: the store may hold an
// event or a status written there directly.
func (w *objective) reload(ctx workflow.Context) (next, error) {
	w.state.Step = StepLoading
	if err := w.load(ctx, &w.view); err != nil {
		return again, err
	}
	if w.view.LastPause != nil {
		w.state.LastPause = w.view.LastPause
	}
	w.setStatus(ctx, w.view.Status)
	w.pending, w.open, w.blockerRef = w.view.PendingEventID, w.view.OpenWorkOrder, w.view.BlockerRef
	w.log.Info("lifecycle woken: objective reloaded", "status", w.view.Status, "pending_event", w.view.PendingEventID)
	return again, nil
}

// scheduleEvent schedules the pending event into a workorder (or records
// why it could not).
func (w *objective) scheduleEvent(ctx workflow.Context) (next, error) {
	res, err := w.schedule(ctx, w.pending)
	if err != nil {
		return again, err
	}
	// Only SCHEDULED names a workorder: a stale event's other outcome
	// must not drop the open workorder Load found.
	w.pending = ""
	if res.WorkOrder != nil {
		w.open = res.WorkOrder
	}
	if res.Pause != nil {
		w.state.LastPause = res.Pause
	}
	if res.Status == "" {
		w.state.Step = StepMissing
		return complete, nil
	}
	if w.v.oneUpsertPerRun && w.view.Found && res.Status == domain.StatusInProgress && res.WorkOrder != nil {
		// The workorder runs next, in this workflow task: its upsert
		// carries the status too.
		w.holdStatus(res.Status)
	} else {
		w.setStatus(ctx, res.Status)
	}
	return again, nil
}

// runRound runs the open workorder and gates it.
func (w *objective) runRound(ctx workflow.Context) (next, error) {
	wo := *w.open
	g, err := w.runAndGate(ctx, wo)
	if err != nil {
		return again, err
	}
	w.open, w.blockerRef = nil, g.BlockerRef
	w.state.LastPause = &g.Pause
	attrs := []temporal.SearchAttributeUpdate{AttrGateResult.ValueSet(g.GateResult)}
	if w.v.provenanceAttrs && g.CommitSHA != "" {
		attrs = append(attrs, AttrCommitSHA.ValueSet(g.CommitSHA))
	}
	w.setStatus(ctx, g.Status, attrs...)
	if g.PullRequest {
		w.openPullRequest(ctx, wo.WorkOrderID)
	}
	return again, nil
}

// awaitApproval waits for a NEW objective's approval or rejection; an
// objective already rejected has nothing to wait for.
func (w *objective) awaitApproval(ctx workflow.Context) (next, error) {
	if pause.WasRejected([]*domain.PauseState{w.state.LastPause}) {
		w.state.Step = StepRejected
		return complete, nil
	}
	d, err := w.await(ctx, StepAwaitingApproval)
	if err != nil {
		return again, err
	}
	if d == nil {
		return w.reload(ctx)
	}
	if d.kind == Reject {
		var ps domain.PauseState
		err := w.storeStep(ctx, steps.Reject, activities.RejectInput{
			ObjectiveID: w.state.ObjectiveID, By: d.By, Comment: d.Comment}).Get(ctx, &ps)
		w.resolve(DecisionResult{Pause: &ps}, err)
		if err != nil {
			return again, err
		}
		w.state.LastPause, w.state.Step = &ps, StepRejected
		return complete, nil
	}
	w.log.Info("objective approved", "by", d.By, "comment", d.Comment)
	r, err := w.ready(ctx, activities.ReadyApprove, d)
	w.resolve(DecisionResult{EventID: r.EventID}, err)
	if err != nil {
		return again, err
	}
	w.pending = r.EventID
	return again, nil
}

// resume makes a TODO objective without a blocker ready again.
func (w *objective) resume(ctx workflow.Context) (next, error) {
	r, err := w.ready(ctx, activities.ReadyResume, nil)
	if err != nil {
		return again, err
	}
	w.pending = r.EventID
	return again, nil
}

// awaitRetryOrUnblock waits for a human to retry a failed gate or unblock
// a BLOCKED objective, then begins a new round.
func (w *objective) awaitRetryOrUnblock(ctx workflow.Context) (next, error) {
	step := StepAwaitingRetry
	switch {
	case w.state.Status == domain.StatusBlocked:
		step = StepAwaitingUnblock
	case w.state.LastPause != nil && w.state.LastPause.Reason == domain.PauseQuestion:
		step = StepAwaitingAnswer
	}
	d, err := w.await(ctx, step)
	if err != nil {
		return again, err
	}
	if d == nil {
		return w.reload(ctx)
	}
	mode := activities.ReadyRetry
	if d.kind == Unblock {
		mode = activities.ReadyUnblock
	}
	w.log.Info("objective re-emitted", "decision", d.kind, "by", d.By, "comment", d.Comment)
	r, err := w.ready(ctx, mode, d)
	w.resolve(DecisionResult{EventID: r.EventID}, err)
	if err != nil {
		// The decision was refused (the objective changed under us): keep
		// waiting rather than end the lifecycle.
		w.log.Warn("re-emit failed", "error", err)
		return again, nil
	}
	return newRound, nil
}
