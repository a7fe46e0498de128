// Package activities holds every I/O step of the objective lifecycle: the
// lifecycle's readiness, scheduler, runner and gate steps (docs/protocol/lifecycle.md), as methods on one
// Lifecycle struct that carries their dependencies. Workflows call them by
// method value; nothing here imports the workflow SDK.
//
// Each step follows the claims' order (docs/protocol/claims.md): claim the resource, write the terminal
// state in one transaction fenced by the claim, then release. Each is
// idempotent: run again after a partial failure or on a retry it finds the
// stored outcome and returns it, writing nothing.
package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// Lifecycle is the receiver of every lifecycle activity.
type Lifecycle struct {
	Store       store.Store
	Claims      *claim.Bridge
	Diazotrophs *diazotroph.Registry
	// Identity names this worker in claim owner ids (default
	// DefaultIdentity).
	Identity string
	// Diazotroph is the diazotroph_type the scheduler writes for objectives
	// that name no repository; those that do get diazotroph.PatchType.
	Diazotroph string
	// Targets resolves the repository of objectives that name one.
	Targets diazotroph.Targets
	// Budget becomes each new workorder's budget_ms.
	Budget time.Duration
	// LeaseTTL is the lease of Schedule and Gate claims, and the heartbeat
	// timeout (and so the lease) of Run.
	LeaseTTL time.Duration
	// Retention is how long a finished workorder's workspace is kept
	// (patch.retention): the gate tells the human when a branch that was
	// not pushed will go with it. Zero: workspaces are kept, no warning.
	Retention time.Duration
	// Remote, when set, routes some diazotroph types to remote workers
	// through the control plane instead of running them here.
	Remote *Remote
	// Tasks configures the task-management activities (track.go).
	Tasks TaskOptions
	// Now is the clock of every timestamp written (default time.Now).
	Now func() time.Time
	// Observer, when set, is told what the steps wrote (metrics).
	Observer Observer
	// Forges gives each repository's forge, for the pull request of a
	// PASS; nil when no repository has one.
	Forges Forges
	// Candidates runs the candidates of objectives with several attempts
	// (best-of-N); EarlyStop has the first candidate that passes every
	// gate command cancel the others.
	Candidates Candidates
	EarlyStop  bool
	// EarlyStopMaxDiffLines, above 0, bounds the diff of a candidate
	// that stops the others.
	EarlyStopMaxDiffLines int
	// ParallelCandidates, above 0, is how many of a workorder's
	// candidates run at a time; 0 runs them all at once.
	ParallelCandidates int
}

// Observer is told what the lifecycle's steps wrote, for metrics. It must
// not block.
type Observer interface {
	// WorkOrderExecuted: a workorder was newly marked EXECUTED; runner is
	// "local" or "remote".
	WorkOrderExecuted(runner string)
	// GateVerdict: a gate ("workorder", "track") wrote its verdict.
	GateVerdict(gate, result string)
	// PullRequest: something happened to an objective's pull request
	// (PullRequest* events), recorded in the store first.
	PullRequest(event string)
	// RunSpent: a gate wrote the verdict on a run whose bundle carries
	// meta (its generator and run report: what the run cost).
	RunSpent(meta domain.BundleMetadata)
}

// Pull request events, as Observer.PullRequest counts them.
const (
	PullRequestOpened  = "opened"
	PullRequestAdopted = "adopted"
	PullRequestRevised = "revised"
	PullRequestMerged  = "merged"
	PullRequestClosed  = "closed"
)

// observePullRequest tells the observer, if any.
func (a *Lifecycle) observePullRequest(event string) {
	if a.Observer != nil {
		a.Observer.PullRequest(event)
	}
}

// Runners and gates as Observer names them.
const (
	RunnerLocal   = "local"
	RunnerRemote  = "remote"
	GateWorkOrder = "workorder"
	GateTrack     = "track"
)

// Non-retryable failure types: a retry cannot fix them, so the workflow sees
// them at once.
const (
	ErrTypeNotFound      = "NotFound"
	ErrTypeInvalidStatus = "InvalidStatus"
	ErrTypeUnknownType   = "UnknownDiazotroph"
	ErrTypeInvalidRecord = "InvalidRecord"
	ErrTypeMisconfigured = "Misconfigured"
	// ErrTypeBudgetSpent: the objective's runs have spent its budget; only
	// a human raising it lets another round start.
	ErrTypeBudgetSpent = "BudgetSpent"
)

// Claimed is returned (retryably) when another owner holds a live claim on
// the resource: the step waits its turn through the activity's retries.
type Claimed struct {
	ResourceType, ResourceID string
	Holder                   domain.ClaimRecord
}

func (e *Claimed) Error() string {
	return fmt.Sprintf("%s %s is claimed by %s until %s", e.ResourceType, e.ResourceID,
		e.Holder.OwnerID, e.Holder.LeaseExpiresAt.Format(time.RFC3339))
}

func (a *Lifecycle) now() time.Time {
	if a.Now != nil {
		return store.NowOr(a.Now())
	}
	return store.NowOr(time.Time{})
}

func (a *Lifecycle) identity() string {
	if a.Identity != "" {
		return a.Identity
	}
	return DefaultIdentity()
}

// DefaultIdentity names this process as Temporal's SDK does: pid@host.
func DefaultIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s", os.Getpid(), host)
}

// ownerID names this worker and, inside an activity, the attempt, so a
// retried attempt on the same worker is a different owner.
func (a *Lifecycle) ownerID(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return a.identity()
	}
	info := activity.GetInfo(ctx)
	return fmt.Sprintf("%s:%s/%s/%d", a.identity(), info.WorkflowExecution.ID, info.ActivityID, info.Attempt)
}

// acquire takes the claim on one resource or says who holds it.
func (a *Lifecycle) acquire(ctx context.Context, resourceType, resourceID string, ttl time.Duration) (*claim.Lease, error) {
	lease, ok, err := a.Claims.Acquire(ctx, resourceType, resourceID, a.ownerID(ctx), ttl)
	if err != nil {
		return nil, fmt.Errorf("claim %s %s: %w", resourceType, resourceID, err)
	}
	if !ok {
		holder, gerr := a.Store.GetClaim(ctx, resourceType, resourceID)
		if gerr != nil {
			return nil, fmt.Errorf("claim %s %s: held by another owner", resourceType, resourceID)
		}
		return nil, &Claimed{ResourceType: resourceType, ResourceID: resourceID, Holder: *holder}
	}
	return lease, nil
}

// release gives a claim up after the durable write. A failure is only logged:
// the write stands, and the lease lapses on its own.
func (a *Lifecycle) release(ctx context.Context, lease *claim.Lease) {
	// Even when the activity is being cancelled: the write is done, and a
	// claim left behind would block the next attempt for a whole lease.
	if err := lease.Release(context.WithoutCancel(ctx)); err != nil && activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Warn("release claim", "error", err)
	}
}

// permanent marks errors no retry can fix as non-retryable.
func permanent(err error) error {
	var te *domain.TransitionError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, domain.ErrNotFound):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeNotFound, err)
	case errors.As(err, &te):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidStatus, err)
	case errors.Is(err, diazotroph.ErrMisconfigured):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeMisconfigured, err)
	case errors.Is(err, diazotroph.ErrUnknownType):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeUnknownType, err)
	case errors.As(err, new(*budget.SpentError)):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBudgetSpent, err)
	case errors.As(err, new(*schemas.ValidationError)):
		// The same input would be refused again (e.g. a diazotroph's
		// invalid result): running it again only repeats the work.
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidRecord, err)
	}
	return err
}

// IDs derived from an objective's status_seq: one transition emits one event,
// which schedules one snapshot and one workorder, so retries land on the same
// rows.
func eventID(objectiveID string, seq int64) string { return fmt.Sprintf("ev-%s-%d", objectiveID, seq) }
func snapshotID(objectiveID string, seq int64) string {
	return fmt.Sprintf("cs-%s-%d", objectiveID, seq)
}
func workOrderID(objectiveID string, seq int64) string {
	return fmt.Sprintf("wo-%s-%d", objectiveID, seq)
}

// BranchName is the work branch of an objective (docs/protocol/patch-flow.md#the-workorder).
func BranchName(objectiveID string) string { return "azolla/" + objectiveID }
