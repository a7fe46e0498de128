package integration

import (
	"context"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// askingAgent writes half its change, asks which API to keep and exits;
// told the answer, it writes the rest, naming the answer.
const askingAgent = `if grep -q 'Answer from' "$AZOLLA_INPUT_FILE"; then ` +
	`echo "second half: $(grep -A1 'Answer from' "$AZOLLA_INPUT_FILE" | tail -n 1 | sed 's/^ *//')" >> README.md; ` +
	`else echo 'first half' >> README.md; echo 'Keep the v1 API or the v2 one?' > "$AZOLLA_QUESTION_FILE"; fi`

// An agent asks and exits: the round is QUESTION, its half kept; the
// inbox lists the question first; the wait survives a restart of every
// process of azolla dev; `azolla objective answer` starts the next
// round, which resumes the half, is told the answer and passes.
func TestQuestion_AnAgentAsksAndTheAnswerGoesOnAfterARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := sampleRepo(t)
	d := startDevKept(t, unconfined, "AZOLLA_PATCH_GENERATOR=command", "AZOLLA_PATCH_COMMAND_RUN="+askingAgent)
	id := uniqueID("question")
	d.approve(t, id, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = repo, "main", config.GeneratorCommand
		o.Title = "Write both halves"
	})
	asked := d.waitStep(t, id, workflows.StepAwaitingAnswer)
	require.Equal(t, domain.PauseQuestion, asked.LastPause.Reason)
	require.Equal(t, "Answer the agent's question: Keep the v1 API or the v2 one?", asked.LastPause.PrioritizedActions[0])
	first, err := d.store.GetOutputBundle(ctx, "wo-"+id+"-1")
	require.NoError(t, err)
	require.Equal(t, domain.RunnerQuestion, first.RunnerStatus)
	require.NotNil(t, first.Metadata.Partial, first.Notes)

	cli := func(args ...string) (string, int) {
		cmd := exec.Command(azollaBin, args...)
		cmd.Env = d.cliEnv()
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		require.NoError(t, err)
		return string(out), 0
	}
	out, code := cli("inbox")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "QUESTION")
	require.Contains(t, out, "objective answer "+id+` "your answer"`)

	pid := d.pid()
	d.restart(t)
	require.NotEqual(t, pid, d.pid(), "a new process")
	require.Equal(t, workflows.StepAwaitingAnswer, d.waitStep(t, id, workflows.StepAwaitingAnswer).Step)
	out, code = cli("objective", "answer", id)
	require.NotEqual(t, 0, code, "an answer needs words: %s", out)
	out, code = cli("objective", "answer", id, "--by", "ana", "Keep", "v2.")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "answer "+id+": emitted ")

	done := d.waitStep(t, id, workflows.StepDone)
	require.Equal(t, domain.GatePass, done.GateResult, done.GateReason)
	_, second := secondRound(t, d.store, id)
	require.Contains(t, second.Content, "+first half")
	require.Contains(t, second.Content, "+second half: Keep v2.")
	require.Contains(t, second.Notes, "Resumed the partial work "+first.Metadata.Partial.Ref)
	out, code = cli("objective", "answer", id, "once more")
	require.Equal(t, 4, code, out)
	require.Contains(t, out, "its agent asked nothing")
	d.requireAuditClean(t)
}
