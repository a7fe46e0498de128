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
	"github.com/azolla/azolla/workflows"
)

// The best-of-N repository's gate: value.txt must hold a number (the
// "build") and that number must be 42 (the "test").
var (
	valueBuilds = `grep -Eqx '[0-9]+' value.txt || { echo "value.txt: not a number"; exit 1; }`
	valueIs42   = `test "$(cat value.txt)" = 42 || { echo "want 42, got $(cat value.txt)"; exit 1; }`
)

// Three candidates of one workorder, told apart by $AZOLLA_CANDIDATE:
// candidate 1 writes a wrong value (it builds, its test fails), candidate 2
// the right one, candidate 3 breaks the build. Every candidate is judged by
// both gate commands in its own workspace; candidate 2, the only one to
// pass both, is chosen and is the workorder's one bundle, which the gate
// then passes.
func TestBestOfN_TheCandidateThatPassesWinsAndIsTheOneBundle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := valueRepo(t)
	agent := `case "$AZOLLA_CANDIDATE" in
1) echo 41 > value.txt ;;
2) echo 42 > value.txt ;;
3) echo 'forty-two(' > value.txt ;;
*) echo "no candidate number: $AZOLLA_CANDIDATE" >&2; exit 1 ;;
esac`
	b := setup(t, setupOptions{patch: func(p *config.PatchConfig) {
		p.Command.Run = agent
		p.EarlyStop = false
		p.Repositories = []config.RepositoryConfig{{Repository: repo, GateCommands: []string{valueBuilds, valueIs42}}}
	}})
	id := uniqueID("bestofn")
	b.create(t, id, bestOfN(repo, 3))
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	done := b.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, done.GateResult)

	wos, bundles, records := b.counts(t, id)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records}, "one workorder, one output bundle, one run record")
	wo := b.onlyWorkOrder(t, id)
	cands, err := b.store.ListCandidates(ctx, wo.WorkOrderID)
	require.NoError(t, err)
	require.Len(t, cands, 3)
	for i, want := range []struct {
		passed []bool
		chosen bool
	}{{[]bool{true, false}, false}, {[]bool{true, true}, true}, {[]bool{false, false}, false}} {
		c := cands[i]
		require.Equal(t, i+1, c.Attempt)
		require.Equal(t, domain.CandidateDone, c.Status, "candidate %d: %s", c.Attempt, c.Why)
		require.Equal(t, domain.RunnerOK, c.RunnerStatus)
		require.Equal(t, config.GeneratorCommand, c.Generator)
		require.NotEmpty(t, c.Patch)
		require.Equal(t, want.passed, gatePassed(c), "candidate %d's gate results", c.Attempt)
		require.Equal(t, []string{valueBuilds, valueIs42}, gateCommands(c))
		require.Equal(t, want.chosen, c.Chosen, "candidate %d", c.Attempt)
	}
	require.Contains(t, cands[0].Patch, "+41")
	require.Contains(t, cands[2].Patch, "+forty-two(")
	require.Contains(t, cands[0].GateResults[1].Detail, "want 42, got 41")

	out := b.requirePatchRun(t, wo)
	require.Equal(t, cands[1].Patch, out.Content, "the bundle is candidate 2's patch")
	require.Contains(t, out.Content, "+42")
	require.Contains(t, out.Notes, "Candidate 2 won (the only candidate to pass every gate command)")
	rr, err := b.store.GetRunRecord(ctx, wo.WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, domain.GatePass, rr.GateResult)
	require.Equal(t, out.Metadata.CommitSHA, rr.CommitSHA)
	b.requireAuditClean(t)
	recordHistories(t, b, "best_of_n", id)
}

// With early stop, candidate 1 passes every gate command while candidates
// 2 and 3 are still running their agents (each a `sleep` the test finds on
// the host): the lifecycle reaches DONE long before they would end, they
// are recorded CANCELLED, and their processes are gone.
func TestBestOfN_EarlyStopCancelsTheRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := valueRepo(t)
	shared := t.TempDir()
	// A sleep no other process on the host runs: the test finds the
	// sleeping candidates by it, whatever PID namespace they run in.
	nap := fmt.Sprint(600 + time.Now().UnixNano()%100000)
	// Candidate 1 passes only once 2 and 3 are asleep and the test has
	// seen them, so the early stop always finds them running.
	agent := fmt.Sprintf(`case "$AZOLLA_CANDIDATE" in
1) while [ ! -e %[1]q/asleep-2 ] || [ ! -e %[1]q/asleep-3 ] || [ ! -e %[1]q/go ]; do sleep 0.05; done
   echo 42 > value.txt ;;
*) echo "$AZOLLA_CANDIDATE" > value.txt; touch %[1]q/asleep-$AZOLLA_CANDIDATE; exec sleep %[2]s ;;
esac`, shared, nap)
	b := setup(t, setupOptions{patch: func(p *config.PatchConfig) {
		p.Command.Run = agent
		p.Command.Binds = []config.BindConfig{{Path: shared, Mode: config.BindReadWrite}}
		p.EarlyStop = true
		p.Repositories = []config.RepositoryConfig{{Repository: repo, GateCommands: []string{valueBuilds, valueIs42}}}
	}})
	id := uniqueID("earlystop")
	b.create(t, id, bestOfN(repo, 3))
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)

	var sleepers []int
	require.Eventually(t, func() bool {
		sleepers = processesRunning("sleep", nap)
		return len(sleepers) == 2
	}, 60*time.Second, 50*time.Millisecond, "candidates 2 and 3 fall asleep (found %v)", &sleepers)
	require.NoError(t, os.WriteFile(filepath.Join(shared, "go"), nil, 0o644))
	done := b.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, done.GateResult)
	// The sleepers were stopped, not waited for: their records say
	// CANCELLED for the early stop (below), where a run left to its
	// budget would be BUDGET_EXHAUSTED, and they learn it at a heartbeat.
	for _, pid := range sleepers {
		require.Eventually(t, func() bool { return !processAlive(pid) }, 60*time.Second, 50*time.Millisecond,
			"candidate process %d is killed", pid)
	}

	wo := b.onlyWorkOrder(t, id)
	cands, err := b.store.ListCandidates(ctx, wo.WorkOrderID)
	require.NoError(t, err)
	requireEarlyStopped(t, cands)
	require.Equal(t, []bool{true, true}, gatePassed(cands[0]))
	wos, bundles, records := b.counts(t, id)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records})
	out := b.requirePatchRun(t, wo)
	require.Equal(t, cands[0].Patch, out.Content)
	b.requireAuditClean(t)
}

// Every candidate's run report counts against the objective's budget, not
// only the winner's: three candidates reporting $0.60 each on a $1 budget
// whose gate always fails spend it, so the objective pauses BUDGET_SPENT.
// (That the next round is then refused is TestBudget_...'s.)
//
// Whether the third candidate is started is not up to the test: the
// budget is checked when a candidate's activity starts, and the three
// start side by side. Candidate 3 waits for 1 and 2 to be running, so 1
// and 2 always run; 3 runs too unless both had recorded their reports
// before its activity started, when it is SKIPPED. Of the three that run,
// whichever is still running when a second report uses the budget up is
// CANCELLED: most often 3, but 3 only waits for the others to start, so
// it can finish before 1 or 2. Either way the spend is the reports of the
// candidates that finished, and a cancelled one counts as a run of
// unknown cost.
func TestBestOfN_EveryCandidatesCostCountsAgainstTheBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := valueRepo(t)
	shared := t.TempDir()
	agent := fmt.Sprintf(`touch %[1]q/ran-$AZOLLA_CANDIDATE
if [ "$AZOLLA_CANDIDATE" = 3 ]; then
  while [ ! -e %[1]q/ran-1 ] || [ ! -e %[1]q/ran-2 ]; do sleep 0.05; done
fi
echo "4$AZOLLA_CANDIDATE" > value.txt
printf '{"model":"agent-1","cost_usd":0.6,"tokens":{"input":100,"output":10}}' > "$AZOLLA_REPORT_FILE"`, shared)
	b := setup(t, setupOptions{patch: func(p *config.PatchConfig) {
		p.Command.Run = agent
		p.Command.Binds = []config.BindConfig{{Path: shared, Mode: config.BindReadWrite}}
		p.EarlyStop = false
		p.Repositories = []config.RepositoryConfig{{Repository: repo, GateCommands: []string{"echo 'not yet'; exit 1"}}}
	}})
	id := uniqueID("bestofn-budget")
	paused := b.failWithinBudget(t, id, repo, 1)
	require.Equal(t, domain.PauseBudgetSpent, paused.LastPause.Reason)

	wo := b.onlyWorkOrder(t, id)
	cands, err := b.store.ListCandidates(ctx, wo.WorkOrderID)
	require.NoError(t, err)
	require.Len(t, cands, 3)
	ran, cancelled := 0, 0
	for _, c := range cands {
		switch {
		case c.Attempt == 3 && c.Status == domain.CandidateSkipped:
			require.Contains(t, c.Why, "not started: objective "+id+" has spent $1.20 of its $1.00 budget")
			require.Nil(t, c.Report)
		case c.Status == domain.CandidateCancelled:
			require.Contains(t, c.Why, "budget ran out")
			cancelled++
		default:
			require.Equal(t, domain.CandidateDone, c.Status, "candidate %d: %s", c.Attempt, c.Why)
			require.NotNil(t, c.Report)
			require.NotNil(t, c.Report.CostUSD)
			require.InDelta(t, 0.6, *c.Report.CostUSD, 1e-9)
			require.Equal(t, []bool{false}, gatePassed(c))
			ran++
		}
	}
	require.GreaterOrEqual(t, ran, 2)
	require.LessOrEqual(t, cancelled, 1, "only the candidate still running when the budget ran out is cancelled")
	spend, err := b.store.ObjectiveSpend(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ran+cancelled, spend.Runs, "every candidate that ran is counted, the winner once")
	require.Equal(t, cancelled, spend.Unknown, "a cancelled candidate's cost is unknown")
	require.InDelta(t, 0.6*float64(ran), spend.USD, 1e-9)
	require.Equal(t, int64(100*ran), spend.Tokens.Input)
	unknown := ""
	if cancelled > 0 {
		unknown = ", plus 1 run(s) of unknown cost"
	}
	require.Contains(t, paused.LastPause.PrioritizedActions, fmt.Sprintf(
		"Spent $%.2f of its $1.00 budget (over by $%.2f)%s: raise the budget to run again", 0.6*float64(ran),
		0.6*float64(ran)-1, unknown))
	wos, bundles, records := b.counts(t, id)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records})
	b.requireAuditClean(t)
}
