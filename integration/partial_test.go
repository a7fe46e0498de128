package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// An agent that writes half of its change and then outlives its budget:
// the round is BUDGET_EXHAUSTED with its half kept on a partial ref; the
// retry's round starts with that half in its worktree, writes the rest and
// passes, and its patch is the whole change.
func TestPatch_ARoundWhoseBudgetRanOutIsResumedByTheNext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := sampleRepo(t)
	agent := `if grep -q 'first half' README.md; then echo 'second half' >> README.md; else echo 'first half' >> README.md; sleep 120; fi`
	b := setup(t, setupOptions{patch: func(p *config.PatchConfig) {
		p.Command.Run = agent
		p.Repositories = []config.RepositoryConfig{{Repository: repo}}
	}, configure: func(c *config.Config) { c.Lifecycle.Budget = 15 * time.Second }})
	id := b.approveHalves(t, "partial", repo)
	failed := b.waitStep(t, id, workflows.StepAwaitingRetry)
	require.Contains(t, failed.GateReason, "budget exhausted")

	wos, err := b.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	require.Len(t, wos, 1)
	first, err := b.store.GetOutputBundle(ctx, wos[0].WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, domain.RunnerBudgetExhausted, first.RunnerStatus)
	require.NotNil(t, first.Metadata.Partial, first.Notes)
	require.Equal(t, []string{"README.md"}, first.Metadata.Partial.Files)

	_, err = b.starter.Decide(ctx, id, workflows.Retry, workflows.Decision{By: "ana"})
	require.NoError(t, err)
	done := b.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, done.GateResult)
	w, second := secondRound(t, b.store, id)
	require.Contains(t, second.Content, "+first half")
	require.Contains(t, second.Content, "+second half")
	require.True(t, strings.Contains(second.Notes, "Resumed the partial work "+first.Metadata.Partial.Ref), second.Notes)
	b.requirePatchRun(t, w)
	b.requireAuditClean(t)
	recordHistories(t, b, "partial_resume", id)
}

// An agent that asks a question keeps its half as partial work and its
// lifecycle waits for the answer; the answer's round resumes the half,
// is told the answer, and passes.
func TestPatch_AnAgentsQuestionIsAnsweredAndTheRoundGoesOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := sampleRepo(t)
	b := setup(t, setupOptions{patch: func(p *config.PatchConfig) {
		p.Command.Run = askingAgent
		p.Repositories = []config.RepositoryConfig{{Repository: repo}}
	}})
	id := b.approveHalves(t, "question", repo)
	asked := b.waitStep(t, id, workflows.StepAwaitingAnswer)
	require.Equal(t, domain.PauseQuestion, asked.LastPause.Reason)

	_, err := b.starter.Decide(ctx, id, workflows.Retry, workflows.Decision{By: "ana", Comment: "Keep v2.", Answer: true})
	require.NoError(t, err)
	done := b.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, done.GateResult, done.GateReason)
	w, second := secondRound(t, b.store, id)
	require.Contains(t, second.Content, "+second half: Keep v2.")
	b.requirePatchRun(t, w)
	b.requireAuditClean(t)
	recordHistories(t, b, "question_answered", id)
}

// approveHalves creates an objective (its id from prefix) that writes both
// halves on repo with the command generator, and approves it.
func (b *bundle) approveHalves(t *testing.T, prefix, repo string) string {
	t.Helper()
	id := uniqueID(prefix)
	b.create(t, id, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = repo, "main", config.GeneratorCommand
		o.Title = "Write both halves"
	})
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := b.starter.Decide(context.Background(), id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	return id
}

// secondRound is the second and last workorder of objective id, and its
// bundle.
func secondRound(t *testing.T, s store.Store, id string) (*domain.WorkOrder, *domain.OutputBundle) {
	t.Helper()
	wos, err := s.ListWorkOrders(context.Background(), store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	require.Len(t, wos, 2)
	b, err := s.GetOutputBundle(context.Background(), wos[1].WorkOrderID)
	require.NoError(t, err)
	return wos[1], b
}
