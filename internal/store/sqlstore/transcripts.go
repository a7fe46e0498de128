package sqlstore

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

const transcriptCols = `work_order_id, gzip, bytes, original_bytes, truncated, created_at`

// transcriptListCols are transcriptCols with an empty text: a listing
// reads no transcript's content.
const transcriptListCols = `work_order_id, '', bytes, original_bytes, truncated, created_at`

func scanTranscript(r rowScanner) (*domain.Transcript, error) {
	var t domain.Transcript
	var gz []byte
	err := r.Scan(&t.WorkOrderID, &gz, &t.Bytes, &t.OriginalBytes, &t.Truncated, timeCol(&t.CreatedAt))
	if err != nil {
		return nil, err
	}
	if len(gz) > 0 {
		t.Gzip = gz
	}
	return &t, nil
}

// PutTranscript writes the workorder's transcript, keyed by work_order_id:
// a second write replaces the first, never adds a row.
func (q *querier) PutTranscript(ctx context.Context, t *domain.Transcript) (*domain.Transcript, error) {
	t.CreatedAt = store.NowOr(t.CreatedAt)
	if err := t.Check(); err != nil {
		return nil, fmt.Errorf("put transcript: %w", err)
	}
	stored, err := scanTranscript(q.queryRow(ctx, `INSERT INTO transcripts (`+transcriptCols+`)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (work_order_id) DO UPDATE SET gzip = excluded.gzip, bytes = excluded.bytes,
			original_bytes = excluded.original_bytes, truncated = excluded.truncated, created_at = excluded.created_at
		RETURNING `+transcriptCols,
		t.WorkOrderID, t.Gzip, t.Bytes, t.OriginalBytes, t.Truncated, q.t(t.CreatedAt)))
	if err != nil {
		return nil, fmt.Errorf("put transcript of %q: %w", t.WorkOrderID, err)
	}
	return stored, nil
}

// GetTranscript loads a workorder's transcript.
func (q *querier) GetTranscript(ctx context.Context, workOrderID string) (*domain.Transcript, error) {
	t, err := scanTranscript(q.queryRow(ctx, `SELECT `+transcriptCols+` FROM transcripts WHERE work_order_id = $1`,
		workOrderID))
	if err != nil {
		return nil, fmt.Errorf("get transcript: %w", notFound(err, "transcript of workorder", workOrderID))
	}
	return t, nil
}

// ListTranscripts pages through transcripts by (created_at, work_order_id).
func (q *querier) ListTranscripts(ctx context.Context, p store.PageParams) ([]*domain.Transcript, error) {
	rows, err := q.query(ctx, `SELECT `+transcriptListCols+` FROM transcripts
		WHERE (created_at, work_order_id) > ($1, $2)
		ORDER BY created_at, work_order_id LIMIT $3`, q.t(p.After.CreatedAt), p.After.ID, limit(p.Limit))
	out, err := collect(rows, err, scanTranscript)
	if err != nil {
		return nil, fmt.Errorf("list transcripts: %w", err)
	}
	return out, nil
}

// DeleteTranscript removes a workorder's transcript.
func (q *querier) DeleteTranscript(ctx context.Context, workOrderID string) (bool, error) {
	res, err := q.exec(ctx, `DELETE FROM transcripts WHERE work_order_id = $1`, workOrderID)
	if err != nil {
		return false, fmt.Errorf("delete transcript of %q: %w", workOrderID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("delete transcript of %q: %w", workOrderID, err)
	}
	return n > 0, nil
}

// createBundleWithTranscript writes the bundle b (its transcript reduced to
// the reference) and, when the bundle is new, the transcript it carried, in
// one atomic step: a bundle that existed already keeps the transcript
// written with it.
func (q *querier) createBundleWithTranscript(ctx context.Context, b *domain.OutputBundle, tr *domain.Transcript,
	create func(q *querier, ctx context.Context, b *domain.OutputBundle) (*domain.OutputBundle, bool, error),
) (*domain.OutputBundle, bool, error) {
	var stored *domain.OutputBundle
	var created bool
	err := q.atomically(ctx, func(q *querier) error {
		var err error
		if stored, created, err = create(q, ctx, b); err != nil || !created {
			return err
		}
		_, err = q.PutTranscript(ctx, tr)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return stored, created, nil
}
