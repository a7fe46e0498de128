package bridge

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/maintenance"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/starter"
)

// DefaultBatchSize bounds each of the poller's store reads.
const DefaultBatchSize = 200

// Store is what the poller reads and marks in the store: the unprocessed
// events and the objectives not handed over (marked once they are), the
// captures without their CAPTURE_READY event (emitted for them), and an
// objective's pause states (was it rejected?).
type Store interface {
	store.ObjectiveQuerier
	store.EventQuerier
	store.CaptureQuerier
	store.PauseQuerier
}

// Lifecycles is the one thing the poller asks Temporal itself: what runs
// for an objective. Starting and waking lifecycles, and asking their state,
// go through the Starter.
type Lifecycles interface {
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
}

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
	Store    Store
	Claims   *claim.Bridge
	Client   Lifecycles
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
