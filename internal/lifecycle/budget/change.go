package budget

import (
	"context"
	"errors"

	"github.com/azolla/azolla/internal/store"
)

// ErrNoBudget refuses to raise the budget of an objective that has none:
// there is nothing to add to; set one instead.
var ErrNoBudget = errors.New("no budget to raise")

// errOneEdit refuses an Edit that asks for more than one change.
var errOneEdit = errors.New("change a budget one way at a time: add, set or remove")

// Edit is how a human changes an objective's budget: at most one of its
// fields is set. The zero Edit changes nothing, and Change only says where
// the budget stands.
type Edit struct {
	// Add raises the budget by this many dollars; the objective must have
	// one (ErrNoBudget).
	Add *float64
	// Set replaces the budget with this many dollars.
	Set *float64
	// Remove takes the cap away.
	Remove bool
}

// changes says whether e changes anything.
func (e Edit) changes() bool { return e.Add != nil || e.Set != nil || e.Remove }

// apply is the budget e makes of current (nil: no cap).
func (e Edit) apply(current *float64) (*float64, error) {
	n := 0
	for _, given := range []bool{e.Add != nil, e.Set != nil, e.Remove} {
		if given {
			n++
		}
	}
	switch {
	case n > 1:
		return nil, errOneEdit
	case e.Add != nil && current == nil:
		return nil, ErrNoBudget
	case e.Add != nil:
		raised := *current + *e.Add
		return &raised, nil
	case e.Set != nil:
		set := *e.Set
		return &set, nil
	case e.Remove:
		return nil, nil
	}
	return current, nil
}

// Change makes edit of objective objectiveID's budget and says where the
// budget stands then, against everything its runs have spent (read
// whether or not it has a budget), all in one transaction so the standing
// is that of the budget written. Raising the budget starts no round.
//
// The store's errors come back as they are: an unknown objective is
// domain.ErrNotFound, a budget the schema refuses its validation error;
// raising an objective without a budget is ErrNoBudget. On any error
// nothing changes.
func Change(ctx context.Context, tx store.Transactor, objectiveID string, edit Edit) (Standing, error) {
	return ChangeOnce(ctx, tx, objectiveID, edit, nil)
}

// ChangeOnce is Change for an edit that must be made once however often it
// is asked for (a command comment read twice): first, in the same
// transaction, once records the request and says whether it was new. When
// it was not, the budget is left as it is and its standing returned. A nil
// once is Change.
func ChangeOnce(ctx context.Context, tx store.Transactor, objectiveID string, edit Edit,
	once func(q store.Querier) (bool, error)) (Standing, error) {
	var st Standing
	err := tx.InTx(ctx, func(q store.Querier) error {
		o, err := q.GetObjective(ctx, objectiveID)
		if err != nil {
			return err
		}
		fresh := true
		if once != nil {
			if fresh, err = once(q); err != nil {
				return err
			}
		}
		if edit.changes() && fresh {
			next, err := edit.apply(o.BudgetUSD)
			if err != nil {
				return err
			}
			if o, err = q.SetObjectiveBudget(ctx, store.SetObjectiveBudgetParams{ObjectiveID: o.ObjectiveID,
				BudgetUSD: next}); err != nil {
				return err
			}
		}
		spend, err := q.ObjectiveSpend(ctx, o.ObjectiveID)
		if err != nil {
			return err
		}
		st = Standing{ObjectiveID: o.ObjectiveID, Budget: o.BudgetUSD, Spend: spend}
		return nil
	})
	if err != nil {
		return Standing{}, err
	}
	return st, nil
}
