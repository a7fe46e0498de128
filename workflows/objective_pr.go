package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
)

// openPullRequest opens or adopts the pull request of a PASS and upserts
// its URL (docs/pull-requests.md). Its failure does not change the
// verdict: the objective stays DONE, and the state says why there is no
// pull request.
func (w *objective) openPullRequest(ctx workflow.Context, workOrderID string) {
	if workflow.GetVersion(ctx, changePullRequest, workflow.DefaultVersion, 1) != 1 {
		return
	}
	step := w.state.Step
	w.state.Step = StepPullRequest
	defer func() { w.state.Step = step }()
	var res activities.PullRequestResult
	err := workflow.ExecuteActivity(withForgeOptions(ctx), pullRequests.OpenPullRequest,
		activities.PullRequestInput{WorkOrderID: workOrderID}).Get(ctx, &res)
	if err != nil {
		w.state.PullRequestError = err.Error()
		w.log.Warn("no pull request: the PASS stands", "work_order_id", workOrderID, "error", err)
		return
	}
	w.state.PullRequest, w.state.PullRequestError, w.prOpen = res.URL, "", true
	if err := workflow.UpsertTypedSearchAttributes(ctx, AttrPullRequest.ValueSet(res.URL)); err != nil {
		w.log.Warn("upsert AzollaPullRequest", "error", err)
	}
}

// defaultReviewPoll is how often a pull request is read until its forge's
// poll_interval is known.
const defaultReviewPoll = time.Minute

// awaitReview follows the open pull request of a DONE objective
// (docs/pull-requests.md#after-the-pull-request): every poll interval,
// at once on a wake (azolla pr sync) or a human's retry, it reads the pull
// request. Merged, the lifecycle ends confirmed; closed, it ends with a
// pause state; feedback taken into a round (auto_revise or the retry)
// begins that round.
func (w *objective) awaitReview(ctx workflow.Context) (next, error) {
	if workflow.GetVersion(ctx, changePullRequest, workflow.DefaultVersion, 1) != 1 {
		w.state.Step = StepDone
		return complete, nil
	}
	w.state.Step = StepAwaitingReview
	if w.prPoll <= 0 {
		w.prPoll = defaultReviewPoll
	}
	if workflow.GetInfo(ctx).GetContinueAsNewSuggested() && w.decision == nil {
		// Weeks of review: the history starts afresh, the pull request
		// still followed (Load finds it open).
		return refresh, nil
	}
	if _, err := workflow.AwaitWithTimeout(ctx, w.prPoll, func() bool {
		return w.decision != nil || w.wake.Len() > 0
	}); err != nil {
		return again, err
	}
	for w.wake.ReceiveAsync(nil) {
	}
	res, err := w.syncPullRequest(ctx)
	if err != nil {
		// The pull request stays followed: the next look may find the
		// forge back, or its configuration fixed.
		w.state.PullRequestError = err.Error()
		w.log.Warn("pull request not read", "error", err)
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == activities.ErrTypeForgeMissing {
			w.prPoll = max(w.prPoll, time.Hour)
		}
		return again, nil
	}
	w.prPoll, w.state.PullRequestWaiting, w.state.PullRequestError = res.PollInterval, res.Waiting, ""
	if res.Pause != nil {
		w.state.LastPause = res.Pause
	}
	switch {
	case res.State == domain.PullRequestMerged:
		w.prOpen, w.state.Step = false, StepMerged
		return complete, nil
	case res.State == domain.PullRequestClosed:
		w.prOpen, w.state.Step = false, StepDone
		return complete, nil
	case res.Revised != nil:
		w.log.Info("next round on the pull request", "event_id", res.Revised.EventID)
		w.setStatus(ctx, res.Revised.Status)
		return newRound, nil
	}
	return again, nil
}

// syncPullRequest reads the pull request once (SyncPullRequest), asking
// for the next round when a human's retry is being handled, and answers
// that retry with the round's event.
func (w *objective) syncPullRequest(ctx workflow.Context) (activities.SyncPullRequestResult, error) {
	in := activities.SyncPullRequestInput{ObjectiveID: w.state.ObjectiveID}
	d := w.decision
	if d != nil {
		in.Revise, in.By, in.Comment = true, d.By, d.Comment
	}
	var res activities.SyncPullRequestResult
	err := workflow.ExecuteActivity(withForgeOptions(ctx), pullRequests.SyncPullRequest, in).Get(ctx, &res)
	if d != nil {
		var r DecisionResult
		if res.Revised != nil {
			r.EventID = res.Revised.EventID
		}
		w.resolve(r, err)
	}
	return res, err
}
