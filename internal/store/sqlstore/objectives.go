package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

const objectiveCols = `objective_id, objective_type, title, acceptance_criteria, status, status_seq,
	blockers, blocker_ref, urgency, due_at, repository, base_branch, generator, patch, budget_usd, attempts, created_at, updated_at,
	description, provenance`

func scanObjective(r rowScanner) (*domain.Objective, error) {
	var o domain.Objective
	err := r.Scan(&o.ObjectiveID, &o.ObjectiveType, &o.Title, jsonCol(&o.AcceptanceCriteria),
		&o.Status, &o.StatusSeq, jsonCol(&o.Blockers), nullStringCol((*string)(&o.BlockerRef)), &o.Urgency,
		nullTimeCol(&o.DueAt), nullStringCol(&o.Repository), nullStringCol(&o.BaseBranch),
		nullStringCol(&o.Generator), nullStringCol(&o.Patch), nullFloatCol(&o.BudgetUSD), nullIntCol{&o.Attempts}, timeCol(&o.CreatedAt),
		timeCol(&o.UpdatedAt), nullStringCol(&o.Description), nullStringCol(&o.Provenance))
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// CreateObjective inserts a new objective. Zero timestamps are set to now.
func (q *querier) CreateObjective(ctx context.Context, o *domain.Objective) error {
	now := store.NowOr(o.CreatedAt)
	o.CreatedAt = now
	o.UpdatedAt = store.NowOr(o.UpdatedAt)
	if o.DueAt != nil {
		due := store.NowOr(*o.DueAt)
		o.DueAt = &due
	}
	o.AcceptanceCriteria = emptyIfNil(o.AcceptanceCriteria)
	o.Blockers = emptyIfNil(o.Blockers)
	if err := schemas.Validate(schemas.Objective, o); err != nil {
		return fmt.Errorf("create objective: %w", err)
	}
	criteria, err := jsonText(o.AcceptanceCriteria)
	if err != nil {
		return err
	}
	blockers, err := jsonText(o.Blockers)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `INSERT INTO objectives (`+objectiveCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
		o.ObjectiveID, o.ObjectiveType, o.Title, criteria, o.Status, o.StatusSeq, blockers,
		nullString(string(o.BlockerRef)), o.Urgency, q.nt(o.DueAt), nullString(o.Repository),
		nullString(o.BaseBranch), nullString(o.Generator), nullString(o.Patch), nullFloat(o.BudgetUSD), nullInt(o.Attempts),
		q.t(o.CreatedAt), q.t(o.UpdatedAt), nullString(o.Description), nullString(o.Provenance))
	if q.d.IsUniqueViolation(err) {
		return fmt.Errorf("create objective %q: %w", o.ObjectiveID, domain.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create objective %q: %w", o.ObjectiveID, err)
	}
	return nil
}

// GetObjective loads one objective.
func (q *querier) GetObjective(ctx context.Context, id string) (*domain.Objective, error) {
	o, err := scanObjective(q.queryRow(ctx, `SELECT `+objectiveCols+` FROM objectives WHERE objective_id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("get objective: %w", notFound(err, "objective", id))
	}
	return o, nil
}

// ListObjectives lists objectives, oldest first.
func (q *querier) ListObjectives(ctx context.Context, p store.ListObjectivesParams) ([]*domain.Objective, error) {
	var f filters
	f.eq("status", string(p.Status))
	rows, err := q.query(ctx, `SELECT `+objectiveCols+` FROM objectives`+f.clause()+`
		ORDER BY created_at, objective_id LIMIT `+f.arg(limit(p.Limit)), f.args...)
	out, err := collect(rows, err, scanObjective)
	if err != nil {
		return nil, fmt.Errorf("list objectives: %w", err)
	}
	return out, nil
}

// TransitionObjective changes status by compare-and-swap on status_seq, so
// two concurrent transitions cannot both start from the same status.
func (q *querier) TransitionObjective(ctx context.Context, p store.TransitionObjectiveParams) (*domain.Objective, error) {
	cur, err := q.GetObjective(ctx, p.ObjectiveID)
	if err != nil {
		return nil, fmt.Errorf("transition objective: %w", err)
	}
	if len(p.From) > 0 && !slices.Contains(p.From, cur.Status) {
		return nil, domain.ObjectiveTransitionError(cur.ObjectiveID, cur.Status, p.From, string(p.To))
	}
	next := *cur
	next.Status = p.To
	next.StatusSeq = cur.StatusSeq + 1
	next.UpdatedAt = store.NowOr(p.Now)
	if p.BlockerRef != nil {
		next.BlockerRef = *p.BlockerRef
	}
	if p.Blockers != nil {
		next.Blockers = emptyIfNil(*p.Blockers)
	}
	if err := schemas.Validate(schemas.Objective, &next); err != nil {
		return nil, fmt.Errorf("transition objective: %w", err)
	}
	blockers, err := jsonText(next.Blockers)
	if err != nil {
		return nil, err
	}
	res, err := q.exec(ctx, `UPDATE objectives SET status = $1, status_seq = $2, blocker_ref = $3, blockers = $4,
		updated_at = $5 WHERE objective_id = $6 AND status_seq = $7`,
		next.Status, next.StatusSeq, nullString(string(next.BlockerRef)), blockers, q.t(next.UpdatedAt),
		cur.ObjectiveID, cur.StatusSeq)
	if err != nil {
		return nil, fmt.Errorf("transition objective %q: %w", cur.ObjectiveID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		// Someone else transitioned it between our read and write.
		now, gerr := q.GetObjective(ctx, p.ObjectiveID)
		if gerr != nil {
			return nil, fmt.Errorf("transition objective: %w", gerr)
		}
		return nil, domain.ObjectiveTransitionError(now.ObjectiveID, now.Status, p.From, string(p.To))
	}
	return &next, nil
}

// ListObjectivesPage pages through objectives by (created_at,
// objective_id), keeping the statuses asked for.
func (q *querier) ListObjectivesPage(ctx context.Context, p store.ObjectivesPageParams) ([]*domain.Objective, error) {
	args := []any{q.t(p.After.CreatedAt), p.After.ID, limit(p.Limit)}
	statuses := "TRUE"
	if len(p.Statuses) > 0 {
		statuses = "status IN (" + placeholders(len(args)+1, len(p.Statuses)) + ")"
		for _, s := range p.Statuses {
			args = append(args, s)
		}
	}
	pastDeadline := "TRUE"
	if p.PastDeadline != nil {
		var more []any
		pastDeadline, more = q.d.PastDeadline(*p.PastDeadline, len(args)+1)
		args = append(args, more...)
	}
	rows, err := q.query(ctx, `SELECT `+objectiveCols+` FROM objectives
		WHERE `+statuses+` AND `+pastDeadline+` AND (created_at, objective_id) > ($1, $2)
		ORDER BY created_at, objective_id LIMIT $3`, args...)
	out, err := collect(rows, err, scanObjective)
	if err != nil {
		return nil, fmt.Errorf("list objectives page: %w", err)
	}
	return out, nil
}
