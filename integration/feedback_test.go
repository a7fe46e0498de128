package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// A coding agent that can only fix the build when it is told how it broke:
// it writes the symbol the gate's build wants only if the gate's failure
// text is in its input. Its first run fails the gate; the retry's input
// carries the gate reason, the output tail and the human's comment, so the
// same agent on the same objective reaches DONE.
func TestPatch_RetryGivesTheAgentTheGateFailureAndTheComment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := sampleRepo(t)
	inputs := t.TempDir()
	// The agent keeps a copy of each input it gets, for the assertions.
	agent := fmt.Sprintf(`n=$(ls %[1]q | wc -l); cp "$AZOLLA_INPUT_FILE" %[1]q/input-$n.txt
if grep -q 'undefined: FROB42' "$AZOLLA_INPUT_FILE"; then echo 'FROB42 = 1' > frob.txt; else echo 'FROB = 1' > frob.txt; fi`, inputs)
	gate := `grep -q FROB42 frob.txt || { echo "frob.txt:1: undefined: FROB42"; exit 1; }`
	b := setup(t, setupOptions{patch: func(p *config.PatchConfig) {
		p.Command.Run = agent
		p.Command.Binds = []config.BindConfig{{Path: inputs, Mode: config.BindReadWrite}}
		p.Repositories = []config.RepositoryConfig{{Repository: repo, GateCommands: []string{gate}}}
	}})
	id := uniqueID("feedback")
	b.create(t, id, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = repo, "main", config.GeneratorCommand
		o.Title = "Define the frob constant"
	})
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	failed := b.waitStep(t, id, workflows.StepAwaitingRetry)
	require.Equal(t, domain.GateFail, failed.GateResult)
	require.Contains(t, failed.GateReason, "undefined: FROB42")

	_, err = b.starter.Decide(ctx, id, workflows.Retry,
		workflows.Decision{By: "ana", Comment: "the build wants FROB42, not FROB"})
	require.NoError(t, err)
	done := b.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, done.GateResult)

	first, err := os.ReadFile(filepath.Join(inputs, "input-0.txt"))
	require.NoError(t, err)
	require.NotContains(t, string(first), "FROB42", "the first run had nothing to go on")
	second, err := os.ReadFile(filepath.Join(inputs, "input-1.txt"))
	require.NoError(t, err)
	for _, want := range []string{"judged FAIL", "frob.txt:1: undefined: FROB42", "Comment from ana",
		"the build wants FROB42, not FROB"} {
		require.Contains(t, string(second), want, "the retry's input file tells the agent")
	}

	wos, err := b.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	require.Len(t, wos, 2)
	snap, err := b.store.GetContextSnapshot(ctx, wos[1].ContextSnapshotID)
	require.NoError(t, err)
	require.Len(t, snap.RelatedYieldRefs, 2, "the snapshot freezes what the run drew on")
	require.Equal(t, wos[0].WorkOrderID, snap.RelatedYieldRefs[0].Ref)
	require.Equal(t, "ana", snap.RelatedYieldRefs[1].By)
	b.requirePatchRun(t, wos[1])
	b.requireAuditClean(t)
}
