package bridge

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// handEvent starts or wakes the lifecycle of an event's objective, holding
// the event's claim meanwhile.
func (p *Poller) handEvent(ctx context.Context, pe *domain.PendingEvent, c *Counts) error {
	ev := pe.Event
	stale := ev.CreatedAt.Before(p.now().Add(-p.LeaseTTL))
	if pe.SubjectHandedOver && !stale {
		c.Skipped++
		return nil
	}
	lc, err := p.lifecycle(ctx, ev.SubjectID)
	if err != nil {
		return err
	}
	if lc == lifecycleRunning || lc == lifecycleStopped {
		if !pe.SubjectHandedOver {
			if err := p.mark(ctx, ev.SubjectID); err != nil && !errors.Is(err, domain.ErrNotFound) {
				return err
			}
		}
		if lc == lifecycleStopped || !stale {
			c.Skipped++
			return nil
		}
		waiting, err := p.waitsForHuman(ctx, ev.SubjectID)
		if err != nil {
			return err
		}
		if !waiting {
			c.Skipped++
			return nil
		}
	}
	lease, ok, err := p.Claims.Acquire(ctx, domain.ResourceEvent, ev.EventID, p.OwnerID, p.LeaseTTL)
	if err != nil {
		return fmt.Errorf("claim event %s: %w", ev.EventID, err)
	}
	if !ok {
		c.Claimed++
		return nil
	}
	defer func() {
		// Released even when the pass is cut short: the hand-over is done
		// or abandoned either way.
		if err := lease.Release(context.WithoutCancel(ctx)); err != nil {
			p.Log.Warn("release event claim", "event_id", ev.EventID, "error", err)
		}
	}()
	// Nothing processes the event while its claim is held: if it was
	// processed since the page was read, its lifecycle ran and there is
	// nothing to hand over.
	if cur, err := p.Store.GetEvent(ctx, ev.EventID); err != nil {
		return err
	} else if cur.Processed {
		c.Skipped++
		return nil
	}
	o := &domain.Objective{ObjectiveID: ev.SubjectID}
	if stored, err := p.Store.GetObjective(ctx, ev.SubjectID); err == nil {
		o = stored
	} else if !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	if err := p.Starter.Start(ctx, o); err != nil {
		return err
	}
	if lc == lifecycleRunning {
		c.Woken++
		p.Log.Info("poller woke a lifecycle for an event written behind its back", "event_id", ev.EventID,
			"objective_id", ev.SubjectID)
		return nil
	}
	c.Started++
	p.Log.Info("poller handed an event to a new lifecycle", "event_id", ev.EventID, "objective_id", ev.SubjectID)
	return nil
}

// handObjective hands an objective not marked handed over to Temporal,
// once: it finds its lifecycle, or starts one if it needs one, and marks it.
func (p *Poller) handObjective(ctx context.Context, o *domain.Objective, c *Counts) error {
	lc, err := p.lifecycle(ctx, o.ObjectiveID)
	if err != nil {
		return err
	}
	if lc == lifecycleRunning || lc == lifecycleStopped {
		if err := p.mark(ctx, o.ObjectiveID); err != nil {
			return err
		}
		c.Marked++
		return nil
	}
	// None runs. The objective is read again after that answer: a lifecycle
	// that closed wrote its last status (DONE, a rejection) before it
	// closed, so this read sees it, and a finished objective is not given
	// a second lifecycle.
	cur, err := p.Store.GetObjective(ctx, o.ObjectiveID)
	if err != nil {
		return err
	}
	ended, err := p.finished(ctx, cur)
	if err != nil {
		return err
	}
	if ended {
		if err := p.mark(ctx, o.ObjectiveID); err != nil {
			return err
		}
		c.Marked++
		return nil
	}
	if lc == lifecycleAbsent {
		// If one starts and closes between the look and this start, it
		// starts nothing: the next pass sees the closed one.
		err = p.Starter.StartFirst(ctx, cur)
	} else {
		err = p.Starter.Start(ctx, cur)
	}
	if errors.Is(err, starter.ErrLifecycleEnded) {
		c.Skipped++
		return nil
	}
	if err != nil {
		return err
	}
	c.Started++
	p.Log.Info("poller started a lifecycle", "objective_id", o.ObjectiveID, "status", cur.Status)
	return nil
}

func (p *Poller) mark(ctx context.Context, objectiveID string) error {
	return p.Store.MarkHandedOver(ctx, store.MarkHandedOverParams{ObjectiveID: objectiveID, Now: p.now()})
}

// waitsForHuman reports whether the objective's running lifecycle waits for
// a human: only then does a wake have anything to do (a busy lifecycle
// reads the store when it next waits, and every wake is a history event).
func (p *Poller) waitsForHuman(ctx context.Context, objectiveID string) (bool, error) {
	s, err := p.Starter.State(ctx, objectiveID)
	if err != nil {
		return false, err
	}
	switch s.Step {
	case workflows.StepAwaitingApproval, workflows.StepAwaitingRetry, workflows.StepAwaitingAnswer, workflows.StepAwaitingUnblock:
		return true, nil
	}
	return false, nil
}

// What the poller finds of an objective's lifecycle.
const (
	lifecycleAbsent  = iota // none ever ran
	lifecycleEnded          // the last one completed
	lifecycleRunning        // running: wake it if the store has news for it
	lifecycleStopped        // failed, terminated, cancelled or timed out: a human's call
)

// lifecycle says what runs for the objective.
func (p *Poller) lifecycle(ctx context.Context, objectiveID string) (int, error) {
	resp, err := p.Client.DescribeWorkflowExecution(ctx, workflows.ObjectiveWorkflowID(objectiveID), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return lifecycleAbsent, nil
	}
	if err != nil {
		return 0, fmt.Errorf("describe lifecycle of %s: %w", objectiveID, err)
	}
	switch resp.GetWorkflowExecutionInfo().GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return lifecycleEnded, nil
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return lifecycleRunning, nil
	}
	return lifecycleStopped, nil
}

// finished reports whether the objective has nothing left to run: DONE, or
// rejected by a human.
func (p *Poller) finished(ctx context.Context, o *domain.Objective) (bool, error) {
	if o.Status == domain.StatusDone {
		return true, nil
	}
	pauses, err := p.Store.ListPauseStates(ctx, o.ObjectiveID)
	if err != nil {
		return false, fmt.Errorf("list pause states of %s: %w", o.ObjectiveID, err)
	}
	return pause.WasRejected(pauses), nil
}
