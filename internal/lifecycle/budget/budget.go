// Package budget is the one home of the budget rule: an objective's
// budget_usd against what its runs have spent (domain.Spend, as their run
// reports tell), what is left, whether a round may start, the error that
// refuses one and what the pause says of an overrun; and Change, a human
// raising, setting or removing a budget (objective budget). Readiness, the
// scheduler, best-of-N candidates, pull-request rounds, the gate and the
// CLI all ask it, so each says the same thing the same way.
//
// The rule: an objective without a budget is never refused. One with a
// budget may start a round while its known spend is below the budget; a
// run of unknown cost counts as nothing known, never as free, and is named
// wherever the spend is told. A round that starts may still run past the
// budget (a run is not stopped for the money it is spending); the overrun
// is recorded on the pause that follows it.
package budget

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/textsafe"
)

// SpendReader reads what an objective's runs have spent; the store's
// SpendQuerier is one.
type SpendReader interface {
	ObjectiveSpend(ctx context.Context, objectiveID string) (domain.Spend, error)
}

// Standing is an objective's budget against its spend.
type Standing struct {
	ObjectiveID string
	// Budget is budget_usd; nil means no cap.
	Budget *float64
	// Spend is what the objective's runs have spent. Of reads it only for
	// an objective with a budget.
	Spend domain.Spend
}

// Of is o's standing. The spend is read only when o has a budget: without
// one nothing is refused, and a round start need not pay for the query.
func Of(ctx context.Context, r SpendReader, o *domain.Objective) (Standing, error) {
	st := Standing{ObjectiveID: o.ObjectiveID, Budget: o.BudgetUSD}
	if o.BudgetUSD == nil {
		return st, nil
	}
	var err error
	if st.Spend, err = r.ObjectiveSpend(ctx, o.ObjectiveID); err != nil {
		return Standing{}, fmt.Errorf("read the spend of objective %s: %w", o.ObjectiveID, err)
	}
	return st, nil
}

// Left is what is left of o's budget for its next round: nil without a
// cap, or a *SpentError when nothing is.
func Left(ctx context.Context, r SpendReader, o *domain.Objective) (*float64, error) {
	st, err := Of(ctx, r, o)
	if err != nil {
		return nil, err
	}
	if err := st.Allow(); err != nil {
		return nil, err
	}
	return st.Left(), nil
}

// Exhausted reports whether the known spend has reached the budget; never
// without one.
func (s Standing) Exhausted() bool {
	return s.Budget != nil && s.Spend.USD >= *s.Budget
}

// Left is what is left of the budget, never below zero; nil without one.
func (s Standing) Left() *float64 {
	if s.Budget == nil {
		return nil
	}
	left := math.Max(0, *s.Budget-s.Spend.USD)
	// Fractions of a cent in a float sum are noise, not money.
	left = math.Round(left*1e6) / 1e6
	return &left
}

// Overrun is how far the known spend went past the budget; 0 when it did
// not, or without one.
func (s Standing) Overrun() float64 {
	if s.Budget == nil {
		return 0
	}
	return math.Max(0, s.Spend.USD-*s.Budget)
}

// Allow refuses a new round once the budget is spent: nil, or a
// *SpentError.
func (s Standing) Allow() error {
	if s.Exhausted() {
		return &SpentError{Standing: s}
	}
	return nil
}

// Told says the spend against the budget as a pause action does: "Spent
// $1.20 of its $1.00 budget (over by $0.20), plus 1 run(s) of unknown
// cost". Without a budget it says the spend alone.
func (s Standing) Told() string {
	if s.Budget == nil {
		return "Spent " + s.Spend.String()
	}
	out := fmt.Sprintf("Spent %s of its %s budget", domain.USD(s.Spend.USD), domain.USD(*s.Budget))
	if d := s.Overrun(); d > 0 {
		out += " (over by " + domain.USD(d) + ")"
	}
	if s.Spend.Unknown > 0 {
		out += fmt.Sprintf(", plus %d run(s) of unknown cost", s.Spend.Unknown)
	}
	return out
}

// ErrSpent is what errors.Is finds in a *SpentError.
var ErrSpent = errors.New("budget spent")

// SpentError refuses a round of an objective whose runs have spent its
// budget: none starts until a human raises it.
type SpentError struct {
	Standing
}

func (e *SpentError) Error() string {
	id := textsafe.Line(e.ObjectiveID)
	return fmt.Sprintf("objective %s has spent %s of its %s budget over %s: raise it first with `objective budget %s --add DOLLARS`",
		id, domain.USD(e.Spend.USD), domain.USD(*e.Budget), e.Spend.RunsLine(), id)
}

// Is makes errors.Is(err, ErrSpent) true.
func (e *SpentError) Is(target error) bool { return target == ErrSpent }

// CandidateMayStart says why best-of-N candidate attempt is not to start
// with left dollars of its objective's budget: less is left than the
// workorder's other candidates have cost on average, so it would likely
// run past the budget. "" lets it start: no cap, or no other candidate of
// known cost yet.
func CandidateMayStart(left *float64, candidates []*domain.Candidate, attempt int) string {
	if left == nil {
		return ""
	}
	var sum float64
	n := 0
	for _, c := range candidates {
		if c.Attempt == attempt || c.Report == nil || c.Report.CostUSD == nil {
			continue
		}
		sum, n = sum+*c.Report.CostUSD, n+1
	}
	if n == 0 || *left >= sum/float64(n) {
		return ""
	}
	return fmt.Sprintf("not started: %s is left of the objective's budget, less than the %s a candidate has cost so far (%d of them)",
		domain.USD(*left), domain.USD(sum/float64(n)), n)
}
