package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
)

// A budget that covers two candidates' reports: the third is not started,
// and its record says why, though the budget is not spent yet.
func TestCandidates_NotStartedWhenWhatIsLeftCannotCoverAnother(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		f := &fakeCandidates{byK: map[int]patch.Candidate{
			1: cand("diff --git a/x b/x\n+a\n", 0, 1, 1, 0, 0.7),
			2: cand("diff --git a/x b/x\n+b\n", 0, 1, 1, 0, 0.7),
			3: cand("diff --git a/x b/x\n+c\n", 1, 1, 1, 0, 0.7),
		}}
		tb.cands.Runner = f
		budget := 1.5
		wo := tb.bestOfN(t, 3, &budget)
		for k := 1; k <= 2; k++ {
			r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: k})
			require.NoError(t, err)
			require.Equal(t, domain.CandidateDone, r.Status)
			require.False(t, r.BudgetSpent, "$1.40 of $1.50: not spent")
		}
		r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 3})
		require.NoError(t, err)
		require.Equal(t, domain.CandidateSkipped, r.Status)
		require.Equal(t, []int{1, 2}, f.ran, "the third never ran")
		c3, err := tb.store.GetCandidate(ctx, wo.WorkOrderID, 3)
		require.NoError(t, err)
		require.Equal(t, "not started: $0.10 is left of the objective's budget, less than the $0.70 a candidate has cost so far (2 of them)", c3.Why)

		_, err = tb.cands.SelectCandidate(ctx, activities.SelectInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, 1, f.delivered.Attempt, "both failed alike: the earliest")
		tb.requireAuditClean(t)
	})
}

// Candidates held back by patch.parallel_candidates and never started,
// because another passed first, are recorded as not started: the
// workorder has one record per attempt.
func TestCandidates_TheOnesNeverStartedAreRecordedSkipped(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		f := &fakeCandidates{byK: map[int]patch.Candidate{1: cand("diff --git a/x b/x\n+a\n", 1, 1, 1, 0, 0.1)}}
		tb.cands.Runner = f
		wo := tb.bestOfN(t, 3, nil)
		r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 1})
		require.NoError(t, err)
		require.True(t, r.PassedAll)
		_, err = tb.cands.SelectCandidate(ctx, activities.SelectInput{WorkOrderID: wo.WorkOrderID, EarlyStopped: true})
		require.NoError(t, err)
		cs, err := tb.store.ListCandidates(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Len(t, cs, 3)
		for _, c := range cs[1:] {
			require.Equal(t, domain.CandidateSkipped, c.Status)
			require.Equal(t, "not started: another candidate passed every gate command first", c.Why)
		}
		b, err := tb.store.GetOutputBundle(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Contains(t, b.Notes, "candidate 3: SKIPPED: not started")
		tb.requireAuditClean(t)
	})
}
