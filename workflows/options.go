package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
)

// Activity errors no retry can fix.
var nonRetryable = []string{activities.ErrTypeNotFound, activities.ErrTypeInvalidStatus, activities.ErrTypeUnknownType,
	activities.ErrTypeInvalidRecord, activities.ErrTypeMisconfigured}

// storeStepRetry retries the store-bound steps (load, ready, reject) until
// the store answers.
func storeStepRetry() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
		MaximumInterval: 30 * time.Second, NonRetryableErrorTypes: nonRetryable}
}

// withShortOptions suits the store-bound steps in runs that schedule them
// as activities.
func withShortOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute, RetryPolicy: storeStepRetry()})
}

// withLocalOptions suits the store-bound steps run as local activities: a
// few store statements, retried like the activities they replace. An
// attempt that outlives the workflow task timeout keeps the task alive (the
// SDK heartbeats it), so the timeout is the same minute.
func withLocalOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: time.Minute, RetryPolicy: storeStepRetry()})
}

// runAttempts bounds Run's attempts: a diazotroph that keeps failing is
// gated as a FAIL rather than retried forever.
const runAttempts = 10

// withRunOptions suits Run: the heartbeat timeout is the lease, so a dead
// worker's attempt is retried elsewhere once its claim has lapsed; the
// start-to-close timeout leaves the budget room plus two leases.
func withRunOptions(ctx workflow.Context, wo activities.WorkOrderRef, lease, allowance time.Duration) workflow.Context {
	if lease <= 0 {
		lease = time.Minute
	}
	budget := time.Duration(wo.BudgetMS) * time.Millisecond
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: budget + allowance + 2*lease + time.Minute,
		HeartbeatTimeout:    lease,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: lease, MaximumAttempts: runAttempts, NonRetryableErrorTypes: nonRetryable},
	})
}

// repoStepTimeout bounds Schedule (which may clone a repository) and Gate
// (which may run a repository's gate commands, up to config.MaxGateBudget).
const repoStepTimeout = 7 * time.Hour

// withRepoOptions suits Schedule and Gate: they may read a repository or run
// gate commands for long, heartbeating as they renew their claim, so the
// heartbeat timeout (the lease) notices a dead worker long before the
// start-to-close timeout would.
func withRepoOptions(ctx workflow.Context, lease time.Duration) workflow.Context {
	if lease <= 0 {
		lease = time.Minute
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: repoStepTimeout,
		HeartbeatTimeout:    lease,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, NonRetryableErrorTypes: nonRetryable},
	})
}

// trackStepTimeout bounds ScheduleTrack (which may run a manifest's
// substrate queries), GateTrack and one page of ScanDeadlines.
const trackStepTimeout = 10 * time.Minute

// trackStepHeartbeat is the heartbeat timeout of those steps: they
// heartbeat every activities.AliveInterval, so a worker that dies in one is
// noticed within it and the step retried elsewhere (its claims, taken for
// a lease, refuse the retry until they lapse).
const trackStepHeartbeat = 6 * activities.AliveInterval

// withTrackOptions suits ScheduleTrack, GateTrack and ScanDeadlines:
// store-bound steps, retried like the others until the store answers.
func withTrackOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: trackStepTimeout, HeartbeatTimeout: trackStepHeartbeat, RetryPolicy: storeStepRetry()})
}

// Pull request step bounds: a forge that is down is asked again, with
// backoff, for a day; its rate limits set their own delay.
const (
	forgeStepTimeout  = 2 * time.Minute
	forgeStepDeadline = 24 * time.Hour
)

// withForgeOptions suits OpenPullRequest: a few calls to the forge and one
// store write. A forge that refuses (token, repository, branch) is not
// asked again.
func withForgeOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: forgeStepTimeout, ScheduleToCloseTimeout: forgeStepDeadline,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2,
			MaximumInterval: 10 * time.Minute, NonRetryableErrorTypes: append(slices.Clone(nonRetryable),
				activities.ErrTypeForgeRefused, activities.ErrTypeForgeMissing)},
	})
}
