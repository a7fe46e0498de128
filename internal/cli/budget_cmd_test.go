package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

func dollars(v float64) *float64 { return &v }

// spentPast writes objective id failed after a run that reported cost,
// its budget budgetUSD, paused as the gate would pause it.
func spentPast(t *testing.T, s store.Store, id string, cost, budgetUSD float64) {
	t.Helper()
	ctx := context.Background()
	wo := executed(t, s, id, domain.OutputBundle{Title: "Patch", RunnerStatus: domain.RunnerOK,
		Metadata: domain.BundleMetadata{Generator: "command", RunReport: &domain.RunReport{Model: "agent-1", CostUSD: &cost}}})
	_, err := s.SetObjectiveBudget(ctx, store.SetObjectiveBudgetParams{ObjectiveID: id, BudgetUSD: &budgetUSD})
	require.NoError(t, err)
	failed := moveTo(t, s, id, domain.StatusTodo)
	sp, err := s.ObjectiveSpend(ctx, id)
	require.NoError(t, err)
	createPause(t, s, pause.BudgetSpent(id, failed.StatusSeq, wo.WorkOrderID, "output bundle content is empty",
		budget.Standing{ObjectiveID: id, Budget: &budgetUSD, Spend: sp},
		nil, nil, storetest.T0))
}

func TestObjectiveCreate_BudgetFromTheFlagOrTheRepositoryDefault(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	res := azolla(t, env, "objective", "create", "--title", "Capped", "--id", "capped", "--budget-usd", "3.5", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var o domain.Objective
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &o))
	require.Equal(t, dollars(3.5), o.BudgetUSD)

	repo := t.TempDir()
	require.NoError(t, exec.Command("git", "init", "-q", repo).Run())
	cfg := writeFile(t, t.TempDir(), "azolla.yaml", "patch:\n  repositories:\n    - repository: "+repo+"\n      budget_usd: 2.25\n")
	res = azolla(t, env, "--config", cfg, "objective", "create", "--title", "Repo default", "--id", "repo-default",
		"--repository", repo, "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &o))
	require.Equal(t, dollars(2.25), o.BudgetUSD, "the repository's default")
	res = azolla(t, env, "--config", cfg, "objective", "create", "--title", "Own budget", "--id", "own",
		"--repository", repo, "--budget-usd", "9", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &o))
	require.Equal(t, dollars(9), o.BudgetUSD, "the flag wins")

	for _, bad := range []string{"0", "-2", "NaN", "2000000"} {
		res = azolla(t, env, "objective", "create", "--title", "Bad", "--id", "bad", "--budget-usd", bad)
		require.Equal(t, 2, res.code, "--budget-usd %s: %s", bad, res.stderr)
		require.Contains(t, res.stderr, "budget", bad)
	}
	ids := map[string]bool{}
	for _, o := range listObjectives(t, env) {
		ids[o.ObjectiveID] = true
	}
	require.Equal(t, map[string]bool{"capped": true, "repo-default": true, "own": true}, ids, "nothing stored for a bad budget")

	res = azolla(t, env, "--config", writeFile(t, t.TempDir(), "azolla.yaml",
		"patch:\n  repositories:\n    - repository: "+repo+"\n      budget_usd: -1\n"), "objective", "list")
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "patch.repositories[0].budget_usd")
}

func TestObjectiveBudget_ShowsRaisesSetsAndRemoves(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	spentPast(t, s, "over", 5, 4)
	budgetCmd := func(args ...string) (result, budgetResult) {
		t.Helper()
		res := azolla(t, env, append([]string{"objective", "budget", "over", "-o", "json"}, args...)...)
		var br budgetResult
		if res.code == 0 {
			require.NoError(t, json.Unmarshal([]byte(res.stdout), &br), res.stdout)
		}
		return res, br
	}
	res, br := budgetCmd()
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, budgetResult{ObjectiveID: "over", BudgetUSD: dollars(4), Spend: domain.Spend{USD: 5, Runs: 1},
		RemainingUSD: dollars(0)}, br)
	text := azolla(t, env, "objective", "budget", "over")
	require.Equal(t, 0, text.code, text.stderr)
	require.Equal(t, "objective over: budget $4.00, spent $5.00 over 1 run, $0.00 left\n"+
		"no round starts until the budget is raised: azolla objective budget over --add DOLLARS\n", text.stdout)
	_, err := budget.Left(t.Context(), s, getObjective(t, s, "over"))
	require.ErrorIs(t, err, budget.ErrSpent)

	res, br = budgetCmd("--add", "2.5")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, dollars(6.5), br.BudgetUSD)
	require.Equal(t, dollars(1.5), br.RemainingUSD)
	require.Equal(t, dollars(6.5), getObjective(t, s, "over").BudgetUSD)
	_, err = budget.Left(t.Context(), s, getObjective(t, s, "over"))
	require.NoError(t, err, "raised: a round may start")

	res, br = budgetCmd("--set", "1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, dollars(1), br.BudgetUSD)
	res, br = budgetCmd("--none")
	require.Equal(t, 0, res.code, res.stderr)
	require.Nil(t, br.BudgetUSD)
	require.Nil(t, getObjective(t, s, "over").BudgetUSD)

	res, _ = budgetCmd("--add", "1")
	require.Equal(t, 4, res.code, "no budget to raise")
	require.Contains(t, res.stderr, "has no budget to raise: give one with --set")
	for _, args := range [][]string{{"--add", "0"}, {"--set", "-1"}, {"--add", "1", "--set", "2"}, {"--set", "NaN"}} {
		res, _ = budgetCmd(args...)
		require.Equal(t, 2, res.code, "%v: %s", args, res.stderr)
	}
	res, _ = budgetCmd("--set", "5000000")
	require.Equal(t, 2, res.code, res.stderr)
	require.Contains(t, res.stderr, "/budget_usd")
	require.Nil(t, getObjective(t, s, "over").BudgetUSD, "refused changes nothing")
	res = azolla(t, env, "objective", "budget", "nope", "--set", "1")
	require.Equal(t, 3, res.code, res.stderr)
}

func TestInboxAndShow_SaySpendAgainstTheBudget(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	spentPast(t, s, "over", 5, 4)

	items := inboxJSON(t, env)
	require.Len(t, items, 1)
	it := items[0]
	require.Equal(t, "over", it.SubjectID)
	require.Equal(t, domain.PauseBudgetSpent, it.Reason)
	require.Equal(t, &domain.Spend{USD: 5, Runs: 1}, it.Spend)
	require.Equal(t, dollars(4), it.BudgetUSD)
	require.Equal(t, "azolla objective budget over --add 5", it.Actions[1].Command)
	text := azolla(t, env, "inbox")
	require.Equal(t, 0, text.code, text.stderr)
	require.Contains(t, text.stdout, "   spent $5.00 over 1 run, budget $4.00, $0.00 left\n")

	show := azolla(t, env, "objective", "show", "over")
	require.Equal(t, 0, show.code, show.stderr)
	require.Contains(t, show.stdout, "spent       $5.00 over 1 run, budget $4.00, $0.00 left\n")
	require.Contains(t, show.stdout, "  report    model agent-1, $5.0000")
	require.Contains(t, show.stdout, "paused      BUDGET_SPENT")

	executed(t, s, "unknown", domain.OutputBundle{Title: "Patch", RunnerStatus: domain.RunnerOK,
		Metadata: domain.BundleMetadata{Generator: "command"}})
	show = azolla(t, env, "objective", "show", "unknown")
	require.Equal(t, 0, show.code, show.stderr)
	require.Contains(t, show.stdout, "spent       $0.00 over 1 run (1 of unknown cost)\n")
	require.Contains(t, show.stdout, "  report    none: the command generator's run wrote no report, its cost is unknown\n")
}
