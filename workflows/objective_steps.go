package workflows

import (
	"slices"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// load runs the Load activity into view. Wakes received before it are
// answered by it, so they are consumed first.
func (w *objective) load(ctx workflow.Context, view *activities.ObjectiveView) error {
	if w.v.wakeReloads {
		for w.wake.ReceiveAsync(nil) {
		}
	}
	err := w.storeStep(ctx, steps.Load, w.state.ObjectiveID).Get(ctx, view)
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
		in.By, in.Comment, in.Fresh, in.Answer = d.By, d.Comment, d.Fresh, d.Answer
	}
	var r activities.ReadyResult
	err := w.storeStep(ctx, steps.Ready, in).Get(ctx, &r)
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
		err := workflow.ExecuteLocalActivity(withLocalOptions(ctx), steps.Schedule,
			activities.ScheduleInput{EventID: eventID, Local: true}).Get(ctx, &res)
		if err != nil || !res.NeedsRepository {
			return res, err
		}
		res = activities.ScheduleResult{}
	}
	err := workflow.ExecuteActivity(withRepoOptions(ctx, w.leaseTTL), steps.Schedule, activities.ScheduleInput{EventID: eventID}).Get(ctx, &res)
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
	var err error
	if v := w.bestOfN(ctx, wo); v != workflow.DefaultVersion {
		run, err = w.runCandidates(ctx, wo, v)
	} else {
		rctx := w.onRunQueue(withRunOptions(ctx, wo, w.leaseTTL, runAllowance(ctx, wo)), wo)
		rin := activities.RunInput{WorkOrderID: wo.WorkOrderID, Queue: *w.runSlots >= runSlotsQueue}
		err = w.slotted(ctx, wo.WorkOrderID, func(g *slots.Grant) (bool, error) {
			rin.Slot, run = g, activities.RunResult{}
			err := workflow.ExecuteActivity(rctx, steps.Run, rin).Get(ctx, &run)
			return run.SlotBusy, err
		})
	}
	if err != nil {
		if isCancel(err) {
			return activities.GateResult{}, err
		}
		log.Warn("run failed; gating without a bundle", "error", err)
		in.RunFailure = rootMessage(err)
	}

	w.state.Step = StepGating
	g, err := w.gate(ctx, wo, in)
	if err != nil {
		return g, err
	}
	w.state.GateResult, w.state.GateReason, w.state.CurrentWorkOrderID = g.GateResult, g.GateReason, ""
	log.Info("workorder gated", "gate_result", g.GateResult, "status", g.Status)
	return g, nil
}

// gate gates wo's run. A gate that runs no gate commands is a light step,
// on the lifecycle's task queue (runSlotsLightGate) and, from
// runSlotsLocalGate on, tried first as a local activity: one store
// transaction, with no activity task to dispatch and no workflow task to
// pick its result up. A workorder it hands back (its diazotroph checks
// its work itself) is gated by the activity.
func (w *objective) gate(ctx workflow.Context, wo activities.WorkOrderRef, in activities.GateInput) (activities.GateResult, error) {
	var g activities.GateResult
	light := w.slotsVersion(ctx) >= runSlotsLightGate && !wo.GateCommands
	if light && w.slotsVersion(ctx) >= runSlotsLocalGate {
		local := in
		local.Local = true
		err := workflow.ExecuteLocalActivity(withLocalOptions(ctx), steps.Gate, local).Get(ctx, &g)
		if err != nil || !g.NeedsRepository {
			return g, err
		}
		g = activities.GateResult{}
	}
	gctx := withRepoOptions(ctx, w.leaseTTL)
	if !light {
		gctx = w.onRunQueue(gctx, wo)
	}
	err := workflow.ExecuteActivity(gctx, steps.Gate, in).Get(ctx, &g)
	return g, err
}

// slotsVersion is the version of changeRunSlots this run goes by, asked
// once, before its first heavy step.
func (w *objective) slotsVersion(ctx workflow.Context) workflow.Version {
	if w.runSlots == nil {
		v := workflow.GetVersion(ctx, changeRunSlots, workflow.DefaultVersion, runSlotsLocalGate)
		w.runSlots = &v
	}
	return *w.runSlots
}

// onRunQueue puts the heavy step ctx schedules for wo on the run task
// queue, from changeRunSlots on: each worker takes at most worker.max_runs
// of those at once, and the light steps keep the lifecycle's queue to
// themselves. From its version 2 the step's priority is wo's urgency and
// its fairness key wo's repository (Priority).
func (w *objective) onRunQueue(ctx workflow.Context, wo activities.WorkOrderRef) workflow.Context {
	if w.slotsVersion(ctx) == workflow.DefaultVersion {
		return ctx
	}
	ao := workflow.GetActivityOptions(ctx)
	ao.TaskQueue = RunTaskQueue(workflow.GetInfo(ctx).TaskQueueName)
	if *w.runSlots >= runSlotsPriority {
		ao.Priority = Priority(wo.Urgency, wo.Repository)
	}
	return workflow.WithActivityOptions(ctx, ao)
}
