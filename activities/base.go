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
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// Base is what every activity struct embeds, as River's services each
// embed one base: the clock of what its steps write and the observer told
// of it. Its zero value is real time and no observer.
type Base struct {
	// Now is the clock of every timestamp written (default time.Now).
	Now func() time.Time
	// Observer, when set, is told what the steps wrote (metrics).
	Observer Observer
}

func (b *Base) now() time.Time {
	if b.Now != nil {
		return store.NowOr(b.Now())
	}
	return store.NowOr(time.Time{})
}

// Claimant is what an activity struct whose steps take claims embeds
// beside Base (docs/protocol/claims.md): the bridge that hands the leases
// out, whose they are, and for how long.
type Claimant struct {
	Claims *claim.Bridge
	// Identity names this worker in claim owner ids (default
	// DefaultIdentity).
	Identity string
	// LeaseTTL is the lease of the steps' claims, and the heartbeat
	// timeout (and so the lease) of the runs.
	LeaseTTL time.Duration
	// Slots, when set, holds each run to the repositories' and the
	// deployment's limits (max_concurrent_runs): a run holds a slot, a
	// claim of its own, for its whole length. Nil: no limit.
	Slots *slots.Slots
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
	// ErrTypeClosedOnForge: the issue the objective came from was closed
	// before its run started; no agent was started.
	ErrTypeClosedOnForge = "ClosedOnForge"
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

func (c *Claimant) identity() string {
	if c.Identity != "" {
		return c.Identity
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
func (c *Claimant) ownerID(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return c.identity()
	}
	info := activity.GetInfo(ctx)
	return fmt.Sprintf("%s:%s/%s/%d", c.identity(), info.WorkflowExecution.ID, info.ActivityID, info.Attempt)
}

// acquire takes the claim on one resource or says who holds it, as
// holders (the struct's store) reads it.
func (c *Claimant) acquire(ctx context.Context, holders store.ClaimQuerier, resourceType, resourceID string,
	ttl time.Duration) (*claim.Lease, error) {
	lease, ok, err := c.Claims.Acquire(ctx, resourceType, resourceID, c.ownerID(ctx), ttl)
	if err != nil {
		return nil, fmt.Errorf("claim %s %s: %w", resourceType, resourceID, err)
	}
	if !ok {
		return nil, claimedBy(ctx, holders, resourceType, resourceID)
	}
	return lease, nil
}

// claimedBy says who holds the claim an acquisition was refused, as
// holders reads it.
func claimedBy(ctx context.Context, holders store.ClaimQuerier, resourceType, resourceID string) error {
	holder, err := holders.GetClaim(ctx, resourceType, resourceID)
	if err != nil {
		return fmt.Errorf("claim %s %s: held by another owner", resourceType, resourceID)
	}
	return &Claimed{ResourceType: resourceType, ResourceID: resourceID, Holder: *holder}
}

// release gives a claim up after the durable write. A failure is only logged:
// the write stands, and the lease lapses on its own.
func (c *Claimant) release(ctx context.Context, lease *claim.Lease) {
	// Even when the activity is being cancelled: the write is done, and a
	// claim left behind would block the next attempt for a whole lease.
	if err := lease.Release(context.WithoutCancel(ctx)); err != nil && activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Warn("release claim", "error", err)
	}
}

// runLease is the lease of a run's claim: the activity's heartbeat
// timeout, so that a dead worker's claim lapses when Temporal retries
// the activity elsewhere; LeaseTTL outside an activity.
func (c *Claimant) runLease(ctx context.Context) time.Duration {
	if activity.IsActivity(ctx) {
		if hb := activity.GetInfo(ctx).HeartbeatTimeout; hb > 0 {
			return hb
		}
	}
	return c.LeaseTTL
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
