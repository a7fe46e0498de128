package sqlstore

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

const eventCols = `event_id, event_type, subject_id, transition_seq, processed, processed_reason, processed_at,
	decided_by, comment, scope, created_at, fresh`

func scanEvent(r rowScanner) (*domain.Event, error) {
	var e domain.Event
	err := r.Scan(&e.EventID, &e.EventType, &e.SubjectID, &e.TransitionSeq, &e.Processed,
		nullStringCol(&e.ProcessedReason), nullTimeCol(&e.ProcessedAt), nullStringCol(&e.DecidedBy), nullStringCol(&e.Comment),
		nullStringCol(&e.Scope), timeCol(&e.CreatedAt), &e.Fresh)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// EmitEvent inserts e unless its transition already has an event. The unique
// key (event_type, subject_id, transition_seq) is what makes a second emission
// for the same transition impossible, whatever the callers do.
func (q *querier) EmitEvent(ctx context.Context, e *domain.Event) (*domain.Event, bool, error) {
	e.CreatedAt = store.NowOr(e.CreatedAt)
	if err := schemas.Validate(schemas.Event, e); err != nil {
		return nil, false, fmt.Errorf("emit event: %w", err)
	}
	return insertOrGet(q, fmt.Sprintf("emit event %q", e.EventID), func() (*domain.Event, error) {
		return scanEvent(q.queryRow(ctx, `INSERT INTO events (`+eventCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (event_type, subject_id, transition_seq) DO NOTHING
			RETURNING `+eventCols,
			e.EventID, e.EventType, e.SubjectID, e.TransitionSeq, e.Processed,
			nullString(e.ProcessedReason), q.nt(e.ProcessedAt), nullString(e.DecidedBy), nullString(e.Comment),
			nullString(e.Scope), q.t(e.CreatedAt), e.Fresh))
	}, func() (*domain.Event, error) {
		return scanEvent(q.queryRow(ctx, `SELECT `+eventCols+` FROM events
			WHERE event_type = $1 AND subject_id = $2 AND transition_seq = $3`, e.EventType, e.SubjectID, e.TransitionSeq))
	})
}

// GetEvent loads one event.
func (q *querier) GetEvent(ctx context.Context, id string) (*domain.Event, error) {
	e, err := scanEvent(q.queryRow(ctx, `SELECT `+eventCols+` FROM events WHERE event_id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("get event: %w", notFound(err, "event", id))
	}
	return e, nil
}

// ListUnprocessedEvents lists unprocessed events, oldest first.
func (q *querier) ListUnprocessedEvents(ctx context.Context, p store.ListEventsParams) ([]*domain.Event, error) {
	return q.listEvents(ctx, p, true)
}

// ListEvents lists events, oldest first.
func (q *querier) ListEvents(ctx context.Context, p store.ListEventsParams) ([]*domain.Event, error) {
	return q.listEvents(ctx, p, false)
}

func (q *querier) listEvents(ctx context.Context, p store.ListEventsParams, unprocessedOnly bool) ([]*domain.Event, error) {
	var f filters
	f.eq("event_type", string(p.EventType))
	f.eq("subject_id", p.SubjectID)
	if unprocessedOnly {
		f.where("processed = FALSE")
	}
	rows, err := q.query(ctx, `SELECT `+eventCols+` FROM events`+f.clause()+`
		ORDER BY created_at, event_id LIMIT `+f.arg(limit(p.Limit)), f.args...)
	out, err := collect(rows, err, scanEvent)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}

// MarkEventProcessed sets the terminal reason once; the WHERE processed =
// FALSE guard makes a second call change nothing.
func (q *querier) MarkEventProcessed(ctx context.Context, p store.MarkEventProcessedParams) (*domain.Event, error) {
	cur, err := q.GetEvent(ctx, p.EventID)
	if err != nil {
		return nil, fmt.Errorf("mark event processed: %w", err)
	}
	if cur.Processed {
		return cur, fmt.Errorf("mark event %q processed as %s: %w (reason %s)", p.EventID, p.Reason, domain.ErrAlreadyProcessed, cur.ProcessedReason)
	}
	next := *cur
	now := store.NowOr(p.Now)
	next.Processed, next.ProcessedReason, next.ProcessedAt = true, p.Reason, &now
	if err := schemas.Validate(schemas.Event, &next); err != nil {
		return nil, fmt.Errorf("mark event processed: %w", err)
	}
	res, err := q.exec(ctx, `UPDATE events SET processed = TRUE, processed_reason = $1, processed_at = $2
		WHERE event_id = $3 AND processed = FALSE`, p.Reason, q.t(now), p.EventID)
	if err != nil {
		return nil, fmt.Errorf("mark event %q processed: %w", p.EventID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return nil, fmt.Errorf("mark event %q processed: %w", p.EventID, domain.ErrAlreadyProcessed)
	}
	return &next, nil
}
