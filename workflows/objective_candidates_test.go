package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// candidatesToDone approves obj-1, whose workorder runs three candidates
// answered by answer, at most parallel at a time (0: all at once), and
// returns what SelectCandidate was asked.
func candidatesToDone(t *testing.T, earlyStop bool, parallel int,
	answer func(ctx context.Context, in activities.CandidateInput) (activities.CandidateResult, error)) activities.SelectInput {
	b := setup(t)
	wo := woA
	wo.Attempts, wo.EarlyStop, wo.Parallel = 3, earlyStop, parallel
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	b.env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).Return(readied(eventA), nil).Once()
	b.env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(wo), nil).Once()
	// Under early stop a cancelled candidate may never start: the count
	// is the caller's to check.
	b.env.OnActivity(candidates.RunCandidate, mock.Anything, mock.Anything).Return(answer)
	var sel activities.SelectInput
	b.env.OnActivity(candidates.SelectCandidate, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SelectInput) (activities.RunResult, error) {
			sel = in
			return ran(wo), nil
		}).Once()
	b.env.OnActivity(steps.Gate, mock.Anything, gateIn(wo)).Return(passed(), nil).Once()
	b.updateAt(time.Minute, workflows.Approve, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})
	s, err := b.result()
	require.NoError(t, err)
	require.Equal(t, workflows.StepDone, s.Step)
	return sel
}

// Without early stop every candidate runs to its end, one that fails for
// good included, and the selection follows.
func TestObjective_EveryCandidateRunsThenTheBestIsSelected(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]bool{}
	sel := candidatesToDone(t, false, 0, func(_ context.Context, in activities.CandidateInput) (activities.CandidateResult, error) {
		mu.Lock()
		seen[in.Attempt] = true
		mu.Unlock()
		if in.Attempt == 3 {
			return activities.CandidateResult{}, temporal.NewNonRetryableApplicationError("agent crashed", "Crash", nil)
		}
		return activities.CandidateResult{Attempt: in.Attempt, Status: domain.CandidateDone, PassedAll: true}, nil
	})
	require.Equal(t, map[int]bool{1: true, 2: true, 3: true}, seen)
	require.Equal(t, activities.SelectInput{WorkOrderID: woA.WorkOrderID}, sel)
}

// With early stop, the first candidate to pass every gate command cancels
// the others, and the selection is told so.
func TestObjective_EarlyStopCancelsTheOtherCandidates(t *testing.T) {
	sel := candidatesToDone(t, true, 0, func(ctx context.Context, in activities.CandidateInput) (activities.CandidateResult, error) {
		if in.Attempt == 2 {
			return activities.CandidateResult{Attempt: 2, Status: domain.CandidateDone, PassedAll: true, Small: true}, nil
		}
		<-ctx.Done() // the others run until cancelled
		return activities.CandidateResult{}, ctx.Err()
	})
	require.Equal(t, activities.SelectInput{WorkOrderID: woA.WorkOrderID, EarlyStopped: true}, sel)
}

// A candidate whose cost used up the budget stops the others too, and the
// selection is told why.
func TestObjective_ASpentBudgetCancelsTheOtherCandidates(t *testing.T) {
	sel := candidatesToDone(t, false, 0, func(ctx context.Context, in activities.CandidateInput) (activities.CandidateResult, error) {
		if in.Attempt == 1 {
			return activities.CandidateResult{Attempt: 1, Status: domain.CandidateDone, BudgetSpent: true}, nil
		}
		<-ctx.Done()
		return activities.CandidateResult{}, ctx.Err()
	})
	require.Equal(t, activities.SelectInput{WorkOrderID: woA.WorkOrderID, BudgetStopped: true}, sel)
}

// A passing candidate whose diff is over patch.early_stop_max_diff_lines
// stops nobody: a smaller one may still pass.
func TestObjective_ALargePassingCandidateStopsNobody(t *testing.T) {
	var mu sync.Mutex
	n := 0
	sel := candidatesToDone(t, true, 0, func(_ context.Context, in activities.CandidateInput) (activities.CandidateResult, error) {
		mu.Lock()
		n++
		mu.Unlock()
		return activities.CandidateResult{Attempt: in.Attempt, Status: domain.CandidateDone, PassedAll: true}, nil
	})
	require.Equal(t, 3, n, "every candidate ran to its end")
	require.Equal(t, activities.SelectInput{WorkOrderID: woA.WorkOrderID}, sel)
}

// With patch.parallel_candidates, no more than that many candidates run at
// a time; the next starts when one ends, a failed one included.
func TestObjective_ParallelCandidatesBoundsHowManyRunAtATime(t *testing.T) {
	var mu sync.Mutex
	running, most, order := 0, 0, []int{}
	sel := candidatesToDone(t, false, 1, func(_ context.Context, in activities.CandidateInput) (activities.CandidateResult, error) {
		mu.Lock()
		running++
		most = max(most, running)
		order = append(order, in.Attempt)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		if in.Attempt == 1 {
			return activities.CandidateResult{}, temporal.NewNonRetryableApplicationError("agent crashed", "Crash", nil)
		}
		return activities.CandidateResult{Attempt: in.Attempt, Status: domain.CandidateDone, PassedAll: true}, nil
	})
	require.Equal(t, 1, most, "one candidate at a time")
	require.Equal(t, []int{1, 2, 3}, order, "each started after the one before ended, the failed one's included")
	require.Equal(t, activities.SelectInput{WorkOrderID: woA.WorkOrderID}, sel)
}

// A candidate whose cost used up the budget leaves the candidates not yet
// started unstarted.
func TestObjective_ASpentBudgetStartsNoMoreCandidates(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]bool{}
	sel := candidatesToDone(t, false, 2, func(ctx context.Context, in activities.CandidateInput) (activities.CandidateResult, error) {
		mu.Lock()
		seen[in.Attempt] = true
		mu.Unlock()
		if in.Attempt == 1 {
			return activities.CandidateResult{Attempt: 1, Status: domain.CandidateDone, BudgetSpent: true}, nil
		}
		<-ctx.Done()
		return activities.CandidateResult{}, ctx.Err()
	})
	require.True(t, seen[1])
	require.False(t, seen[3], "the third never started") // the second may not have either
	require.Equal(t, activities.SelectInput{WorkOrderID: woA.WorkOrderID, BudgetStopped: true}, sel)
}
