package bridge

import (
	"cmp"
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

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
