package workflows_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

const prURL = "https://forge.example/team/app/pulls/7"

// approvedToPass mocks an approval that runs woA to a PASS asking for a
// pull request when pr is true.
func (b *testBundle) approvedToPass(pr bool) {
	env, yes := b.env, workflows.Decision{By: "ana"}
	env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, yes)).Return(readied(eventA), nil).Once()
	env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
	g := passed()
	g.PullRequest = pr
	env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(g, nil).Once()
	b.signalAt(time.Minute, workflows.Approve, yes)
}

// A PASS on a repository with a forge gets its pull request: the lifecycle
// opens it, keeps its URL in its state and upserts AzollaPullRequest.
func TestObjective_PassWithAForgeOpensThePullRequest(t *testing.T) {
	b := setup(t)
	b.approvedToPass(true)
	b.env.OnActivity(pullRequests.OpenPullRequest, mock.Anything, activities.PullRequestInput{WorkOrderID: woA.WorkOrderID}).
		Return(activities.PullRequestResult{Number: 7, URL: prURL, Created: true}, nil).Once()
	b.env.OnActivity(pullRequests.SyncPullRequest, mock.Anything, activities.SyncPullRequestInput{ObjectiveID: objID}).
		Return(synced(domain.PullRequestMerged), nil).Once()
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	st, err := b.result()
	require.NoError(t, err)
	require.Equal(t, workflows.StepMerged, st.Step)
	require.Equal(t, prURL, st.PullRequest)
	require.Empty(t, st.PullRequestError)
	require.Equal(t, prURL, b.attrs[workflows.AttrPullRequest.GetName()])
}

// A forge that refuses leaves the PASS as it is: the objective is DONE and
// the state says why there is no pull request.
func TestObjective_AForgeRefusalLeavesThePass(t *testing.T) {
	b := setup(t)
	b.approvedToPass(true)
	b.env.OnActivity(pullRequests.OpenPullRequest, mock.Anything, mock.Anything).Return(activities.PullRequestResult{},
		temporal.NewNonRetryableApplicationError("the forge refused the token", activities.ErrTypeForgeRefused,
			errors.New("401"))).Once()
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	st, err := b.result()
	require.NoError(t, err)
	require.Equal(t, domain.StatusDone, st.Status)
	require.Contains(t, st.PullRequestError, "the forge refused the token")
	require.NotContains(t, b.attrs, workflows.AttrPullRequest.GetName())
}

// Without a forge, or in a run from before the change, no pull request
// step runs (an unexpected activity fails the test).
func TestObjective_NoPullRequestWithoutAForgeOrBeforeTheChange(t *testing.T) {
	t.Run("no forge", func(t *testing.T) {
		b := setup(t)
		b.approvedToPass(false)
		b.execute(workflows.ObjectiveInput{ObjectiveID: objID})
		st, err := b.result()
		require.NoError(t, err)
		require.Empty(t, st.PullRequest)
	})
	t.Run("before the change", func(t *testing.T) {
		b := setup(t)
		b.env.OnGetVersion("pull-request", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
		b.approvedToPass(true)
		b.execute(workflows.ObjectiveInput{ObjectiveID: objID})
		st, err := b.result()
		require.NoError(t, err)
		require.Empty(t, st.PullRequest)
	})
}

// opened mocks the pull request step answering prURL.
func (b *testBundle) opened() {
	b.env.OnActivity(pullRequests.OpenPullRequest, mock.Anything, activities.PullRequestInput{WorkOrderID: woA.WorkOrderID}).
		Return(activities.PullRequestResult{Number: 7, URL: prURL, Created: true}, nil).Once()
}

func synced(state domain.PullRequestState) activities.SyncPullRequestResult {
	return activities.SyncPullRequestResult{State: state, URL: prURL, PollInterval: 30 * time.Second}
}

// After the pull request opens the lifecycle follows it: each poll reads
// it, and its merge ends the lifecycle confirmed.
func TestObjective_MergeEndsTheLifecycle(t *testing.T) {
	b := setup(t)
	b.approvedToPass(true)
	b.opened()
	sync := activities.SyncPullRequestInput{ObjectiveID: objID}
	b.env.OnActivity(pullRequests.SyncPullRequest, mock.Anything, sync).Return(synced(domain.PullRequestOpen), nil).Twice()
	b.env.OnActivity(pullRequests.SyncPullRequest, mock.Anything, sync).Return(synced(domain.PullRequestMerged), nil).Once()
	waiting := b.queryAt(90 * time.Second)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	st, err := b.result()
	require.NoError(t, err)
	require.Equal(t, workflows.StepAwaitingReview, waiting.Step)
	require.Equal(t, workflows.StepMerged, st.Step)
	require.Equal(t, domain.StatusDone, st.Status)
}

// Feedback a forge holds starts a round when the step takes it
// (auto_revise): the lifecycle continues as new with the objective TODO.
func TestObjective_FeedbackTakenStartsTheNextRound(t *testing.T) {
	b := setup(t)
	b.approvedToPass(true)
	b.opened()
	revised := synced(domain.PullRequestOpen)
	revised.Revised = &activities.ReadyResult{EventID: eventB, Status: domain.StatusTodo, StatusSeq: 4}
	b.env.OnActivity(pullRequests.SyncPullRequest, mock.Anything, activities.SyncPullRequestInput{ObjectiveID: objID}).
		Return(revised, nil).Once()
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	next := b.continuedAsNew()
	require.Equal(t, 1, next.Round)
	require.Equal(t, string(domain.StatusTodo), b.statuses[len(b.statuses)-1])
}

// A human's retry while the pull request waits for review asks for the
// next round at once, with their comment; the update answers with the
// round's event. A closed pull request ends the lifecycle with its pause.
func TestObjective_RetryDuringReviewAsksForTheNextRound(t *testing.T) {
	b := setup(t)
	b.approvedToPass(true)
	b.opened()
	yes := workflows.Decision{By: "ana", Comment: "also handle the empty case"}
	revised := synced(domain.PullRequestOpen)
	revised.Revised = &activities.ReadyResult{EventID: eventB, Status: domain.StatusTodo, StatusSeq: 4}
	b.env.OnActivity(pullRequests.SyncPullRequest, mock.Anything, activities.SyncPullRequestInput{ObjectiveID: objID,
		Revise: true, By: "ana", Comment: "also handle the empty case"}).Return(revised, nil).Once()
	u := b.updateAt(70*time.Second, workflows.Retry, yes)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	b.continuedAsNew()
	require.NoError(t, u.err)
	require.True(t, u.completed, "%s", u)
	require.Equal(t, eventB, u.result.EventID)
}

func TestObjective_ClosedPullRequestEndsWithItsPause(t *testing.T) {
	b := setup(t)
	b.approvedToPass(true)
	b.opened()
	closed := synced(domain.PullRequestClosed)
	closed.Pause = &domain.PauseState{PauseStateID: "ps-obj-1-3-PULL_REQUEST_CLOSED", ObjectiveID: objID,
		Reason: domain.PausePullRequestClosed, PrioritizedActions: []string{"Pull request closed"}}
	b.env.OnActivity(pullRequests.SyncPullRequest, mock.Anything, activities.SyncPullRequestInput{ObjectiveID: objID}).
		Return(closed, nil).Once()
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	st, err := b.result()
	require.NoError(t, err)
	require.Equal(t, domain.PausePullRequestClosed, st.LastPause.Reason)
	require.Equal(t, workflows.StepDone, st.Step)
}
