package workers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/maintenance"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// DefaultBatchSize bounds each of the poller's store reads.
const DefaultBatchSize = 200

// Poller hands the store's waiting work to Temporal: store first, Temporal
// second. It finds work that has no running lifecycle (objectives and
// unprocessed TICKET_READY events written while Temporal was unreachable,
// or straight into the database) and starts or wakes their lifecycles with
// SignalWithStart, which never runs two lifecycles of one objective at
// once. It holds an event's claim while it hands the event over.
//
// One instance per store is active: the one holding the POLLER claim on
// store.PollerLeadership, renewed at the start of every pass and kept
// during it. The others stand by, trying to acquire it each Interval, and
// take over once the leader's lease lapses (or at once when it stops and
// releases it). A leader whose lease was taken over finds out when its
// renewal fails, and stands by.
//
// An objective is looked at in Temporal once: after its lifecycle is
// started or found (or the objective is found to need none) it is marked
// handed over in the store, and from then on only its events bring it
// back. The Starter marks the objectives it starts, so the objectives
// created through azolla cost the poller nothing at all; an idle pass is
// two empty index reads (and three for the task tracks: the captures, and
// the pending events of each track type), whatever number of objectives
// wait.
//
// An unprocessed event of an objective handed over is usually its
// lifecycle's own, about to be scheduled, and is left alone. One still
// unprocessed after a whole LeaseTTL was written behind the lifecycle's
// back (straight into the database): if the lifecycle waits for a human
// the poller wakes it, and it reads the store again.
//
// A lifecycle that failed, was terminated or timed out is left alone: that
// is a human's call (azolla objective resume). A rejected objective, and a
// DONE one with no pending event, have nothing to run.
//
// Captures: every PENDING capture gets exactly one CAPTURE_READY event. The
// CLI emits it with the capture; for a capture written straight into the
// database the poller does, in a last keyset pass over the PENDING
// captures no event names yet. The events' unique key makes the emission
// safe against any other emitter, so it needs no claim; a capture with its
// event drops out of that read, and is never looked at again.
//
// A failure on one item is logged with its ids and counted, and the pass
// goes on; the item is tried again by the next pass.
type Poller struct {
	Store    store.Store
	Claims   *claim.Bridge
	Client   client.Client
	Starter  *starter.Starter
	Interval time.Duration
	// LeaseTTL is the leadership lease, the lease on an event being handed
	// over, and how long an event may sit unprocessed before its waiting
	// lifecycle is woken for it.
	LeaseTTL time.Duration
	OwnerID  string
	Log      *slog.Logger
	// Track names the task-management track that CAPTURE_READY and
	// MANIFEST_REQUESTED events are handed to; "" means
	// workflows.DefaultTrack.
	Track string
	// BatchSize bounds each store read; zero means DefaultBatchSize.
	BatchSize int
	// Now is the clock events are judged stale by; nil means time.Now.
	// The leases take their time from Claims.
	Now func() time.Time

	loopOnce sync.Once
	loop     *maintenance.Loop[Counts]
}

// Counts says what one pass did.
type Counts struct {
	Leader  bool // this instance held the leadership; a standby does nothing else
	Batches int  // pages read from the store
	Started int  // lifecycles started for work that had none running
	Woken   int  // waiting lifecycles woken for an event written behind their back
	Marked  int  // objectives found with a lifecycle, or needing none, and marked handed over
	Skipped int  // items left as they are: a lifecycle's own event, a busy or stopped lifecycle
	Claimed int  // events skipped because another owner held their claim
	Failed  int  // items whose handling failed: logged, and tried again next pass
	// Captures counts the CAPTURE_READY events this pass emitted. The pages
	// of that read are not in Batches, which counts the lifecycle's reads.
	Captures int
	// Enqueued counts the track events this pass handed to the track.
	Enqueued int
}

// background is the poller as a background service, led through the
// POLLER claim.
func (p *Poller) background() *maintenance.Loop[Counts] {
	p.loopOnce.Do(func() {
		p.loop = &maintenance.Loop[Counts]{Name: "poller", Interval: p.Interval, Pass: p.pass, Log: p.Log,
			Leadership: &maintenance.Leadership{Name: "poller", Claims: p.Claims, ResourceType: domain.ResourcePoller,
				ResourceID: domain.PollerLeadership, Owner: p.OwnerID, TTL: p.LeaseTTL, Log: p.Log},
			Passed: func(c Counts, led bool, err error) {
				if led && err == nil {
					p.Log.Debug("poller pass", "batches", c.Batches, "started", c.Started, "woken", c.Woken,
						"marked", c.Marked, "skipped", c.Skipped, "claimed", c.Claimed, "failed", c.Failed,
						"captures", c.Captures, "enqueued", c.Enqueued)
				}
			}}
	})
	return p.loop
}

// Start runs a pass now and then every Interval in the background, until
// Stop or ctx is done.
func (p *Poller) Start(ctx context.Context) { p.background().Start(ctx) }

// Stop ends polling, waits for the pass in flight and gives the leadership
// up, so a standby takes over at its next pass instead of a lease later.
func (p *Poller) Stop() { p.background().Stop() }

// RunOnce is one pass, if this instance leads; see pass. Only a failed
// store read, or the leadership lost mid-pass, ends a pass early with an
// error.
func (p *Poller) RunOnce(ctx context.Context) (Counts, error) {
	c, led, err := p.background().RunOnce(ctx)
	c.Leader = led
	return c, err
}

// pass is one pass of the leader: events first (oldest first), then the
// objectives not handed over, then the captures without their
// CAPTURE_READY event, then the track's events.
func (p *Poller) pass(ctx context.Context) (Counts, error) {
	var c Counts
	seen := map[string]bool{}
	if err := p.passEvents(ctx, &c, seen); err != nil {
		return c, err
	}
	if err := p.passObjectives(ctx, &c, seen); err != nil {
		return c, err
	}
	if err := p.passCaptures(ctx, &c); err != nil {
		return c, err
	}
	return c, p.passTrack(ctx, &c)
}

func (p *Poller) batch() int {
	if p.BatchSize > 0 {
		return p.BatchSize
	}
	return DefaultBatchSize
}

func (p *Poller) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// passEvents pages through the unprocessed TICKET_READY events.
func (p *Poller) passEvents(ctx context.Context, c *Counts, seen map[string]bool) error {
	var after domain.Cursor
	for {
		page, err := p.Store.ListPendingEvents(ctx, store.PendingEventsParams{EventType: domain.EventTicketReady,
			After: after, Limit: p.batch()})
		if err != nil {
			return fmt.Errorf("list pending events: %w", err)
		}
		c.Batches++
		for _, pe := range page {
			after = domain.Cursor{CreatedAt: pe.CreatedAt, ID: pe.EventID}
			if seen[pe.SubjectID] {
				c.Skipped++
				continue
			}
			seen[pe.SubjectID] = true
			if err := p.handEvent(ctx, pe, c); err != nil {
				if ctx.Err() != nil {
					return err
				}
				c.Failed++
				p.Log.Warn("poller could not hand an event over", "event_id", pe.EventID,
					"objective_id", pe.SubjectID, "error", err)
			}
		}
		if len(page) < p.batch() {
			return nil
		}
	}
}

// passObjectives pages through the objectives not handed over.
func (p *Poller) passObjectives(ctx context.Context, c *Counts, seen map[string]bool) error {
	var after domain.Cursor
	for {
		page, err := p.Store.ListObjectivesToHandOver(ctx, store.PageParams{After: after, Limit: p.batch()})
		if err != nil {
			return fmt.Errorf("list objectives to hand over: %w", err)
		}
		c.Batches++
		for _, o := range page {
			after = domain.Cursor{CreatedAt: o.CreatedAt, ID: o.ObjectiveID}
			if seen[o.ObjectiveID] {
				c.Skipped++
				continue
			}
			if err := p.handObjective(ctx, o, c); err != nil {
				if ctx.Err() != nil {
					return err
				}
				c.Failed++
				p.Log.Warn("poller could not hand an objective over", "objective_id", o.ObjectiveID, "error", err)
			}
		}
		if len(page) < p.batch() {
			return nil
		}
	}
}

// passCaptures emits the CAPTURE_READY event of every PENDING capture that
// has none. Handing the event to the track is the scheduler's business.
func (p *Poller) passCaptures(ctx context.Context, c *Counts) error {
	var after domain.Cursor
	for {
		page, err := p.Store.ListCapturesWithoutEvent(ctx, store.PageParams{After: after, Limit: p.batch()})
		if err != nil {
			return fmt.Errorf("list captures without event: %w", err)
		}
		for _, cb := range page {
			after = domain.Cursor{CreatedAt: cb.CreatedAt, ID: cb.CaptureBufferID}
			ev, created, err := store.EmitCaptureReady(ctx, p.Store, cb.CaptureBufferID, p.now())
			switch {
			case err != nil:
				if ctx.Err() != nil {
					return err
				}
				c.Failed++
				p.Log.Warn("poller could not emit a capture's CAPTURE_READY event", "capture_buffer_id",
					cb.CaptureBufferID, "error", err)
			case created:
				c.Captures++
				p.Log.Info("poller emitted CAPTURE_READY for a capture written straight into the database",
					"capture_buffer_id", cb.CaptureBufferID, "event_id", ev.EventID)
			default:
				c.Skipped++ // emitted meanwhile by the CLI or another pass
			}
		}
		if len(page) < p.batch() {
			return nil
		}
	}
}

// passTrack hands the track events (CAPTURE_READY, MANIFEST_REQUESTED)
// nobody handed over to the track: events written while Temporal was
// unreachable, or straight into the database. An event the track was
// given but has not processed for a lease is handed again: the track takes
// a duplicate as a no-op, and one lost with a terminated track is not lost
// for good.
func (p *Poller) passTrack(ctx context.Context, c *Counts) error {
	track := cmp.Or(p.Track, workflows.DefaultTrack)
	for _, typ := range domain.TrackEventTypes() {
		if err := p.passTrackEvents(ctx, c, track, typ); err != nil {
			return err
		}
	}
	return nil
}

// passTrackEvents pages through the unprocessed events of type typ, handing
// each that needs it to track.
func (p *Poller) passTrackEvents(ctx context.Context, c *Counts, track, typ string) error {
	var after domain.Cursor
	for {
		page, err := p.Store.ListPendingEvents(ctx, store.PendingEventsParams{EventType: typ, After: after,
			Limit: p.batch()})
		if err != nil {
			return fmt.Errorf("list pending %s events: %w", typ, err)
		}
		for _, pe := range page {
			after = domain.Cursor{CreatedAt: pe.CreatedAt, ID: pe.EventID}
			if pe.HandedOver && !pe.CreatedAt.Before(p.now().Add(-p.LeaseTTL)) {
				c.Skipped++
				continue
			}
			if _, err := p.Starter.Enqueue(ctx, track, pe.Event); err != nil {
				if ctx.Err() != nil {
					return err
				}
				c.Failed++
				p.Log.Warn("poller could not hand an event to the track", "event_id", pe.EventID,
					"track", track, "error", err)
				continue
			}
			c.Enqueued++
		}
		if len(page) < p.batch() {
			return nil
		}
	}
}

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
	case workflows.StepAwaitingApproval, workflows.StepAwaitingRetry, workflows.StepAwaitingUnblock:
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
