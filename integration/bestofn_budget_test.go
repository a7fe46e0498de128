package integration

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
)

// With one candidate at a time (patch.parallel_candidates) and a budget
// that covers two candidates' reports ($0.70 each of $1.50), the third is
// never started: once the first two have reported, $0.10 is left, less
// than a candidate costs, and its record says so. (Two at a time would
// start the third as soon as the first ended, with $0.80 left.) The
// budget is not spent, so the round ends as an ordinary FAIL.
func TestBestOfN_ABudgetThatCoversTwoCandidatesLeavesTheThirdUnstarted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := valueRepo(t)
	agent := `echo "4$AZOLLA_CANDIDATE" > value.txt
printf '{"model":"agent-1","cost_usd":0.7,"tokens":{"input":100,"output":10}}' > "$AZOLLA_REPORT_FILE"`
	b := setup(t, setupOptions{patch: func(p *config.PatchConfig) {
		p.Command.Run = agent
		p.EarlyStop = false
		p.ParallelCandidates = 1
		p.Repositories = []config.RepositoryConfig{{Repository: repo, GateCommands: []string{"echo 'not yet'; exit 1"}}}
	}})
	id := uniqueID("bestofn-cover")
	paused := b.failWithinBudget(t, id, repo, 1.5)
	require.NotEqual(t, domain.PauseBudgetSpent, paused.LastPause.Reason, "$1.40 of $1.50 is not spent")

	wo := b.onlyWorkOrder(t, id)
	cands, err := b.store.ListCandidates(ctx, wo.WorkOrderID)
	require.NoError(t, err)
	require.Len(t, cands, 3)
	for _, c := range cands[:2] {
		require.Equal(t, domain.CandidateDone, c.Status, "candidate %d: %s", c.Attempt, c.Why)
		require.InDelta(t, 0.7, *c.Report.CostUSD, 1e-9)
	}
	require.Equal(t, domain.CandidateSkipped, cands[2].Status)
	require.Equal(t, "not started: $0.10 is left of the objective's budget, less than the $0.70 a candidate has cost so far (2 of them)",
		cands[2].Why)
	require.Nil(t, cands[2].Report)
	spend, err := b.store.ObjectiveSpend(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 2, spend.Runs)
	require.InDelta(t, 1.4, spend.USD, 1e-9)
	wos, bundles, records := b.counts(t, id)
	require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records})
	b.requireAuditClean(t)
}
