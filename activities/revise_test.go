package activities_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/store/storetest"
)

// prForge is a forge whose one pull request is pr (its other calls are
// not made here).
type prForge struct {
	forge.Forge
	pr forge.PullRequest
}

func (f *prForge) PullRequest(context.Context, int) (forge.PullRequest, error) { return f.pr, nil }

// oneForge gives every repository forge f.
type oneForge struct{ f forge.Forge }

func (oneForge) Has(string) bool { return true }
func (o oneForge) Open(string) (*activities.ForgeTarget, error) {
	return &activities.ForgeTarget{Forge: o.f}, nil
}

// A round of an objective whose pull request is open revises it: the run
// is told the pull request and its head as the forge has it (a commit
// someone pushed on top is kept), and whether the forge says it
// conflicts; without a forge to ask, the head the store recorded.
func TestRun_ARoundOnAnOpenPullRequestRevisesItsHeadAsTheForgeHasIt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		pushed := strings.Repeat("c", 40)
		no := false
		f := &prForge{pr: forge.PullRequest{Number: 7, Head: "azolla/obj-1", HeadSHA: pushed, Mergeable: &no,
			Conflicts: true}}
		tb.steps.Forges = oneForge{f}
		tb.newObjective(t, "obj-1", nil)
		pr := storetest.RecordOpenPullRequest(t, tb.store, "obj-1", 7)
		ev := tb.ready(t, "obj-1", activities.ReadyApprove)
		res, err := tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
		require.NoError(t, err)
		_, err = tb.steps.Run(ctx, activities.RunInput{WorkOrderID: res.WorkOrder.WorkOrderID})
		require.NoError(t, err)
		calls := tb.fake.Calls()
		rv := calls[len(calls)-1].Revise
		require.NotNil(t, rv)
		require.Equal(t, pr.URL, rv.PullRequest)
		require.Equal(t, pushed, rv.HeadSHA)
		require.True(t, rv.Conflicts)

		// A pull request whose head is another branch gives nothing: the
		// round revises the head the store recorded.
		f.pr.Head = "someone/else"
		tb.newObjective(t, "obj-2", nil)
		pr2 := storetest.RecordOpenPullRequest(t, tb.store, "obj-2", 8)
		ev = tb.ready(t, "obj-2", activities.ReadyApprove)
		res, err = tb.steps.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
		require.NoError(t, err)
		_, err = tb.steps.Run(ctx, activities.RunInput{WorkOrderID: res.WorkOrder.WorkOrderID})
		require.NoError(t, err)
		calls = tb.fake.Calls()
		rv = calls[len(calls)-1].Revise
		require.Equal(t, pr2.HeadSHA, rv.HeadSHA)
		require.False(t, rv.Conflicts)
	})
}
