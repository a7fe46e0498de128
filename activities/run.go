package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"github.com/azolla/azolla/internal/store"
)

// RunInput names the workorder to run.
type RunInput struct {
	WorkOrderID string
	// Queue: the lifecycle queues for a run slot (AwaitRunSlot) when Run
	// finds none free (RunResult.SlotBusy); without it Run waits itself.
	Queue bool `json:",omitempty"`
	// Slot is what AwaitRunSlot granted, for Run to take over.
	Slot *slots.Grant `json:",omitempty"`
}

// RunResult summarizes the workorder's one output bundle.
type RunResult struct {
	WorkOrderID  string
	RunnerStatus string
	// AlreadyExecuted is true when the workorder was EXECUTED before this
	// call, which then changed nothing.
	AlreadyExecuted bool
	// SlotBusy: a limit left no run slot free (RunInput.Queue); nothing
	// ran, and the lifecycle queues for one.
	SlotBusy bool `json:",omitempty"`
}

// Run is the runner (docs/protocol/lifecycle.md#running): it claims the workorder with
// a lease as long as the activity's heartbeat timeout, renews it with every
// heartbeat, dispatches to the workorder's diazotroph and, fenced by the
// claim, persists the one output bundle and sets EXECUTED. If a renewal
// fails, the diazotroph is cancelled and nothing is written. Running an
// EXECUTED workorder again is a no-op that returns the stored bundle.
func (a *Steps) Run(ctx context.Context, in RunInput) (RunResult, error) {
	w, err := a.Store.GetWorkOrder(ctx, in.WorkOrderID)
	if err != nil {
		return RunResult{}, permanent(fmt.Errorf("run workorder %q: %w", in.WorkOrderID, err))
	}
	if w.Status == domain.WorkOrderExecuted {
		return executed(ctx, a.Store, w.WorkOrderID)
	}
	remote := a.Remote.routes(w.DiazotrophType)
	// A remote run's job, once enqueued, holds the run's slots itself: a
	// retried Run that finds it waits for it again without a slot of its
	// own.
	var hold *slotHold
	sctx := ctx
	if !remote || a.Slots == nil || !a.Remote.holdsSlots(ctx, w.WorkOrderID, 0) {
		var busy bool
		sctx, hold, busy, err = runSlot(ctx, a.Slots, a.Store, w, w.WorkOrderID, in.Slot, in.Queue)
		if err != nil || busy {
			return RunResult{WorkOrderID: w.WorkOrderID, SlotBusy: busy}, err
		}
		defer hold.done()
	}
	if w.Track != "" {
		// The track stays this workorder's while it runs: extend its claim
		// (held since the scheduler, by the event's owner).
		if err := holdTrack(sctx, a.Store, w.Track, w.EventID, trackTTL(a.TaskBudget, a.LeaseTTL)); err != nil {
			return RunResult{}, fmt.Errorf("run workorder %q: %w", w.WorkOrderID, err)
		}
	}
	if remote {
		return a.runRemote(ctx, w, hold)
	}
	ctx = sctx
	d, err := a.Diazotrophs.Lookup(w.DiazotrophType)
	if err != nil {
		return RunResult{}, permanent(fmt.Errorf("run workorder %q: %w", w.WorkOrderID, err))
	}
	// An agent is not started for an issue closed since its round was
	// scheduled: the gate hands the objective back (CLOSED_ON_FORGE).
	if issue, err := closedIssue(ctx, a.Store, w.ObjectiveID); err != nil || issue != "" {
		if err == nil {
			err = temporal.NewNonRetryableApplicationError(fmt.Sprintf("run workorder %q: not started: issue %s was closed on the forge",
				w.WorkOrderID, issue), ErrTypeClosedOnForge, nil)
		}
		return RunResult{}, err
	}
	lease, err := a.acquire(ctx, a.Store, domain.ResourceWorkOrder, w.WorkOrderID, a.runLease(ctx))
	if err != nil {
		return RunResult{}, err
	}
	req, err := a.roundRequest(ctx, w)
	if err != nil {
		a.release(ctx, lease)
		return RunResult{}, permanent(fmt.Errorf("run workorder %q: %w", w.WorkOrderID, err))
	}

	// The run is stopped, at a renewal of its claim, once the issue its
	// objective came from is closed (the gate hands it back).
	rctx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	kctx, stop := lease.Keep(rctx, claim.KeepOptions{
		OnRenew: func() {
			heartbeat(ctx, lease)
			if issue, err := closedIssue(ctx, a.Store, w.ObjectiveID); err == nil && issue != "" {
				stopRun(&diazotroph.Stop{Why: "issue " + issue + " was closed on the forge"})
			}
		},
		OnError: func(err error) { logger(ctx, w.ObjectiveID, w.WorkOrderID).Warn("renew workorder claim", "error", err) },
	})
	logger(ctx, w.ObjectiveID, w.WorkOrderID).Info("running workorder", "diazotroph", w.DiazotrophType,
		"budget", req.Budget.String())
	out, err := d.Execute(kctx, req)
	stop()
	if cause := context.Cause(kctx); errors.Is(cause, claim.ErrLeaseLost) {
		// Another owner has the workorder: write nothing, let it finish.
		return RunResult{}, fmt.Errorf("run workorder %q: stopped, claim lost: %w", w.WorkOrderID, cause)
	}
	if err != nil {
		a.release(ctx, lease)
		return RunResult{}, permanent(fmt.Errorf("run workorder %q with %s: %w", w.WorkOrderID, w.DiazotrophType, err))
	}

	// A title is one safe line whatever the diazotroph made of it; content
	// and notes may hold anything, and are escaped where they are shown.
	bundle := &domain.OutputBundle{WorkOrderID: w.WorkOrderID, Title: oneLine(out.Title), Content: out.Content,
		Notes: out.Notes, Metadata: out.Metadata, RunnerStatus: out.RunnerStatus, CreatedAt: a.now()}
	var res RunResult
	var changed bool
	err = lease.Fenced(ctx, func(q store.Querier) error {
		stored, _, err := q.CreateOutputBundle(ctx, bundle)
		if err != nil {
			return err
		}
		if _, changed, err = q.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: w.WorkOrderID,
			Now: a.now()}); err != nil {
			return err
		}
		res = RunResult{WorkOrderID: w.WorkOrderID, RunnerStatus: stored.RunnerStatus}
		return nil
	})
	// Released even when the write failed: see Schedule. A lost lease
	// refuses the release without touching the new holder's claim.
	a.release(ctx, lease)
	if err != nil {
		return RunResult{}, fmt.Errorf("persist output of workorder %q: %w", w.WorkOrderID, err)
	}
	if changed && a.Observer != nil {
		a.Observer.WorkOrderExecuted(RunnerLocal)
	}
	logger(ctx, w.ObjectiveID, w.WorkOrderID).Info("workorder executed", "runner_status", res.RunnerStatus)
	return res, nil
}

// executed returns the stored outcome of an EXECUTED workorder.
func executed(ctx context.Context, st store.RunQuerier, workOrderID string) (RunResult, error) {
	b, err := st.GetOutputBundle(ctx, workOrderID)
	if err != nil {
		return RunResult{}, permanent(fmt.Errorf("workorder %q is EXECUTED: %w", workOrderID, err))
	}
	return RunResult{WorkOrderID: workOrderID, RunnerStatus: b.RunnerStatus, AlreadyExecuted: true}, nil
}

// requestReader reads what a diazotroph may read of a workorder.
type requestReader interface {
	store.RunQuerier
	store.ObjectiveQuerier
}

// request loads what the diazotroph may read.
func request(ctx context.Context, st requestReader, w *domain.WorkOrder) (diazotroph.Request, error) {
	snap, err := st.GetContextSnapshot(ctx, w.ContextSnapshotID)
	if err != nil {
		return diazotroph.Request{}, err
	}
	req := diazotroph.Request{WorkOrder: *w, Snapshot: *snap, Budget: time.Duration(w.BudgetMS) * time.Millisecond}
	if w.ObjectiveID == "" {
		// A track workorder works for a track, not an objective.
		return req, nil
	}
	o, err := st.GetObjective(ctx, w.ObjectiveID)
	if err != nil {
		return diazotroph.Request{}, err
	}
	req.Objective = *o
	return req, nil
}

// roundRequest is request for a workorder's own run (not a candidate's):
// with the partial work it resumes.
func (a *Steps) roundRequest(ctx context.Context, w *domain.WorkOrder) (diazotroph.Request, error) {
	req, err := request(ctx, a.Store, w)
	if err == nil && w.ObjectiveID != "" {
		req.Resume, req.Session, err = continuing(ctx, a.Store, w)
	}
	if err == nil && w.ObjectiveID != "" {
		var number int
		req.Revise, number, err = reviseOf(ctx, a.Store, w)
		a.onTheForge(ctx, req.Objective.Repository, w.BranchName, req.Revise, number)
	}
	return req, err
}

// onTheForge completes rv from the pull request as its forge has it now:
// its head (a commit someone pushed on top of the last round's is kept)
// and whether it conflicts with its base. Nothing of its words is read:
// only its head commit, on the objective's own work branch, where only
// people who may write to the repository can push (the trust rule's
// bar), and the forge's verdict on conflicts. A forge that cannot be
// read, or a pull request whose head is another branch, leaves rv as the
// store has it.
func (a *Steps) onTheForge(ctx context.Context, repository, branch string, rv *diazotroph.Revise, number int) {
	if a.Forges == nil || rv == nil || number == 0 {
		return
	}
	t, err := a.Forges.Open(repository)
	if err != nil || t == nil {
		return
	}
	fpr, err := t.Forge.PullRequest(ctx, number)
	if err != nil {
		logger(ctx, "", "").Warn("read the pull request before its round", "pull_request", rv.PullRequest, "error", err)
		return
	}
	if fpr.Head != branch {
		logger(ctx, "", "").Warn("the pull request's head is not the work branch: its head on the forge is not taken",
			"pull_request", rv.PullRequest, "head", fpr.Head, "branch", branch)
		return
	}
	if fpr.HeadSHA != "" {
		rv.HeadSHA = fpr.HeadSHA
	}
	rv.Conflicts = fpr.Conflicts
}

// reviseOf is the open pull request w's round revises: the objective's,
// when it is open and its head was pushed by another workorder than w
// (a round that pushed it is not revising it). nil otherwise.
func reviseOf(ctx context.Context, st stepStore, w *domain.WorkOrder) (*diazotroph.Revise, int, error) {
	pr, err := st.GetPullRequest(ctx, w.ObjectiveID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil || pr.State != domain.PullRequestOpen || pr.HeadSHA == "" || pr.WorkOrderID == w.WorkOrderID {
		return nil, 0, err
	}
	return &diazotroph.Revise{PullRequest: pr.URL, HeadSHA: pr.HeadSHA}, pr.Number, nil
}

// continuing is what w's round continues of the round before (the
// objective's latest workorder before w), unless the human who asked for
// w's round asked for a fresh start: the partial work it left, nil when
// none, and the agent's session it reported, "" when none.
func continuing(ctx context.Context, st stepStore, w *domain.WorkOrder) (*diazotroph.Resume, string, error) {
	ev, err := st.GetEvent(ctx, w.EventID)
	if err != nil || ev.Fresh {
		return nil, "", err
	}
	wos, err := st.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: w.ObjectiveID})
	if err != nil {
		return nil, "", err
	}
	var prev *domain.WorkOrder
	for _, o := range wos {
		if o.WorkOrderID == w.WorkOrderID {
			break
		}
		prev = o
	}
	if prev == nil {
		return nil, "", nil
	}
	b, err := st.GetOutputBundle(ctx, prev.WorkOrderID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var session string
	if b.Metadata.RunReport != nil {
		session = b.Metadata.RunReport.SessionID
	}
	if b.Metadata.Partial == nil {
		return nil, session, nil
	}
	res := &diazotroph.Resume{WorkOrderID: prev.WorkOrderID, Partial: *b.Metadata.Partial}
	if rr, err := st.GetRunRecord(ctx, prev.WorkOrderID); err == nil {
		res.Why = rr.GateReason
	}
	return res, session, nil
}

// heartbeat tells Temporal the activity is alive, with the lease it holds as
// progress details.
//
// The first heartbeat is the first renewal's, at a third of the lease: the
// heartbeat timeout is the lease, so that is in time, and a step that ends
// sooner (most do) costs the server no heartbeat at all.
func heartbeat(ctx context.Context, lease *claim.Lease) {
	if activity.IsActivity(ctx) {
		rec := lease.Record()
		activity.RecordHeartbeat(ctx, rec.ClaimVersion)
	}
}

// logger is the activity's logger carrying the ids it works on, so every
// line can be traced to an objective and a workorder. Outside an activity
// (tests calling a step directly) it discards.
func logger(ctx context.Context, objectiveID, workOrderID string) log.Logger {
	if !activity.IsActivity(ctx) {
		return log.NewStructuredLogger(slog.New(slog.DiscardHandler))
	}
	kv := []any{"objective_id", objectiveID}
	if workOrderID != "" {
		kv = append(kv, "work_order_id", workOrderID)
	}
	return log.With(activity.GetLogger(ctx), kv...)
}
