package activities_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
)

// fakeTargets answers Resolve with resolve and counts the calls.
type fakeTargets struct {
	mu      sync.Mutex
	calls   int
	resolve func(repo, branch string) (diazotroph.Target, error)
}

func (f *fakeTargets) Resolve(_ context.Context, repo, branch string) (diazotroph.Target, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	return f.resolve(repo, branch)
}

func resolvedAt(sha string, files ...string) func(repo, branch string) (diazotroph.Target, error) {
	return func(repo, branch string) (diazotroph.Target, error) {
		if branch == "" {
			branch = "trunk"
		}
		return diazotroph.Target{Repository: repo, BaseBranch: branch, CommitSHA: sha,
			Files: files, TotalFiles: len(files) + 3}, nil
	}
}

// scheduleRepo stores an objective naming a repository, approves it and
// schedules its event.
func (tb *testBundle) scheduleRepo(t *testing.T, id string, edit func(*domain.Objective)) (activities.ScheduleResult, error) {
	t.Helper()
	tb.newObjective(t, id, func(o *domain.Objective) {
		o.Repository = "/srv/app"
		if edit != nil {
			edit(o)
		}
	})
	ev := tb.ready(t, id, activities.ReadyApprove)
	return tb.steps.Schedule(context.Background(), activities.ScheduleInput{EventID: ev.EventID})
}

func TestSchedule_RepositoryObjectiveFreezesItsTarget(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		targets := &fakeTargets{resolve: resolvedAt(testSHA, "go.mod", "main.go")}
		tb.steps.Targets = targets
		res, err := tb.scheduleRepo(t, "obj-1", func(o *domain.Objective) { o.BaseBranch = "" })
		require.NoError(t, err)
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		require.Equal(t, diazotroph.PatchType, res.WorkOrder.DiazotrophType,
			"an objective naming a repository is the patch diazotroph's")

		w := tb.workOrder(t, res.WorkOrder.WorkOrderID)
		require.Equal(t, "azolla/obj-1", w.BranchName)
		snap, err := tb.store.GetContextSnapshot(ctx, w.ContextSnapshotID)
		require.NoError(t, err)
		require.Equal(t, testSHA, snap.Metadata.CommitSHA)
		require.Equal(t, "trunk", snap.Metadata.BaseBranch, "no base branch means the repository's default")
		for _, want := range []string{"the build is green", "Repository: /srv/app", "Base branch: trunk at commit " + testSHA,
			"Tracked files (2 of 5):", "  go.mod\n", "  main.go\n", "... and 3 more"} {
			require.Contains(t, snap.FullPromptText, want)
		}
		require.Equal(t, 1, targets.calls)

		// Scheduling the processed event again reads nothing.
		again, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: w.EventID})
		require.NoError(t, err)
		require.Equal(t, res, again)
		require.Equal(t, 1, targets.calls, "a processed event does not read the repository again")
	})
}

func TestSchedule_ObjectiveWithoutRepositoryKeepsTheConfiguredDiazotroph(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		targets := &fakeTargets{resolve: resolvedAt(testSHA)}
		tb.steps.Targets = targets
		wo := tb.scheduled(t, "obj-1")
		require.Equal(t, fakeType, wo.DiazotrophType)
		require.Zero(t, targets.calls)
	})
}

// A local Schedule never reads a repository: it hands the event back,
// writing nothing, not even a claim, and the activity then schedules it.
// One without a repository it schedules itself.
func TestSchedule_LocalHandsBackARepositoryObjective(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		targets := &fakeTargets{resolve: resolvedAt(testSHA, "go.mod")}
		tb.steps.Targets = targets
		tb.newObjective(t, "obj-1", func(o *domain.Objective) { o.Repository = "/srv/app" })
		ev := tb.ready(t, "obj-1", activities.ReadyApprove)

		res, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID, Local: true})
		require.NoError(t, err)
		require.Equal(t, activities.ScheduleResult{NeedsRepository: true}, res)
		require.Zero(t, targets.calls)
		require.False(t, tb.events(t, "obj-1")[0].Processed)
		require.Equal(t, domain.StatusTodo, tb.objective(t, "obj-1").Status)
		require.Empty(t, tb.workOrders(t, "obj-1"))
		_, err = tb.store.GetClaim(ctx, domain.ResourceEvent, ev.EventID)
		require.ErrorIs(t, err, domain.ErrNotFound, "no claim taken")

		res, err = tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
		require.NoError(t, err)
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		require.Equal(t, 1, targets.calls)

		// Once processed, a local call returns the stored outcome.
		again, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID, Local: true})
		require.NoError(t, err)
		require.Equal(t, res, again)

		tb.newObjective(t, "obj-2", nil)
		ev2 := tb.ready(t, "obj-2", activities.ReadyApprove)
		res, err = tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev2.EventID, Local: true})
		require.NoError(t, err)
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		require.False(t, res.NeedsRepository)
		require.Equal(t, 1, targets.calls)
		// Its claim was taken and given back at the write's one commit.
		c := tb.requireReleased(t, domain.ResourceEvent, ev2.EventID)
		require.Equal(t, int64(2), c.ClaimVersion)
	})
}

func TestSchedule_BadTargetBlocksTheObjectiveUntilUnblocked(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		// As git reports it: over two lines, with a control character.
		bad := fmt.Errorf("repository /srv/app has no branch %q: %w\nfatal: couldn't find remote ref \x1b[1mmain",
			"main", diazotroph.ErrBadTarget)
		targets := &fakeTargets{resolve: func(string, string) (diazotroph.Target, error) { return diazotroph.Target{}, bad }}
		tb.steps.Targets = targets
		res, err := tb.scheduleRepo(t, "obj-1", nil)
		require.NoError(t, err)
		require.Equal(t, domain.ReasonBlocked, res.Reason)
		require.Equal(t, domain.StatusBlocked, res.Status)
		o := tb.objective(t, "obj-1")
		require.Equal(t, []string{`repository /srv/app has no branch "main": bad target; fatal: couldn't find remote ref \x1b[1mmain`},
			o.Blockers, "the blocker says what to fix, on one safe line")
		require.NotNil(t, res.Pause)
		require.Contains(t, res.Pause.PrioritizedActions[0], `has no branch "main"`)
		require.Empty(t, tb.workOrders(t, "obj-1"))

		// The human pushes the branch and unblocks: the target is read again.
		targets.resolve = resolvedAt(testSHA, "README.md")
		ev := tb.ready(t, "obj-1", activities.ReadyUnblock)
		res, err = tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
		require.NoError(t, err)
		require.Equal(t, domain.ReasonScheduled, res.Reason)
		require.Equal(t, 2, targets.calls)
	})
}

func TestSchedule_UnreachableRepositoryIsRetriedAndWritesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		tb.steps.Targets = &fakeTargets{resolve: func(string, string) (diazotroph.Target, error) {
			return diazotroph.Target{}, errors.New("ssh: connect to host git.example.com: connection refused")
		}}
		_, err := tb.scheduleRepo(t, "obj-1", nil)
		requireRetryable(t, err)
		require.Contains(t, err.Error(), "connection refused")
		ev := tb.events(t, "obj-1")
		require.Len(t, ev, 1)
		require.False(t, ev[0].Processed)
		require.Equal(t, domain.StatusTodo, tb.objective(t, "obj-1").Status)
		tb.requireReleased(t, domain.ResourceEvent, ev[0].EventID)
	})
}

func TestSchedule_RepositoryWithoutTargetsIsMisconfigured(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		_, err := tb.scheduleRepo(t, "obj-1", nil)
		requirePermanent(t, err, activities.ErrTypeMisconfigured)
		require.False(t, tb.events(t, "obj-1")[0].Processed)
	})
}

// checkingDiazotroph is a fake with gate checks of its own.
type checkingDiazotroph struct {
	*fakeDiazotroph
	mu     sync.Mutex
	checks []diazotroph.Check
	check  func(diazotroph.Check) (diazotroph.Verdict, error)
}

func (c *checkingDiazotroph) Check(_ context.Context, in diazotroph.Check) (diazotroph.Verdict, error) {
	c.mu.Lock()
	c.checks = append(c.checks, in)
	c.mu.Unlock()
	return c.check(in)
}

func withChecks(tb *testBundle, check func(diazotroph.Check) (diazotroph.Verdict, error)) *checkingDiazotroph {
	c := &checkingDiazotroph{fakeDiazotroph: tb.fake, check: check}
	tb.steps.Diazotrophs.Register(c)
	return c
}

func TestGate_DiazotrophChecksJudgeABundleThatPassedTheBuiltInChecks(t *testing.T) {
	cases := []struct {
		name       string
		verdict    diazotroph.Verdict
		wantResult string
		wantReason []string
	}{
		{"pass", diazotroph.Verdict{Pass: true, Reason: "gate commands passed: make test"}, domain.GatePass,
			[]string{"output bundle valid", "; gate commands passed: make test"}},
		{"fail", diazotroph.Verdict{Reason: "gate command \"make test\" exited 2\noutput tail:\nFAIL x_test.go"}, domain.GateFail,
			[]string{"gate command \"make test\" exited 2\noutput tail:\nFAIL x_test.go"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, tb *testBundle) {
				c := withChecks(tb, func(diazotroph.Check) (diazotroph.Verdict, error) { return tc.verdict, nil })
				wo := tb.runWith(t, okResult)
				res, err := tb.steps.Gate(context.Background(), activities.GateInput{WorkOrderID: wo.WorkOrderID})
				require.NoError(t, err)
				require.Equal(t, tc.wantResult, res.GateResult)
				for _, want := range tc.wantReason {
					require.Contains(t, res.GateReason, want)
				}
				if !tc.verdict.Pass {
					require.Equal(t, `Review gate failure reason: gate command "make test" exited 2`,
						res.Pause.PrioritizedActions[0], "the action quotes the reason's first line")
				}
				require.Len(t, c.checks, 1)
				got := c.checks[0]
				require.Equal(t, wo.WorkOrderID, got.WorkOrder.WorkOrderID)
				require.Equal(t, "obj-1", got.Objective.ObjectiveID)
				require.Equal(t, got.WorkOrder.ContextSnapshotID, got.Snapshot.ContextSnapshotID)
				require.True(t, strings.HasPrefix(got.Bundle.Content, "diff --git"))
			})
		})
	}
}

func TestGate_DiazotrophChecksSkipABundleThatFailedTheBuiltInChecks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		c := withChecks(tb, func(diazotroph.Check) (diazotroph.Verdict, error) {
			return diazotroph.Verdict{Pass: true}, nil
		})
		wo := tb.runWith(t, returning(diazotroph.Result{Title: "t", RunnerStatus: domain.RunnerApplyFailed,
			Notes: "patch does not apply"}))
		res, err := tb.steps.Gate(context.Background(), activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GateFail, res.GateResult)
		require.Empty(t, c.checks)
	})
}

func TestGate_ChecksThatCannotRunAreRetriedAndWriteNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		withChecks(tb, func(diazotroph.Check) (diazotroph.Verdict, error) {
			return diazotroph.Verdict{}, errors.New("mirror fetch failed")
		})
		wo := tb.runWith(t, okResult)
		_, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		requireRetryable(t, err)
		_, err = tb.store.GetRunRecord(ctx, wo.WorkOrderID)
		require.ErrorIs(t, err, domain.ErrNotFound)
		require.Equal(t, domain.StatusInProgress, tb.objective(t, "obj-1").Status)
		tb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)
	})
}
