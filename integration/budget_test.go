package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// An agent that reports $0.70 a run on an objective with a $1 budget whose
// gate always fails: the first round leaves $0.30, which the second run is
// told; the second run is gated as usual and its report takes the spend to
// $1.40, so the objective pauses as BUDGET_SPENT and a third round is
// refused until the budget is raised by $1. The third round is told what
// the raise left.
func TestBudget_SpentBudgetStopsTheNextRoundUntilRaised(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := sampleRepo(t)
	seen := t.TempDir()
	agent := fmt.Sprintf(`n=$(ls %[1]q | wc -l); printf '%%s' "${AZOLLA_BUDGET_USD_REMAINING-unset}" > %[1]q/budget-$n.txt
echo change >> README.md
printf '{"model":"agent-1","cost_usd":0.7,"tokens":{"input":1000,"output":200}}' > "$AZOLLA_REPORT_FILE"`, seen)
	b := setup(t, setupOptions{patch: func(p *config.PatchConfig) {
		p.Command.Run = agent
		p.Command.Binds = []config.BindConfig{{Path: seen, Mode: config.BindReadWrite}}
		p.Repositories = []config.RepositoryConfig{{Repository: repo, GateCommands: []string{"echo 'not yet'; exit 1"}}}
	}})
	id := uniqueID("budget")
	b.create(t, id, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = repo, "main", config.GeneratorCommand
		budget := 1.0
		o.BudgetUSD = &budget
	})
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	first := b.waitStep(t, id, workflows.StepAwaitingRetry)
	require.Equal(t, domain.PauseGateFailed, first.LastPause.Reason, "$0.70 of $1")

	_, err = b.starter.Decide(ctx, id, workflows.Retry, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	second := b.waitRound(t, id, 1, workflows.StepAwaitingRetry)
	require.Equal(t, domain.GateFail, second.GateResult, "the run past the budget is gated as usual")
	require.Equal(t, domain.PauseBudgetSpent, second.LastPause.Reason)
	require.Contains(t, second.LastPause.PrioritizedActions, "Spent $1.40 of its $1.00 budget (over by $0.40): raise the budget to run again")
	require.Contains(t, second.LastPause.ActionKinds, pause.AddBudget)

	_, err = b.starter.Decide(ctx, id, workflows.Retry, workflows.Decision{By: "tester"})
	require.ErrorContains(t, err, "has spent $1.40 of its $1.00 budget", "no round past the budget")
	wos, err := b.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	require.Len(t, wos, 2, "the refused retry scheduled nothing")

	raised := 2.0
	_, err = b.store.SetObjectiveBudget(ctx, store.SetObjectiveBudgetParams{ObjectiveID: id, BudgetUSD: &raised})
	require.NoError(t, err)
	_, err = b.starter.Decide(ctx, id, workflows.Retry, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	b.waitRound(t, id, 2, workflows.StepAwaitingRetry)

	for i, want := range []string{"1", "0.3", "0.6"} {
		got, err := os.ReadFile(filepath.Join(seen, fmt.Sprintf("budget-%d.txt", i)))
		require.NoError(t, err)
		require.Equal(t, want, string(got), "round %d is told what is left", i+1)
	}
	spend, err := b.store.ObjectiveSpend(ctx, id)
	require.NoError(t, err)
	require.Equal(t, domain.Spend{USD: spend.USD, Runs: 3, Tokens: spend.Tokens}, spend)
	require.InDelta(t, 2.1, spend.USD, 1e-9)
	require.Equal(t, int64(3000), spend.Tokens.Input)
	b.requireAuditClean(t)
}

// waitRound waits until objective id's lifecycle is in round and at step.
func (b *bundle) waitRound(t testing.TB, id string, round int, step string) workflows.State {
	t.Helper()
	var st workflows.State
	require.Eventually(t, func() bool {
		var err error
		st, err = b.starter.State(context.Background(), id)
		return err == nil && st.Round == round && st.Step == step
	}, 90*time.Second, 100*time.Millisecond, "objective %s never reached %s in round %d (last state %+v)", id, step, round, &st)
	return st
}
