package activities_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/lifecycle/pause"
)

// asked is a run whose agent asked a question and kept its work.
var asked = domain.BundleMetadata{Question: "Keep the v1 API or the v2 one?\nBoth are used.",
	Partial: &domain.PartialWork{Ref: "refs/azolla/obj-1/partial/wo-obj-1-1", CommitSHA: testSHA,
		Files: []string{"api.go"}, FilesChanged: 1, Bytes: 120}}

// A run that asked is a FAIL that waits for its answer: a QUESTION pause
// whose first action is the answer; an answer without words, or to an
// objective whose agent asked nothing, is refused and changes nothing;
// the answer's round is told the question and the answer.
func TestGate_AQuestionWaitsForItsAnswer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		wo := tb.runWith(t, returning(noPatch(domain.RunnerQuestion, asked)))
		res, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, res.GateResult)
		require.Equal(t, "the agent asks a question: Keep the v1 API or the v2 one?; Both are used.", res.GateReason)
		require.Equal(t, domain.PauseQuestion, res.Pause.Reason)
		require.Equal(t, []string{pause.Answer, pause.PartialWork}, res.Pause.ActionKinds)
		require.Equal(t, `Answer the agent's question: Keep the v1 API or the v2 one?\x0aBoth are used.`,
			res.Pause.PrioritizedActions[0])
		require.Equal(t, `azolla objective answer obj-1 "your answer"`, pause.Command("azolla", &res.Pause, 0))
		require.Equal(t, "/azolla answer <your answer>", pause.ForgeCommand(&res.Pause, 0))
		o := tb.objective(t, "obj-1")
		require.Equal(t, domain.StatusTodo, o.Status)

		_, err = tb.steps.Ready(ctx, activities.ReadyInput{ObjectiveID: "obj-1", Mode: activities.ReadyRetry,
			By: "ana", Comment: " \n", Answer: true})
		require.ErrorContains(t, err, "an answer needs words")
		require.Equal(t, o, tb.objective(t, "obj-1"), "a refused answer changes nothing")

		r, err := tb.steps.Ready(ctx, activities.ReadyInput{ObjectiveID: "obj-1", Mode: activities.ReadyRetry,
			By: "ana", Comment: "v2: v1 goes next release", Answer: true})
		require.NoError(t, err)
		sch, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: r.EventID})
		require.NoError(t, err)
		require.NotNil(t, sch.WorkOrder)
		w := tb.workOrder(t, sch.WorkOrder.WorkOrderID)
		snap, err := tb.store.GetContextSnapshot(ctx, w.ContextSnapshotID)
		require.NoError(t, err)
		require.Len(t, snap.RelatedYieldRefs, 2)
		require.Equal(t, domain.YieldQuestion, snap.RelatedYieldRefs[0].Kind)
		require.Equal(t, wo.WorkOrderID, snap.RelatedYieldRefs[0].Ref)
		require.Equal(t, domain.YieldHumanComment, snap.RelatedYieldRefs[1].Kind)
		require.Contains(t, snap.FullPromptText, "In attempt "+wo.WorkOrderID+" you stopped to ask a human:\n"+
			"    Keep the v1 API or the v2 one?\n    Both are used.\n")
		require.Contains(t, snap.FullPromptText, "Answer from ana:\n    v2: v1 goes next release\n")
		require.NotContains(t, snap.FullPromptText, "Do not repeat its mistake", "asking is no mistake")
	})
}

func TestReady_AnAnswerWithNoQuestionWaitingIsRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		wo := tb.runWith(t, returning(noPatch(domain.RunnerBudgetExhausted, domain.BundleMetadata{})))
		_, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		o := tb.objective(t, "obj-1")
		_, err = tb.steps.Ready(ctx, activities.ReadyInput{ObjectiveID: "obj-1", Mode: activities.ReadyRetry,
			By: "ana", Comment: "v2", Answer: true})
		require.ErrorIs(t, err, pause.ErrNoQuestion)
		require.ErrorContains(t, err, "objective obj-1 is TODO and its agent asked nothing")
		require.Equal(t, o, tb.objective(t, "obj-1"))
		require.Len(t, tb.events(t, "obj-1"), 1, "no event emitted")
	})
}

// noPatch is a run's result with no content.
func noPatch(status string, meta domain.BundleMetadata) diazotroph.Result {
	return diazotroph.Result{Title: "No patch", Notes: "the run ended " + status, Metadata: meta, RunnerStatus: status}
}

// A candidate's question waits only when no candidate passes: then the
// workorder's bundle is QUESTION and the gate pauses for the answer;
// with a patch that passes, the winner is delivered and the question is
// one candidate's status among the others.
func TestCandidates_AQuestionWaitsOnlyWhenNoCandidatePasses(t *testing.T) {
	askingCand := patch.Candidate{Generator: "command", RunnerStatus: domain.RunnerQuestion,
		Report: &domain.RunReport{Question: "Which database?", Source: domain.ReportFromExecutor}}
	for _, tc := range []struct {
		name   string
		second patch.Candidate
		want   string
	}{
		{"another passes", cand("diff --git a/x b/x\n+right\n", 1, 1, 1, time.Second, 0.1), domain.RunnerOK},
		{"none passes", patch.Candidate{Generator: "command", RunnerStatus: domain.RunnerOK}, domain.RunnerQuestion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				ctx := context.Background()
				tb.cands.Runner = &fakeCandidates{byK: map[int]patch.Candidate{1: askingCand, 2: tc.second}}
				wo := tb.bestOfN(t, 2, nil)
				for k := 1; k <= 2; k++ {
					_, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: k})
					require.NoError(t, err)
				}
				run, err := tb.cands.SelectCandidate(ctx, activities.SelectInput{WorkOrderID: wo.WorkOrderID})
				require.NoError(t, err)
				require.Equal(t, tc.want, run.RunnerStatus)
				g, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
				require.NoError(t, err)
				if tc.want == domain.RunnerOK {
					require.Equal(t, domain.GatePass, g.GateResult)
					return
				}
				require.Equal(t, domain.PauseQuestion, g.Pause.Reason)
				require.Equal(t, "Answer the agent's question: Which database?", g.Pause.PrioritizedActions[0])
				b, err := tb.store.GetOutputBundle(ctx, wo.WorkOrderID)
				require.NoError(t, err)
				require.Contains(t, b.Notes, "Candidate 1 asked a question and no candidate produced a patch: Which database?")
				tb.requireAuditClean(t)
			})
		})
	}
}
