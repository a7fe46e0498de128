package sqlstore

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// objective_ids is NULL until the capture is processed, then a JSON array
// ([] when it became no objective).
const captureCols = `capture_buffer_id, source, content, status, work_order_id, objective_ids, created_at, updated_at`

func scanCapture(r rowScanner) (*domain.CaptureBuffer, error) {
	var c domain.CaptureBuffer
	if err := r.Scan(&c.CaptureBufferID, &c.Source, &c.Content, &c.Status, nullStringCol(&c.WorkOrderID),
		jsonCol(&c.ObjectiveIDs), timeCol(&c.CreatedAt), timeCol(&c.UpdatedAt)); err != nil {
		return nil, err
	}
	return &c, nil
}

// CreateCaptureBuffer records a raw capture.
func (q *querier) CreateCaptureBuffer(ctx context.Context, c *domain.CaptureBuffer) error {
	c.CreatedAt = store.NowOr(c.CreatedAt)
	c.UpdatedAt = store.NowOr(c.UpdatedAt)
	if err := schemas.Validate(schemas.CaptureBuffer, c); err != nil {
		return fmt.Errorf("create capture buffer: %w", err)
	}
	var ids any // NULL when the writer named no objective_ids
	if c.ObjectiveIDs != nil {
		var err error
		if ids, err = jsonText(c.ObjectiveIDs); err != nil {
			return err
		}
	}
	_, err := q.exec(ctx, `INSERT INTO capture_buffers (`+captureCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.CaptureBufferID, c.Source, c.Content, c.Status, nullString(c.WorkOrderID), ids, q.t(c.CreatedAt), q.t(c.UpdatedAt))
	if q.d.IsUniqueViolation(err) {
		return fmt.Errorf("create capture buffer %q: %w", c.CaptureBufferID, domain.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create capture buffer %q: %w", c.CaptureBufferID, err)
	}
	return nil
}

// GetCaptureBuffer loads one capture.
func (q *querier) GetCaptureBuffer(ctx context.Context, id string) (*domain.CaptureBuffer, error) {
	c, err := scanCapture(q.queryRow(ctx, `SELECT `+captureCols+` FROM capture_buffers WHERE capture_buffer_id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("get capture buffer: %w", notFound(err, "capture buffer", id))
	}
	return c, nil
}

// ListCaptureBuffers lists captures, oldest first.
func (q *querier) ListCaptureBuffers(ctx context.Context, p store.ListCaptureBuffersParams) ([]*domain.CaptureBuffer, error) {
	var f filters
	f.eq("status", string(p.Status))
	rows, err := q.query(ctx, `SELECT `+captureCols+` FROM capture_buffers`+f.clause()+`
		ORDER BY created_at, capture_buffer_id LIMIT `+f.arg(limit(p.Limit)), f.args...)
	out, err := collect(rows, err, scanCapture)
	if err != nil {
		return nil, fmt.Errorf("list capture buffers: %w", err)
	}
	return out, nil
}

// ListCapturesWithoutEvent pages through the PENDING captures no
// CAPTURE_READY event names yet: the index on (status, created_at) finds
// the PENDING ones and the events' unique key answers the NOT EXISTS.
func (q *querier) ListCapturesWithoutEvent(ctx context.Context, p store.PageParams) ([]*domain.CaptureBuffer, error) {
	rows, err := q.query(ctx, `SELECT `+prefixed("c.", captureCols)+` FROM capture_buffers c
		WHERE c.status = $1 AND (c.created_at, c.capture_buffer_id) > ($2, $3)
		AND NOT EXISTS (SELECT 1 FROM events e WHERE e.event_type = $4 AND e.subject_id = c.capture_buffer_id)
		ORDER BY c.created_at, c.capture_buffer_id LIMIT $5`,
		domain.CapturePending, q.t(p.After.CreatedAt), p.After.ID, domain.EventCaptureReady, limit(p.Limit))
	out, err := collect(rows, err, scanCapture)
	if err != nil {
		return nil, fmt.Errorf("list captures without event: %w", err)
	}
	return out, nil
}
