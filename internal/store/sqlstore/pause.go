package sqlstore

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

const pauseCols = `pause_state_id, objective_id, work_order_id, reason, prioritized_actions, action_kinds, created_at`

func scanPause(r rowScanner) (*store.PauseState, error) {
	var p store.PauseState
	err := r.Scan(&p.PauseStateID, &p.ObjectiveID, nullStringCol{&p.WorkOrderID}, &p.Reason,
		jsonCol{&p.PrioritizedActions}, jsonCol{&p.ActionKinds}, timeCol{&p.CreatedAt})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// CreatePauseState records a hand-back to a human.
func (q *querier) CreatePauseState(ctx context.Context, p *store.PauseState) error {
	p.CreatedAt = store.NowOr(p.CreatedAt)
	if err := schemas.Validate(schemas.PauseState, p); err != nil {
		return fmt.Errorf("create pause state: %w", err)
	}
	// The schema cannot say that the kinds run beside the actions.
	if n := len(p.ActionKinds); n > 0 && n != len(p.PrioritizedActions) {
		return fmt.Errorf("create pause state %q: %d action_kinds for %d prioritized_actions: %w",
			p.PauseStateID, n, len(p.PrioritizedActions), store.ErrInvalid)
	}
	actions, err := jsonText(p.PrioritizedActions)
	if err != nil {
		return err
	}
	var kinds any // NULL when the writer named no kinds
	if len(p.ActionKinds) > 0 {
		if kinds, err = jsonText(p.ActionKinds); err != nil {
			return err
		}
	}
	_, err = q.exec(ctx, `INSERT INTO pause_states (`+pauseCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		p.PauseStateID, p.ObjectiveID, nullString(p.WorkOrderID), p.Reason, actions, kinds, q.t(p.CreatedAt))
	if q.d.IsUniqueViolation(err) {
		return fmt.Errorf("create pause state %q: %w", p.PauseStateID, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create pause state %q: %w", p.PauseStateID, err)
	}
	return nil
}

// ListPauseStates lists an objective's pause states, oldest first.
func (q *querier) ListPauseStates(ctx context.Context, objectiveID string) ([]*store.PauseState, error) {
	rows, err := q.query(ctx, `SELECT `+pauseCols+` FROM pause_states WHERE objective_id = $1
		ORDER BY created_at, pause_state_id`, objectiveID)
	out, err := collect(rows, err, scanPause)
	if err != nil {
		return nil, fmt.Errorf("list pause states: %w", err)
	}
	return out, nil
}
