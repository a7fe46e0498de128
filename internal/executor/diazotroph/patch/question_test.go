package patch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// askingAgent is a stand-in agent that writes half its change, then asks
// which way to go on (quoting a secret it saw) and exits; told an answer,
// it writes the rest. It copies its input to <root>/<workorder>.input.
const askingAgent = `cp "$AZOLLA_INPUT_FILE" "%[1]s/$AZOLLA_WORK_ORDER_ID.input"
if grep -q 'Answer from' "$AZOLLA_INPUT_FILE"; then echo 'second half' >> README.md; exit 0; fi
echo 'first half' >> README.md
printf 'Keep the v1 API or the v2 one?\nThe key sk-ant-canary-0451 works for both.\n' > "$AZOLLA_QUESTION_FILE"`

// An agent that asks and exits delivers no patch: the run is QUESTION,
// its question (redacted) in the bundle and its notes, its work kept as
// partial work; the round told the answer resumes it and finishes.
func TestExecute_AnAgentThatAsksKeepsItsWorkAndTheAnswerGoesOn(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.secrets = redact.New(redact.Secret{Name: "ANTHROPIC_API_KEY", Value: "sk-ant-canary-0451"})
	tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(
		patchgen.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: fmt.Sprintf(askingAgent, tb.root),
			WorktreeDiff: gitops.Git{}.WorktreeDiff})})
	req := tb.request(t, "asks", "")
	req.Objective.Generator = "command"
	req.WorkOrder.WorkOrderID = "wo-asks-1"
	req.Budget = time.Minute
	res, err := tb.p.Execute(t.Context(), req)
	require.NoError(t, err)
	requireValidBundle(t, req, res)
	require.Equal(t, domain.RunnerQuestion, res.RunnerStatus, res.Notes)
	require.Empty(t, res.Content, "a run that asks delivers nothing")
	require.Empty(t, res.Metadata.CommitSHA)
	require.Equal(t, "Keep the v1 API or the v2 one?\nThe key [redacted:ANTHROPIC_API_KEY] works for both.", res.Metadata.Question)
	require.Equal(t, res.Metadata.Question, res.Metadata.RunReport.Question, "a candidate's record knows it by its report")
	require.NotContains(t, res.Notes, "sk-ant-canary-0451")
	require.Contains(t, res.Notes, "The agent asked a question after ")
	require.NotNil(t, res.Metadata.Partial, res.Notes)
	require.Equal(t, []string{"README.md"}, res.Metadata.Partial.Files)

	next := tb.request(t, "asks", "")
	next.Objective.Generator = "command"
	next.WorkOrder.WorkOrderID = "wo-asks-2"
	next.Budget = time.Minute
	next.Snapshot.FullPromptText += "\n\nAnswer from ana:\n    v2\n"
	next.Resume = &diazotroph.Resume{WorkOrderID: req.WorkOrder.WorkOrderID, Partial: *res.Metadata.Partial,
		Why: "the agent asks a question"}
	res, err = tb.p.Execute(t.Context(), next)
	require.NoError(t, err)
	requireValidBundle(t, next, res)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)
	require.Contains(t, res.Content, "+first half")
	require.Contains(t, res.Content, "+second half")
	require.Contains(t, tb.input(t, "wo-asks-2"), "Resuming:")
}
