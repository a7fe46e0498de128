package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// The poller's reads are keyset pages over partial indexes (migration 5):
// an objective handed over, or an event processed, drops out of its index,
// so a pass over a store where everything waits for a human reads nothing.

// MarkHandedOver sets handed_over_at once. It is not part of the objective
// record (no schema field, updated_at unchanged): it records what Temporal
// was told, not what the objective is.
func (q *querier) MarkHandedOver(ctx context.Context, p store.MarkHandedOverParams) error {
	return q.markHandedOver(ctx, "objectives", "objective_id", "objective", p.ObjectiveID, p.Now)
}

// ListObjectivesToHandOver pages through the objectives not handed over.
func (q *querier) ListObjectivesToHandOver(ctx context.Context, p store.PageParams) ([]*domain.Objective, error) {
	rows, err := q.query(ctx, `SELECT `+objectiveCols+` FROM objectives
		WHERE handed_over_at IS NULL AND (created_at, objective_id) > ($1, $2)
		ORDER BY created_at, objective_id LIMIT $3`, q.t(p.After.CreatedAt), p.After.ID, limit(p.Limit))
	out, err := collect(rows, err, scanObjective)
	if err != nil {
		return nil, fmt.Errorf("list objectives to hand over: %w", err)
	}
	return out, nil
}

// MarkEventHandedOver sets events.handed_over_at once; like the objective's
// mark it is not part of the event record.
func (q *querier) MarkEventHandedOver(ctx context.Context, p store.MarkEventHandedOverParams) error {
	return q.markHandedOver(ctx, "events", "event_id", "event", p.EventID, p.Now)
}

// markHandedOver sets handed_over_at once on the row of table whose idCol is
// id (table and idCol are constants, never input). A row marked already is
// no error; a missing one is.
func (q *querier) markHandedOver(ctx context.Context, table, idCol, kind, id string, now time.Time) error {
	res, err := q.exec(ctx, `UPDATE `+table+` SET handed_over_at = $1 WHERE `+idCol+` = $2 AND handed_over_at IS NULL`,
		q.t(store.NowOr(now)), id)
	if err != nil {
		return fmt.Errorf("mark %s %q handed over: %w", kind, id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return nil
	}
	// Marked already, or unknown: only the latter is an error.
	var one int
	if err := q.queryRow(ctx, `SELECT 1 FROM `+table+` WHERE `+idCol+` = $1`, id).Scan(&one); err != nil {
		return fmt.Errorf("mark %s handed over: %w", kind, notFound(err, kind, id))
	}
	return nil
}

// ListPendingEvents pages through unprocessed events; the processed = FALSE
// term is written as the partial index's predicate is, so both backends
// use it.
func (q *querier) ListPendingEvents(ctx context.Context, p store.PendingEventsParams) ([]*domain.PendingEvent, error) {
	rows, err := q.query(ctx, `SELECT `+prefixed("e.", eventCols)+`, o.handed_over_at IS NOT NULL,
		e.handed_over_at IS NOT NULL
		FROM events e LEFT JOIN objectives o ON o.objective_id = e.subject_id
		WHERE e.processed = FALSE AND ($1 = '' OR e.event_type = $1) AND (e.created_at, e.event_id) > ($2, $3)
		ORDER BY e.created_at, e.event_id LIMIT $4`, p.EventType, q.t(p.After.CreatedAt), p.After.ID, limit(p.Limit))
	out, err := collect(rows, err, func(r rowScanner) (*domain.PendingEvent, error) {
		var subjectHanded, handed bool
		e, err := scanEvent(scanWithTail{r, []any{&subjectHanded, &handed}})
		if err != nil {
			return nil, err
		}
		return &domain.PendingEvent{Event: e, SubjectHandedOver: subjectHanded, HandedOver: handed}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list pending events: %w", err)
	}
	return out, nil
}

// scanWithTail scans a row whose leading columns are one record's and whose
// last columns go to tail.
type scanWithTail struct {
	r    rowScanner
	tail []any
}

func (s scanWithTail) Scan(dest ...any) error { return s.r.Scan(append(dest, s.tail...)...) }

// prefixed qualifies each column of a column list with a table alias.
func prefixed(alias, cols string) string {
	var out []string
	for _, c := range strings.Split(cols, ",") {
		out = append(out, alias+strings.TrimSpace(c))
	}
	return strings.Join(out, ", ")
}

// placeholders returns "$first, $first+1, ..." for n values: the IN list of
// a query whose filter set has a caller-chosen size.
func placeholders(first, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = "$" + strconv.Itoa(first+i)
	}
	return strings.Join(out, ", ")
}
