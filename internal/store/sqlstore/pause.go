package sqlstore

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// A pause state without an objective (a triage or manifest pause) stores the
// empty string in objective_id (migration 7); a NULL subject_type means
// OBJECTIVE.
const pauseCols = `pause_state_id, objective_id, subject_type, subject_id, work_order_id, reason,
	prioritized_actions, action_kinds, deadline_at, created_at`

func scanPause(r rowScanner) (*domain.PauseState, error) {
	var p domain.PauseState
	err := r.Scan(&p.PauseStateID, &p.ObjectiveID, nullStringCol(&p.SubjectType), nullStringCol(&p.SubjectID),
		nullStringCol(&p.WorkOrderID), &p.Reason, jsonCol(&p.PrioritizedActions), jsonCol(&p.ActionKinds),
		nullTimeCol(&p.DeadlineAt), timeCol(&p.CreatedAt))
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// CreatePauseState records a hand-back to a human.
func (q *querier) CreatePauseState(ctx context.Context, p *domain.PauseState) error {
	args, err := q.pauseArgs(p)
	if err != nil {
		return fmt.Errorf("create pause state: %w", err)
	}
	_, err = q.exec(ctx, `INSERT INTO pause_states (`+pauseCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, args...)
	if q.d.IsUniqueViolation(err) {
		return fmt.Errorf("create pause state %q: %w", p.PauseStateID, domain.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create pause state %q: %w", p.PauseStateID, err)
	}
	return nil
}

// CreatePauseStateOnce inserts p unless its pause_state_id is taken, then
// returns the stored one: the primary key, not a read before the write,
// decides, so two racing writers of one deterministic id store one row.
func (q *querier) CreatePauseStateOnce(ctx context.Context, p *domain.PauseState) (*domain.PauseState, bool, error) {
	args, err := q.pauseArgs(p)
	if err != nil {
		return nil, false, fmt.Errorf("create pause state once: %w", err)
	}
	return insertOrGet(q, fmt.Sprintf("create pause state %q once", p.PauseStateID), func() (*domain.PauseState, error) {
		return scanPause(q.queryRow(ctx, `INSERT INTO pause_states (`+pauseCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (pause_state_id) DO NOTHING RETURNING `+pauseCols, args...))
	}, func() (*domain.PauseState, error) { return q.GetPauseState(ctx, p.PauseStateID) })
}

// pauseArgs validates p (setting a zero CreatedAt to now) and returns its
// column values in pauseCols order.
func (q *querier) pauseArgs(p *domain.PauseState) ([]any, error) {
	p.CreatedAt = store.NowOr(p.CreatedAt)
	if err := schemas.Validate(schemas.PauseState, p); err != nil {
		return nil, err
	}
	// The schema cannot say that the kinds run beside the actions.
	if n := len(p.ActionKinds); n > 0 && n != len(p.PrioritizedActions) {
		return nil, fmt.Errorf("pause state %q: %d action_kinds for %d prioritized_actions: %w",
			p.PauseStateID, n, len(p.PrioritizedActions), domain.ErrInvalid)
	}
	actions, err := jsonText(p.PrioritizedActions)
	if err != nil {
		return nil, err
	}
	var kinds any // NULL when the writer named no kinds
	if len(p.ActionKinds) > 0 {
		if kinds, err = jsonText(p.ActionKinds); err != nil {
			return nil, err
		}
	}
	return []any{p.PauseStateID, p.ObjectiveID, nullString(p.SubjectType), nullString(p.SubjectID),
		nullString(p.WorkOrderID), p.Reason, actions, kinds, q.nt(p.DeadlineAt), q.t(p.CreatedAt)}, nil
}

// GetPauseState loads one pause state.
func (q *querier) GetPauseState(ctx context.Context, id string) (*domain.PauseState, error) {
	p, err := scanPause(q.queryRow(ctx, `SELECT `+pauseCols+` FROM pause_states WHERE pause_state_id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("get pause state: %w", notFound(err, "pause state", id))
	}
	return p, nil
}

// ListPauseStates lists an objective's pause states, oldest first.
func (q *querier) ListPauseStates(ctx context.Context, objectiveID string) ([]*domain.PauseState, error) {
	rows, err := q.query(ctx, `SELECT `+pauseCols+` FROM pause_states WHERE objective_id = $1
		ORDER BY created_at, pause_state_id`, objectiveID)
	out, err := collect(rows, err, scanPause)
	if err != nil {
		return nil, fmt.Errorf("list pause states: %w", err)
	}
	return out, nil
}

// ListPauseStatesPage pages through pause states by (created_at,
// pause_state_id); the OBJECTIVE subject also matches the NULL of records
// without a subject_type.
func (q *querier) ListPauseStatesPage(ctx context.Context, p store.ListPauseStatesParams) ([]*domain.PauseState, error) {
	rows, err := q.query(ctx, `SELECT `+pauseCols+` FROM pause_states
		WHERE ($1 = '' OR reason = $1)
		AND ($2 = '' OR COALESCE(subject_type, $3) = $2)
		AND (created_at, pause_state_id) > ($4, $5)
		ORDER BY created_at, pause_state_id LIMIT $6`,
		p.Reason, p.SubjectType, domain.SubjectObjective, q.t(p.After.CreatedAt), p.After.ID, limit(p.Limit))
	out, err := collect(rows, err, scanPause)
	if err != nil {
		return nil, fmt.Errorf("list pause states page: %w", err)
	}
	return out, nil
}
