package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/lifecycle/slots"
)

// slotWaitTimeout bounds one AwaitRunSlot attempt; a run still queued then
// queues again, in the same place (its SlotInput.Since).
const slotWaitTimeout = 24 * time.Hour

// slotted runs a heavy step, run, until it is not turned away for want of
// a run slot (version runSlotsQueue): each time it is, the lifecycle
// queues for one (AwaitRunSlot) and runs again with the slot granted.
// holder names the run among the queue's (its workorder or candidate).
func (w *objective) slotted(ctx workflow.Context, holder string, run func(*slots.Grant) (bool, error)) error {
	var grant *slots.Grant
	var since time.Time
	for {
		busy, err := run(grant)
		if err != nil || !busy {
			return err
		}
		if since.IsZero() {
			since = workflow.Now(ctx)
		}
		g, err := w.awaitSlot(ctx, activities.SlotInput{WorkOrderID: w.state.CurrentWorkOrderID, Holder: holder, Since: since})
		if err != nil {
			return err
		}
		grant = &g
	}
}

// awaitSlot queues for a run slot on the lifecycle's task queue, where
// waiting holds no worker's run slot, with the lifecycle flagged
// AzollaQueued and at step awaiting_run_slot meanwhile.
func (w *objective) awaitSlot(ctx workflow.Context, in activities.SlotInput) (slots.Grant, error) {
	lease := w.leaseTTL
	if lease <= 0 {
		lease = time.Minute
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: slotWaitTimeout, HeartbeatTimeout: lease,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: lease, NonRetryableErrorTypes: nonRetryable},
	})
	if w.slotWaits++; w.slotWaits == 1 {
		w.state.Step = StepAwaitingRunSlot
		_ = workflow.UpsertTypedSearchAttributes(ctx, AttrQueued.ValueSet(true))
	}
	var g slots.Grant
	err := workflow.ExecuteActivity(actx, runSlots.AwaitRunSlot, in).Get(ctx, &g)
	if w.slotWaits--; w.slotWaits == 0 {
		if w.state.Step == StepAwaitingRunSlot {
			w.state.Step = StepRunning
		}
		_ = workflow.UpsertTypedSearchAttributes(ctx, AttrQueued.ValueSet(false))
	}
	return g, err
}
