package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// ReleaseCaptures is the way back from "PENDING and taken" to "PENDING and
// untaken", for the captures of a triage round whose gate failed. Each is a
// guarded UPDATE on (status, work_order_id), so only the workorder that
// holds a capture can release it, a PROCESSED capture never moves, and a
// repeated call finds nothing left to release. The new CAPTURE_READY event
// is what wakes the track: the capture's earlier events are processed (or
// will be, ALREADY_TAKEN or scheduling a round that takes it), and the
// poller hands every unprocessed track event over.
func (q *querier) ReleaseCaptures(ctx context.Context, p store.ReleaseCapturesParams) ([]*domain.Event, error) {
	if p.WorkOrderID == "" {
		return nil, errors.New("release captures: no workorder named")
	}
	now := store.NowOr(p.Now)
	var out []*domain.Event
	err := q.atomically(ctx, func(q *querier) error {
		out = nil
		for _, id := range p.CaptureBufferIDs {
			ev, err := q.releaseCapture(ctx, id, p.WorkOrderID, now)
			if err != nil {
				return fmt.Errorf("release capture %q of workorder %q: %w", id, p.WorkOrderID, err)
			}
			if ev != nil {
				out = append(out, ev)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// releaseCapture releases one capture and emits its next CAPTURE_READY
// event; nil when workOrderID does not hold it PENDING.
func (q *querier) releaseCapture(ctx context.Context, id, workOrderID string, now Time) (*domain.Event, error) {
	res, err := q.exec(ctx, `UPDATE capture_buffers SET work_order_id = NULL, updated_at = $1
		WHERE capture_buffer_id = $2 AND status = $3 AND work_order_id = $4`,
		q.t(now), id, domain.CapturePending, workOrderID)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return nil, err
	}
	// The events' unique key (event_type, subject_id, transition_seq)
	// answers this from its index.
	var seq int64
	if err := q.queryRow(ctx, `SELECT COALESCE(MAX(transition_seq) + 1, 0) FROM events
		WHERE event_type = $1 AND subject_id = $2`, domain.EventCaptureReady, id).Scan(&seq); err != nil {
		return nil, err
	}
	ev, _, err := store.EmitCaptureReadyAt(ctx, q, id, seq, now)
	return ev, err
}
