package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/slots"
)

// SlotInput asks for the run slots of one run (docs/production.md#limits):
// the workorder's, or one of its candidates' (Holder <work_order_id>-c<k>).
type SlotInput struct {
	WorkOrderID string
	Holder      string
	// Since is when the run first found its slots taken: its place among
	// runs of the same urgency.
	Since time.Time
}

// RunSlots holds the step that queues a run for its slots under the
// limits (docs/production.md#limits).
type RunSlots struct {
	Base
	Store interface {
		slotStore
		GetWorkOrder(ctx context.Context, workOrderID string) (*domain.WorkOrder, error)
	}
	// Slots gives the slots out; nil: no limit, every run goes at once.
	Slots *slots.Slots
}

// AwaitRunSlot queues a run for the slots its repository's and the
// deployment's limits give out, and returns them once it holds them, for
// the run to take over (RunInput.Slot). It waits on the lifecycle's own
// task queue, holding no worker's run slot, and heartbeats how many runs
// wait ahead of it. With no limit (any more) it returns at once, empty.
func (a *RunSlots) AwaitRunSlot(ctx context.Context, in SlotInput) (slots.Grant, error) {
	w, err := a.Store.GetWorkOrder(ctx, in.WorkOrderID)
	if err != nil {
		return slots.Grant{}, permanent(fmt.Errorf("await a run slot for %q: %w", in.WorkOrderID, err))
	}
	r, err := slotRequest(ctx, a.Store, w, in.Holder)
	if err != nil || !a.Slots.Limited(r.Repository) {
		return slots.Grant{}, err
	}
	r.Since = in.Since
	held, err := a.Slots.Wait(ctx, r, heartbeatAhead(ctx))
	if err != nil {
		return slots.Grant{}, fmt.Errorf("await a run slot for %s: %w", in.Holder, err)
	}
	logger(ctx, w.ObjectiveID, w.WorkOrderID).Info("run slot granted", "holder", in.Holder)
	return held.Grant(), nil
}

// heartbeatAhead heartbeats, while a run waits for its slot, how many
// runs wait ahead of it.
func heartbeatAhead(ctx context.Context) func(ahead int) {
	return func(ahead int) {
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, ahead)
		}
	}
}

// slotStore is what a run's slot request reads: its objective and the
// event that put it to work.
type slotStore interface {
	GetObjective(ctx context.Context, objectiveID string) (*domain.Objective, error)
	GetEvent(ctx context.Context, eventID string) (*domain.Event, error)
}

// slotRequest is the request of holder, a run of workorder w: its
// objective's repository and urgency, and who approved it, when known.
func slotRequest(ctx context.Context, st slotStore, w *domain.WorkOrder, holder string) (slots.Request, error) {
	o, err := st.GetObjective(ctx, w.ObjectiveID)
	if err != nil {
		return slots.Request{}, fmt.Errorf("run slot of %s: %w", holder, err)
	}
	r := slots.Request{Holder: holder, Repository: o.Repository, Urgency: o.Urgency}
	if w.EventID != "" {
		if ev, err := st.GetEvent(ctx, w.EventID); err == nil {
			r.Person = ev.DecidedBy
		}
	}
	return r, nil
}

// slotHold is the slots one run holds: given up when the run ends
// (done), or handed to the remote job the run enqueues (handOver), which
// holds them from then on (slots.KeepFor).
type slotHold struct {
	held *slots.Held
	stop func()
	ctx  context.Context
}

// done gives the slots up, unless they were handed over.
func (h *slotHold) done() {
	if h == nil {
		return
	}
	h.stop()
	h.held.Release(context.WithoutCancel(h.ctx))
}

// handOver stops renewing the slots and names them, for the job that is
// to hold them; disown then leaves them to it.
func (h *slotHold) handOver() []domain.SlotRef {
	if h == nil {
		return nil
	}
	h.stop()
	return h.held.Refs()
}

// keptBy leaves the handed-over slots to j, the job enqueued with them,
// so done gives nothing up; unless j is settled (it holds nothing), or
// another enqueue's job without slots, enqueued before they were
// limited (it keeps going without them, and the slots go back).
func (h *slotHold) keptBy(j *domain.Job) {
	if h != nil && !domain.JobSettled(j.Status) && len(j.RunSlots) > 0 {
		h.held.Disown()
	}
}

// runSlot holds a run's slots for its length: those granted (by
// AwaitRunSlot) if they still hold, or free ones taken now. busy says none
// are free: a lifecycle that queues (queue) waits for them with
// AwaitRunSlot and runs again; one recorded before the queue existed
// waits here, heartbeating. With no limit it holds nothing (a nil hold).
// The context returned ends the moment a slot is lost; the hold's done
// gives them up.
func runSlot(ctx context.Context, sl *slots.Slots, st slotStore, w *domain.WorkOrder, holder string,
	grant *slots.Grant, queue bool) (sctx context.Context, hold *slotHold, busy bool, err error) {
	if sl == nil {
		return ctx, nil, false, nil
	}
	r, err := slotRequest(ctx, st, w, holder)
	if err != nil || !sl.Limited(r.Repository) {
		return ctx, nil, false, err
	}
	var held *slots.Held
	ok := false
	if grant != nil && len(grant.Claims) > 0 {
		if held, ok, err = sl.Adopt(ctx, *grant); err != nil {
			return ctx, nil, false, err
		}
	}
	if !ok {
		if held, ok, err = sl.Try(ctx, r); err != nil {
			return ctx, nil, false, err
		}
	}
	if !ok && queue {
		return ctx, nil, true, nil
	}
	if !ok {
		r.Since = time.Now()
		if activity.IsActivity(ctx) {
			r.Since = activity.GetInfo(ctx).ScheduledTime
		}
		if held, err = sl.Wait(ctx, r, heartbeatAhead(ctx)); err != nil {
			return ctx, nil, false, fmt.Errorf("await a run slot for %s: %w", holder, err)
		}
	}
	sctx, stop := held.Keep(ctx, claim.KeepOptions{})
	return sctx, &slotHold{held: held, stop: stop, ctx: ctx}, false, nil
}
