package workflows

import (
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// holdStatus records the objective's status and keeps its search
// attribute for the next upsert.
func (w *objective) holdStatus(status domain.Status) {
	if status != "" && status != w.state.Status {
		w.state.Status, w.statusHeld = status, true
	}
}

// withHeldStatus adds the status to attrs if it has not been upserted yet.
func (w *objective) withHeldStatus(attrs []temporal.SearchAttributeUpdate) []temporal.SearchAttributeUpdate {
	if w.statusHeld {
		attrs, w.statusHeld = append(attrs, AttrStatus.ValueSet(string(w.state.Status))), false
	}
	return attrs
}

// setStatus records the objective's status and upserts it (and attrs, and a
// held status) as search attributes, so the Web UI filters by it. With no
// status and no attrs it upserts a held status, if any.
func (w *objective) setStatus(ctx workflow.Context, status domain.Status, attrs ...temporal.SearchAttributeUpdate) {
	w.holdStatus(status)
	if attrs = w.withHeldStatus(attrs); len(attrs) == 0 {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, attrs...); err != nil {
		w.log.Warn("upsert search attributes", "error", err)
	}
}

// continueAsNew starts the next round once every update has been answered.
func (w *objective) continueAsNew(ctx workflow.Context, in ObjectiveInput, round int) error {
	w.setStatus(ctx, "")
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	ids := w.state.WorkOrderIDs
	if len(ids) > maxCarried {
		ids = ids[len(ids)-maxCarried:]
	}
	return workflow.NewContinueAsNewError(ctx, ObjectiveWorkflow, ObjectiveInput{ObjectiveID: in.ObjectiveID,
		Round: round, WorkOrderIDs: ids, LastPause: w.state.LastPause})
}

// complete ends the run with its state as the result, once every handler
// has finished. The lifecycle is over: it is overdue no more.
func (w *objective) complete(ctx workflow.Context) (State, error) {
	var attrs []temporal.SearchAttributeUpdate
	if overdue, _ := workflow.GetTypedSearchAttributes(ctx).GetBool(AttrOverdue); overdue && w.v.overdueCleared {
		attrs = append(attrs, AttrOverdue.ValueSet(false))
	}
	w.setStatus(ctx, "", attrs...)
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
