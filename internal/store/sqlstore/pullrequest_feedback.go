package sqlstore

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// A pull request's feedback as azolla judged it (migration 14). Each record
// is inserted once, ON CONFLICT DO NOTHING: a retry, or a second worker,
// writes nothing more, and a record is never changed.

const pullRequestFeedbackCols = `objective_id, number, feedback_id, kind, author, state, summary, trusted,
	trust_reason, taken_by, created_at`

func scanPullRequestFeedback(r rowScanner) (*domain.PullRequestFeedback, error) {
	var f domain.PullRequestFeedback
	err := r.Scan(&f.ObjectiveID, &f.Number, &f.FeedbackID, &f.Kind, &f.Author, nullStringCol(&f.State), &f.Summary,
		&f.Trusted, &f.TrustReason, nullStringCol(&f.TakenBy), timeCol(&f.CreatedAt))
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// RecordPullRequestFeedback inserts the records not written yet, all or
// none (see store.PullRequestFeedbackQuerier).
func (q *querier) RecordPullRequestFeedback(ctx context.Context, fb []*domain.PullRequestFeedback) (int, error) {
	for _, f := range fb {
		f.CreatedAt = store.NowOr(f.CreatedAt)
		if err := schemas.Validate(schemas.PullRequestFeedback, f); err != nil {
			return 0, fmt.Errorf("record feedback %s on pull request #%d of objective %s: %w", f.FeedbackID, f.Number,
				f.ObjectiveID, err)
		}
	}
	written := 0
	err := q.atomically(ctx, func(q *querier) error {
		written = 0
		for _, f := range fb {
			if _, err := q.GetObjective(ctx, f.ObjectiveID); err != nil {
				return fmt.Errorf("record feedback %s: %w", f.FeedbackID, err)
			}
			res, err := q.exec(ctx, `INSERT INTO pull_request_feedback (`+pullRequestFeedbackCols+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
				ON CONFLICT (objective_id, number, feedback_id) DO NOTHING`,
				f.ObjectiveID, f.Number, f.FeedbackID, f.Kind, f.Author, nullString(f.State), f.Summary, f.Trusted,
				f.TrustReason, nullString(f.TakenBy), q.t(f.CreatedAt))
			if err != nil {
				return fmt.Errorf("record feedback %s on pull request #%d of objective %s: %w", f.FeedbackID,
					f.Number, f.ObjectiveID, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			written += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return written, nil
}

// ListPullRequestFeedback reads an objective's feedback in the order
// recorded.
func (q *querier) ListPullRequestFeedback(ctx context.Context, objectiveID string) ([]*domain.PullRequestFeedback, error) {
	rows, err := q.query(ctx, `SELECT `+pullRequestFeedbackCols+` FROM pull_request_feedback
		WHERE objective_id = $1 ORDER BY created_at, feedback_id`, objectiveID)
	out, err := collect(rows, err, scanPullRequestFeedback)
	if err != nil {
		return nil, fmt.Errorf("list the feedback of objective %s: %w", objectiveID, err)
	}
	return out, nil
}
