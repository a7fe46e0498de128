package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/claim"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// Bridge is the polling bridge: store first, Temporal second. It polls the
// store the seeds' way for work that has no running lifecycle (objectives
// and unprocessed TICKET_READY events written while Temporal was unreachable,
// or straight into the database) and starts or wakes their lifecycles with
// SignalWithStart, which never runs two lifecycles of one objective. It
// holds the event's claim while it hands an event over.
//
// An unprocessed event whose lifecycle runs is usually that lifecycle's own,
// about to be scheduled; one still unprocessed after a whole lease was
// written behind its back (straight into the database), so the bridge wakes
// the lifecycle, which reads the store again.
//
// A lifecycle that failed, was terminated or timed out is left alone: that
// is a human's call (azolla objective resume). A rejected objective, and a
// DONE one with no pending event, have nothing to run.
type Bridge struct {
	Store    store.Store
	Claims   *claim.Bridge
	Client   client.Client
	Starter  *starter.Starter
	Interval time.Duration
	LeaseTTL time.Duration
	OwnerID  string
	Log      *slog.Logger

	stop func()
	done chan struct{}
	once sync.Once
}

// Stats counts what one pass did.
type Stats struct {
	Started int // lifecycles started, or woken for an event they did not handle
	Skipped int // candidates with a running (or deliberately stopped) lifecycle
	Claimed int // events skipped because another owner held their claim
}

// Start polls every Interval in the background until Stop or ctx is done.
func (b *Bridge) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	b.stop, b.done = cancel, make(chan struct{})
	go func() {
		defer close(b.done)
		t := time.NewTicker(b.Interval)
		defer t.Stop()
		for {
			if _, err := b.RunOnce(ctx); err != nil && ctx.Err() == nil {
				b.Log.Warn("polling bridge pass failed", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends polling and waits for the pass in flight.
func (b *Bridge) Stop() {
	b.once.Do(func() {
		if b.stop != nil {
			b.stop()
			<-b.done
		}
	})
}

// RunOnce is one pass: events first (oldest first), then objectives.
func (b *Bridge) RunOnce(ctx context.Context) (Stats, error) {
	var st Stats
	seen := map[string]bool{}
	events, err := b.Store.ListUnprocessedEvents(ctx, store.ListEventsParams{EventType: store.EventTicketReady})
	if err != nil {
		return st, fmt.Errorf("list unprocessed events: %w", err)
	}
	for _, ev := range events {
		if seen[ev.SubjectID] {
			continue
		}
		seen[ev.SubjectID] = true
		if err := b.handEvent(ctx, ev, &st); err != nil {
			return st, err
		}
	}

	objectives, err := b.Store.ListObjectives(ctx, store.ListObjectivesParams{})
	if err != nil {
		return st, fmt.Errorf("list objectives: %w", err)
	}
	for _, o := range objectives {
		if seen[o.ObjectiveID] || o.Status == store.StatusDone {
			continue
		}
		if rejected, err := b.rejected(ctx, o.ObjectiveID); err != nil || rejected {
			if err != nil {
				return st, err
			}
			continue
		}
		lc, err := b.lifecycle(ctx, o.ObjectiveID)
		if err != nil {
			return st, err
		}
		if lc != lifecycleAbsent {
			st.Skipped++
			continue
		}
		if err := b.Starter.Start(ctx, o); err != nil {
			return st, err
		}
		b.Log.Info("polling bridge started lifecycle", "objective", o.ObjectiveID, "status", o.Status)
		st.Started++
	}
	return st, nil
}

// handEvent starts or wakes the lifecycle of an event's objective, holding
// the event's claim meanwhile.
func (b *Bridge) handEvent(ctx context.Context, ev *store.Event, st *Stats) error {
	lc, err := b.lifecycle(ctx, ev.SubjectID)
	if err != nil {
		return err
	}
	if lc == lifecycleStopped {
		st.Skipped++
		return nil
	}
	if lc == lifecycleRunning {
		waiting, err := b.waitingOnStaleEvent(ctx, ev)
		if err != nil {
			return err
		}
		if !waiting {
			st.Skipped++
			return nil
		}
	}
	lease, ok, err := b.Claims.Acquire(ctx, store.ResourceEvent, ev.EventID, b.OwnerID, b.LeaseTTL)
	if err != nil {
		return fmt.Errorf("claim event %s: %w", ev.EventID, err)
	}
	if !ok {
		st.Claimed++
		return nil
	}
	o := &store.Objective{ObjectiveID: ev.SubjectID}
	if stored, err := b.Store.GetObjective(ctx, ev.SubjectID); err == nil {
		o = stored
	}
	err = b.Starter.Start(ctx, o)
	if rerr := lease.Release(ctx); rerr != nil {
		b.Log.Warn("release event claim", "event", ev.EventID, "error", rerr)
	}
	if err != nil {
		return err
	}
	b.Log.Info("polling bridge handed event to lifecycle", "event", ev.EventID, "objective", ev.SubjectID)
	st.Started++
	return nil
}

// waitingOnStaleEvent reports whether a running lifecycle waits for a human
// while ev, older than a lease, sits unprocessed: only then does a wake have
// anything to do (a busy lifecycle reads the store when it next waits, and
// every wake is a history event).
func (b *Bridge) waitingOnStaleEvent(ctx context.Context, ev *store.Event) (bool, error) {
	if !ev.CreatedAt.Before(time.Now().Add(-b.LeaseTTL)) {
		return false, nil
	}
	s, err := b.Starter.State(ctx, ev.SubjectID)
	if err != nil {
		return false, fmt.Errorf("query lifecycle of %s: %w", ev.SubjectID, err)
	}
	switch s.Step {
	case workflows.StepAwaitingApproval, workflows.StepAwaitingRetry, workflows.StepAwaitingUnblock:
		return true, nil
	}
	return false, nil
}

// What the bridge finds of an objective's lifecycle.
const (
	lifecycleAbsent  = iota // none ever ran, or the last one completed: start one
	lifecycleRunning        // running: wake it if the store has news for it
	lifecycleStopped        // failed, terminated, cancelled or timed out: a human's call
)

// lifecycle says what runs for the objective.
func (b *Bridge) lifecycle(ctx context.Context, objectiveID string) (int, error) {
	resp, err := b.Client.DescribeWorkflowExecution(ctx, workflows.ObjectiveWorkflowID(objectiveID), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return lifecycleAbsent, nil
	}
	if err != nil {
		return 0, fmt.Errorf("describe lifecycle of %s: %w", objectiveID, err)
	}
	switch resp.GetWorkflowExecutionInfo().GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return lifecycleAbsent, nil
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return lifecycleRunning, nil
	}
	return lifecycleStopped, nil
}

// rejected reports whether a human rejected the objective.
func (b *Bridge) rejected(ctx context.Context, objectiveID string) (bool, error) {
	pauses, err := b.Store.ListPauseStates(ctx, objectiveID)
	if err != nil {
		return false, fmt.Errorf("list pause states of %s: %w", objectiveID, err)
	}
	return len(pauses) > 0 && pauses[len(pauses)-1].Reason == store.PauseRejected, nil
}
