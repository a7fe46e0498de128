package sqlstore

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// A capture's way through triage: PENDING and untaken, PENDING and taken by
// one triage workorder (work_order_id), PROCESSED by that workorder's gate
// (objective_ids). Each step is a compare-and-swap on the row, so two
// workorders cannot both take a capture, whatever their callers do.

// ListUntakenCaptures lists PENDING captures no workorder took, oldest
// first; the predicate is the capture_buffers_untaken index's (migration 7)
// written out, so SQLite uses it.
func (q *querier) ListUntakenCaptures(ctx context.Context, n int) ([]*domain.CaptureBuffer, error) {
	rows, err := q.query(ctx, `SELECT `+captureCols+` FROM capture_buffers
		WHERE status = 'PENDING' AND work_order_id IS NULL
		ORDER BY created_at, capture_buffer_id LIMIT $1`, limit(n))
	out, err := collect(rows, err, scanCapture)
	if err != nil {
		return nil, fmt.Errorf("list untaken captures: %w", err)
	}
	return out, nil
}

// TakeCaptures checks every capture before it writes any, then takes each
// with a guarded UPDATE; a capture another workorder took in between makes
// the whole call roll back (atomically), so it takes all or none.
func (q *querier) TakeCaptures(ctx context.Context, p store.TakeCapturesParams) error {
	now := store.NowOr(p.Now)
	return q.atomically(ctx, func(q *querier) error {
		var take []*domain.CaptureBuffer
		for _, id := range p.CaptureBufferIDs {
			cur, err := q.GetCaptureBuffer(ctx, id)
			if err != nil {
				return fmt.Errorf("take captures for workorder %q: %w", p.WorkOrderID, err)
			}
			if cur.Status != domain.CapturePending || (cur.WorkOrderID != "" && cur.WorkOrderID != p.WorkOrderID) {
				return takeRefused(cur, p.WorkOrderID)
			}
			if cur.WorkOrderID == "" {
				take = append(take, cur)
			}
		}
		for _, cur := range take {
			if err := q.takeCapture(ctx, cur, p.WorkOrderID, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// takeCapture sets work_order_id on one untaken capture.
func (q *querier) takeCapture(ctx context.Context, cur *domain.CaptureBuffer, workOrderID string, now Time) error {
	next := *cur
	next.WorkOrderID, next.UpdatedAt = workOrderID, now
	if err := schemas.Validate(schemas.CaptureBuffer, &next); err != nil {
		return fmt.Errorf("take capture %q: %w", cur.CaptureBufferID, err)
	}
	res, err := q.exec(ctx, `UPDATE capture_buffers SET work_order_id = $1, updated_at = $2
		WHERE capture_buffer_id = $3 AND status = $4 AND (work_order_id IS NULL OR work_order_id = $1)`,
		workOrderID, q.t(now), cur.CaptureBufferID, domain.CapturePending)
	if err != nil {
		return fmt.Errorf("take capture %q for workorder %q: %w", cur.CaptureBufferID, workOrderID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		// Taken or processed between our read and write.
		now, gerr := q.GetCaptureBuffer(ctx, cur.CaptureBufferID)
		if gerr != nil {
			return fmt.Errorf("take capture: %w", gerr)
		}
		return takeRefused(now, workOrderID)
	}
	return nil
}

// takeRefused is the error of a capture workOrderID may not take.
func takeRefused(c *domain.CaptureBuffer, workOrderID string) error {
	return &domain.TransitionError{Kind: "capture", ObjectiveID: c.CaptureBufferID, Current: captureState(c),
		From: []string{"PENDING untaken", "PENDING taken by " + workOrderID}, To: "taken by " + workOrderID}
}

// captureState describes where a capture is on its way through triage.
func captureState(c *domain.CaptureBuffer) string {
	if c.WorkOrderID == "" {
		return c.Status + " untaken"
	}
	return c.Status + " taken by " + c.WorkOrderID
}

// ProcessCapture moves a capture taken by p.WorkOrderID to PROCESSED; a
// second call by the same workorder returns the stored capture unchanged.
func (q *querier) ProcessCapture(ctx context.Context, p store.ProcessCaptureParams) (*domain.CaptureBuffer, error) {
	cur, err := q.GetCaptureBuffer(ctx, p.CaptureBufferID)
	if err != nil {
		return nil, fmt.Errorf("process capture: %w", err)
	}
	if cur.WorkOrderID != p.WorkOrderID || cur.WorkOrderID == "" {
		return nil, processRefused(cur, p.WorkOrderID)
	}
	if cur.Status == domain.CaptureProcessed {
		return cur, nil
	}
	next := *cur
	next.Status, next.ObjectiveIDs, next.UpdatedAt = domain.CaptureProcessed, emptyIfNil(p.ObjectiveIDs), store.NowOr(p.Now)
	if err := schemas.Validate(schemas.CaptureBuffer, &next); err != nil {
		return nil, fmt.Errorf("process capture: %w", err)
	}
	ids, err := jsonText(next.ObjectiveIDs)
	if err != nil {
		return nil, err
	}
	res, err := q.exec(ctx, `UPDATE capture_buffers SET status = $1, objective_ids = $2, updated_at = $3
		WHERE capture_buffer_id = $4 AND status = $5 AND work_order_id = $6`,
		domain.CaptureProcessed, ids, q.t(next.UpdatedAt), p.CaptureBufferID, domain.CapturePending, p.WorkOrderID)
	if err != nil {
		return nil, fmt.Errorf("process capture %q for workorder %q: %w", p.CaptureBufferID, p.WorkOrderID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		// Processed by a concurrent call of the same gate: still a no-op.
		now, gerr := q.GetCaptureBuffer(ctx, p.CaptureBufferID)
		if gerr != nil {
			return nil, fmt.Errorf("process capture: %w", gerr)
		}
		if now.Status == domain.CaptureProcessed && now.WorkOrderID == p.WorkOrderID {
			return now, nil
		}
		return nil, processRefused(now, p.WorkOrderID)
	}
	return &next, nil
}

// processRefused is the error of a capture workOrderID may not process.
func processRefused(c *domain.CaptureBuffer, workOrderID string) error {
	return &domain.TransitionError{Kind: "capture", ObjectiveID: c.CaptureBufferID, Current: captureState(c),
		From: []string{"PENDING taken by " + workOrderID}, To: domain.CaptureProcessed}
}
