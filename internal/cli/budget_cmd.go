package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/spf13/cobra"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/schemas"
)

// budgetResult is what `objective budget` prints as JSON.
type budgetResult struct {
	ObjectiveID string       `json:"objective_id"`
	BudgetUSD   *float64     `json:"budget_usd"`
	Spend       domain.Spend `json:"spend"`
	// RemainingUSD is what is left; absent without a cap.
	RemainingUSD *float64 `json:"remaining_usd,omitempty"`
}

func (a *app) objectiveBudgetCmd() *cobra.Command {
	var add, set float64
	var none bool
	var edit budget.Edit
	cmd := &cobra.Command{
		Use:   "budget OBJECTIVE_ID",
		Short: "Show an objective's budget and spend, or raise, set or remove its budget",
		Long: `Show what an objective's runs have spent against its budget_usd, or change the
budget: --add raises it by that many dollars, --set replaces it, --none
removes the cap. Once the runs have spent the budget, no round starts (retry,
unblock, a pull request's review) until it is raised; raising it does not
start one: retry the objective afterwards.`,
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().Float64Var(&add, "add", 0, "raise the budget by this many dollars")
	cmd.Flags().Float64Var(&set, "set", 0, "set the budget to this many dollars")
	cmd.Flags().BoolVar(&none, "none", false, "remove the budget: no cap")
	parse := func(cmd *cobra.Command, _ []string) error {
		fl := cmd.Flags()
		if n := len(slices.DeleteFunc([]string{"add", "set", "none"}, func(f string) bool { return !fl.Changed(f) })); n > 1 {
			return usageError(errors.New("give one of --add, --set and --none"))
		}
		for name, v := range map[string]float64{"add": add, "set": set} {
			if fl.Changed(name) && (math.IsNaN(v) || math.IsInf(v, 0) || v <= 0) {
				return usageError(fmt.Errorf("--%s %v: give a number of dollars above 0", name, v))
			}
		}
		edit = budget.Edit{}
		switch {
		case fl.Changed("add"):
			edit.Add = &add
		case fl.Changed("set"):
			edit.Set = &set
		case none:
			edit.Remove = true
		}
		return nil
	}
	a.withSession(cmd, preamble{output: true, parse: parse}, func(cmd *cobra.Command, args []string, c *call) error {
		st, err := budget.Change(cmd.Context(), c.store, args[0], edit)
		if errors.Is(err, budget.ErrNoBudget) {
			return &exitError{code: exitRefused, err: fmt.Errorf("objective %s has no budget to raise: give one with --set", textsafe.Line(args[0]))}
		}
		if err != nil {
			return inputErrorOr(err)
		}
		res := budgetResult{ObjectiveID: st.ObjectiveID, BudgetUSD: st.Budget, Spend: st.Spend, RemainingUSD: st.Left()}
		if c.json {
			return writeJSON(cmd.OutOrStdout(), res)
		}
		return printBudget(cmd.OutOrStdout(), res, a.self(), edit.Add != nil || edit.Set != nil)
	})
	return cmd
}

// printBudget writes where res stands and what to do next; changed says
// the command raised or set the budget.
func printBudget(out io.Writer, res budgetResult, self string, changed bool) error {
	var err error
	id := textsafe.Line(res.ObjectiveID)
	if res.BudgetUSD == nil {
		_, err = fmt.Fprintf(out, "objective %s: no budget; spent %s\n", id, res.Spend)
		return err
	}
	fmt.Fprintf(out, "objective %s: budget %s, spent %s, %s left\n", id, domain.USD(*res.BudgetUSD), res.Spend,
		domain.USD(*res.RemainingUSD))
	if *res.RemainingUSD <= 0 {
		_, err = fmt.Fprintf(out, "no round starts until the budget is raised: %s objective budget %s --add DOLLARS\n", self, id)
	} else if changed {
		_, err = fmt.Fprintf(out, "if its last round failed, start the next with: %s objective retry %s\n", self, id)
	}
	return err
}

// inputErrorOr classifies a store error, and a record the schema refuses
// as bad input.
func inputErrorOr(err error) error {
	var ve *schemas.ValidationError
	if errors.As(err, &ve) {
		return inputError(err)
	}
	return classify(err)
}
