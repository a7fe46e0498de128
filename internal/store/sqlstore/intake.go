package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// Intake (migration 16): items and command comments are inserted once, ON
// CONFLICT DO NOTHING, so a second poller or a redelivery writes nothing.

const intakeItemCols = `source, external_id, kind, objective_id, capture_id, url, author, repository,
	status_comment_id, status_digest, closed, created_at, updated_at, edited_at`

func scanIntakeItem(r rowScanner) (*domain.IntakeItem, error) {
	var it domain.IntakeItem
	err := r.Scan(&it.Source, &it.ExternalID, &it.Kind, nullStringCol(&it.ObjectiveID), nullStringCol(&it.CaptureID),
		nullStringCol(&it.URL), nullStringCol(&it.Author), nullStringCol(&it.Repository),
		nullStringCol(&it.StatusCommentID), nullStringCol(&it.StatusDigest), &it.Closed, timeCol(&it.CreatedAt),
		timeCol(&it.UpdatedAt), nullTimeCol(&it.EditedAt))
	if err != nil {
		return nil, err
	}
	return &it, nil
}

// InsertIntakeItem writes it unless its key is taken.
func (q *querier) InsertIntakeItem(ctx context.Context, it *domain.IntakeItem) (bool, error) {
	it.CreatedAt = store.NowOr(it.CreatedAt)
	it.UpdatedAt = store.NowOr(it.UpdatedAt)
	if err := schemas.Validate(schemas.IntakeItem, it); err != nil {
		return false, fmt.Errorf("record intake item %s %s: %w", it.Source, it.ExternalID, err)
	}
	res, err := q.exec(ctx, `INSERT INTO intake_items (`+intakeItemCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (source, external_id) DO NOTHING`,
		it.Source, it.ExternalID, it.Kind, nullString(it.ObjectiveID), nullString(it.CaptureID), nullString(it.URL),
		nullString(it.Author), nullString(it.Repository), nullString(it.StatusCommentID), nullString(it.StatusDigest),
		it.Closed, q.t(it.CreatedAt), q.t(it.UpdatedAt), q.nt(it.EditedAt))
	if q.d.IsUniqueViolation(err) {
		return false, fmt.Errorf("record intake item %s %s: objective %s came from another item: %w", it.Source,
			it.ExternalID, it.ObjectiveID, domain.ErrAlreadyExists)
	}
	if err != nil {
		return false, fmt.Errorf("record intake item %s %s: %w", it.Source, it.ExternalID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// GetIntakeItem reads an item by its key.
func (q *querier) GetIntakeItem(ctx context.Context, source, externalID string) (*domain.IntakeItem, error) {
	it, err := scanIntakeItem(q.queryRow(ctx, `SELECT `+intakeItemCols+` FROM intake_items
		WHERE source = $1 AND external_id = $2`, source, externalID))
	if err != nil {
		return nil, fmt.Errorf("get intake item: %w", notFound(err, "intake item", source+" "+externalID))
	}
	return it, nil
}

// IntakeItemOf reads the item an objective came from.
func (q *querier) IntakeItemOf(ctx context.Context, objectiveID string) (*domain.IntakeItem, error) {
	it, err := scanIntakeItem(q.queryRow(ctx, `SELECT `+intakeItemCols+` FROM intake_items
		WHERE objective_id = $1`, objectiveID))
	if err != nil {
		return nil, fmt.Errorf("get the intake item of objective %s: %w", objectiveID,
			notFound(err, "intake item of objective", objectiveID))
	}
	return it, nil
}

// ListIntakeItems lists items, oldest first.
func (q *querier) ListIntakeItems(ctx context.Context, p store.ListIntakeItemsParams) ([]*domain.IntakeItem, error) {
	var f filters
	f.eq("source", p.Source)
	rows, err := q.query(ctx, `SELECT `+intakeItemCols+` FROM intake_items`+f.clause()+`
		ORDER BY created_at, source, external_id LIMIT `+f.arg(limit(p.Limit)), f.args...)
	out, err := collect(rows, err, scanIntakeItem)
	if err != nil {
		return nil, fmt.Errorf("list intake items: %w", err)
	}
	return out, nil
}

// UpdateIntakeItem writes an item's status comment, digest, closed flag and
// edit time.
func (q *querier) UpdateIntakeItem(ctx context.Context, it *domain.IntakeItem) error {
	it.UpdatedAt = store.NowOr(time.Time{})
	if err := schemas.Validate(schemas.IntakeItem, it); err != nil {
		return fmt.Errorf("update intake item %s %s: %w", it.Source, it.ExternalID, err)
	}
	res, err := q.exec(ctx, `UPDATE intake_items SET status_comment_id = $3, status_digest = $4, closed = $5,
		updated_at = $6, edited_at = $7 WHERE source = $1 AND external_id = $2`,
		it.Source, it.ExternalID, nullString(it.StatusCommentID), nullString(it.StatusDigest), it.Closed,
		q.t(it.UpdatedAt), q.nt(it.EditedAt))
	if err != nil {
		return fmt.Errorf("update intake item %s %s: %w", it.Source, it.ExternalID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("update intake item: %w", &domain.NotFoundError{Kind: "intake item", ID: it.Source + " " + it.ExternalID})
	}
	return nil
}

const forgeCommandCols = `source, comment_id, objective_id, thread, command, argument, author, trusted, trust_reason,
	result, created_at`

func scanForgeCommand(r rowScanner) (*domain.ForgeCommand, error) {
	var c domain.ForgeCommand
	err := r.Scan(&c.Source, &c.CommentID, &c.ObjectiveID, &c.Thread, &c.Command, nullStringCol(&c.Argument), &c.Author,
		&c.Trusted, &c.TrustReason, &c.Result, timeCol(&c.CreatedAt))
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// RecordForgeCommand writes c unless its key is taken.
func (q *querier) RecordForgeCommand(ctx context.Context, c *domain.ForgeCommand) (bool, error) {
	c.CreatedAt = store.NowOr(c.CreatedAt)
	if err := schemas.Validate(schemas.ForgeCommand, c); err != nil {
		return false, fmt.Errorf("record command comment %s: %w", c.CommentID, err)
	}
	res, err := q.exec(ctx, `INSERT INTO forge_commands (`+forgeCommandCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (source, comment_id) DO NOTHING`,
		c.Source, c.CommentID, c.ObjectiveID, c.Thread, c.Command, nullString(c.Argument), c.Author, c.Trusted,
		c.TrustReason, c.Result, q.t(c.CreatedAt))
	if err != nil {
		return false, fmt.Errorf("record command comment %s: %w", c.CommentID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// GetForgeCommand reads a command by its key.
func (q *querier) GetForgeCommand(ctx context.Context, source, commentID string) (*domain.ForgeCommand, error) {
	c, err := scanForgeCommand(q.queryRow(ctx, `SELECT `+forgeCommandCols+` FROM forge_commands
		WHERE source = $1 AND comment_id = $2`, source, commentID))
	if err != nil {
		return nil, fmt.Errorf("get command comment: %w", notFound(err, "command comment", commentID))
	}
	return c, nil
}

// ListForgeCommands lists an objective's commands in the order given.
func (q *querier) ListForgeCommands(ctx context.Context, objectiveID string) ([]*domain.ForgeCommand, error) {
	rows, err := q.query(ctx, `SELECT `+forgeCommandCols+` FROM forge_commands WHERE objective_id = $1
		ORDER BY created_at, comment_id`, objectiveID)
	out, err := collect(rows, err, scanForgeCommand)
	if err != nil {
		return nil, fmt.Errorf("list the commands of objective %s: %w", objectiveID, err)
	}
	return out, nil
}

// IntakeCursor reads a source's cursor, "" before its first poll.
func (q *querier) IntakeCursor(ctx context.Context, source string) (string, error) {
	var cursor string
	err := q.queryRow(ctx, `SELECT cursor FROM intake_cursors WHERE source = $1`, source).Scan(&cursor)
	if err != nil {
		if _, ok := notFound(err, "", "").(*domain.NotFoundError); ok {
			return "", nil
		}
		return "", fmt.Errorf("read the intake cursor of %s: %w", source, err)
	}
	return cursor, nil
}

// SetIntakeCursor writes a source's cursor.
func (q *querier) SetIntakeCursor(ctx context.Context, source, cursor string, now time.Time) error {
	_, err := q.exec(ctx, `INSERT INTO intake_cursors (source, cursor, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (source) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
		source, cursor, q.t(store.NowOr(now)))
	if err != nil {
		return fmt.Errorf("write the intake cursor of %s: %w", source, err)
	}
	return nil
}

// UpdateObjectiveText rewrites a NEW objective's text.
func (q *querier) UpdateObjectiveText(ctx context.Context, p store.UpdateObjectiveTextParams) (bool, error) {
	o, err := q.GetObjective(ctx, p.ObjectiveID)
	if err != nil {
		return false, err
	}
	if o.Status != domain.StatusNew {
		return false, nil
	}
	o.Title, o.Description, o.AcceptanceCriteria = p.Title, p.Description, emptyIfNil(p.AcceptanceCriteria)
	o.UpdatedAt = store.NowOr(p.Now)
	if err := schemas.Validate(schemas.Objective, o); err != nil {
		return false, fmt.Errorf("update objective %s: %w", o.ObjectiveID, err)
	}
	criteria, err := jsonText(o.AcceptanceCriteria)
	if err != nil {
		return false, err
	}
	res, err := q.exec(ctx, `UPDATE objectives SET title = $2, description = $3, acceptance_criteria = $4,
		updated_at = $5 WHERE objective_id = $1 AND status = $6 AND status_seq = $7`,
		o.ObjectiveID, o.Title, nullString(o.Description), criteria, q.t(o.UpdatedAt), domain.StatusNew, o.StatusSeq)
	if err != nil {
		return false, fmt.Errorf("update objective %s: %w", o.ObjectiveID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
