package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/lifecycle/transition"
	"github.com/azolla/azolla/internal/store"
)

// ScheduleInput names the readiness event to schedule.
type ScheduleInput struct {
	EventID string
	// Local says the caller runs Schedule as a local activity, which must
	// stay short: an event whose objective's repository would be read is
	// handed back (NeedsRepository) with nothing written.
	Local bool
}

// ScheduleResult is the event's terminal outcome.
type ScheduleResult struct {
	// Reason is the event's processed_reason.
	Reason string
	// ObjectiveID is the event's subject.
	ObjectiveID string
	// Status is the objective's status afterwards ("" if it does not exist).
	Status domain.Status
	// WorkOrder is set when Reason is SCHEDULED.
	WorkOrder *WorkOrderRef
	// Pause is set when Reason is BLOCKED.
	Pause *domain.PauseState
	// NeedsRepository answers a Local call that would have read the
	// objective's repository: nothing was written, and the other fields are
	// empty. Schedule it as an activity.
	NeedsRepository bool
}

// errNeedsRepository stops a Local Schedule before it reads a repository.
var errNeedsRepository = errors.New("scheduling reads the objective's repository")

// Schedule is the scheduler (docs/protocol/lifecycle.md#scheduling): it claims the event
// and, in one transaction fenced by the claim, writes the event's terminal
// outcome: MISSING_TICKET, NON_EXECUTABLE_STATUS, BLOCKED (pause state,
// objective BLOCKED) or SCHEDULED (context snapshot, workorder, objective
// IN_PROGRESS), marking the event processed with that reason. The claim is
// released after the commit; a Local call, which reads no repository,
// takes and releases it inside that transaction. An already processed
// event is a no-op that returns the stored outcome.
func (a *Steps) Schedule(ctx context.Context, in ScheduleInput) (ScheduleResult, error) {
	ev, err := a.Store.GetEvent(ctx, in.EventID)
	if err != nil {
		return ScheduleResult{}, permanent(fmt.Errorf("schedule event %q: %w", in.EventID, err))
	}
	if ev.Processed {
		res, err := a.scheduled(ctx, a.Store, ev)
		return res, permanent(err)
	}
	// A Local call reads no repository, so it holds the claim for the
	// one transaction (claim.Bridge.Within). Otherwise the repository is
	// read before the transaction, with the claim kept alive: a first
	// clone can take longer than a lease.
	var lease *claim.Lease
	tctx, stop := ctx, func() {}
	if !in.Local {
		if lease, err = a.acquire(ctx, a.Store, domain.ResourceEvent, ev.EventID, a.LeaseTTL); err != nil {
			return ScheduleResult{}, err
		}
		tctx, stop = lease.Keep(ctx, claim.KeepOptions{OnRenew: func() { heartbeat(ctx, lease) },
			OnError: func(err error) { logger(ctx, ev.SubjectID, "").Warn("renew event claim", "error", err) }})
	}
	target, err := a.target(tctx, ev, in.Local)
	stop()
	if errors.Is(err, errNeedsRepository) {
		return ScheduleResult{NeedsRepository: true}, nil
	}
	if err != nil {
		if lease != nil {
			a.release(ctx, lease)
		}
		return ScheduleResult{}, permanent(fmt.Errorf("schedule event %q: %w", in.EventID, err))
	}
	var res ScheduleResult
	// process writes the event's terminal outcome, unless an earlier
	// attempt did, in q, a transaction fenced by the event's claim.
	process := func(q store.Querier) error {
		ev, err := q.GetEvent(ctx, in.EventID)
		if err != nil {
			return err
		}
		if !ev.Processed {
			if err := a.schedule(ctx, q, ev, target); err != nil {
				return err
			}
			if ev, err = q.GetEvent(ctx, in.EventID); err != nil {
				return err
			}
		}
		res, err = a.scheduled(ctx, q, ev)
		return err
	}
	if lease == nil {
		var ok bool
		ok, err = a.Claims.Within(ctx, domain.ResourceEvent, ev.EventID, a.ownerID(ctx), a.LeaseTTL, process)
		if err == nil && !ok {
			return ScheduleResult{}, claimedBy(ctx, a.Store, domain.ResourceEvent, ev.EventID)
		}
	} else {
		err = lease.Fenced(ctx, process)
		// Released even when the write failed (and so wrote nothing): a
		// retry is a new owner, which a held claim would lock out until
		// it lapsed.
		a.release(ctx, lease)
	}
	if err != nil {
		return ScheduleResult{}, permanent(fmt.Errorf("schedule event %q: %w", in.EventID, err))
	}
	woID := ""
	if res.WorkOrder != nil {
		woID = res.WorkOrder.WorkOrderID
	}
	logger(ctx, ev.SubjectID, woID).Info("event processed", "event_id", ev.EventID, "reason", res.Reason)
	return res, nil
}

// resolved is the outcome of reading an objective's repository: its state,
// or why a human must fix the target first.
type resolved struct {
	target  *diazotroph.Target
	blocker string
}

// target resolves the repository of the event's objective when it will be
// scheduled; nil when it names none or will not be scheduled. With local
// set it returns errNeedsRepository instead of reading the repository.
func (a *Steps) target(ctx context.Context, ev *domain.Event, local bool) (*resolved, error) {
	o, err := a.Store.GetObjective(ctx, ev.SubjectID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if o.Repository == "" || o.Status != domain.StatusTodo || len(o.Blockers) > 0 {
		return nil, nil
	}
	if a.Targets == nil {
		return nil, fmt.Errorf("objective %s names a repository but this worker resolves none: %w",
			o.ObjectiveID, diazotroph.ErrMisconfigured)
	}
	if local {
		return nil, errNeedsRepository
	}
	t, err := a.Targets.Resolve(ctx, o.Repository, o.BaseBranch)
	if errors.Is(err, diazotroph.ErrBadTarget) {
		// git's stderr spans lines; a blocker is one safe line.
		return &resolved{blocker: oneLine(err.Error())}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resolve repository of objective %s: %w", o.ObjectiveID, err)
	}
	return &resolved{target: &t}, nil
}

// schedule writes the terminal outcome of an unprocessed event.
func (a *Steps) schedule(ctx context.Context, q store.Querier, ev *domain.Event, r *resolved) error {
	now := a.now()
	mark := func(reason string) error {
		_, err := q.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: ev.EventID, Reason: reason, Now: now})
		return err
	}
	o, err := q.GetObjective(ctx, ev.SubjectID)
	if errors.Is(err, domain.ErrNotFound) {
		return mark(domain.ReasonMissingTicket)
	}
	if err != nil {
		return err
	}
	if !transition.Executable(o.Status) {
		return mark(domain.ReasonNonExecutableStatus)
	}
	blockers := o.Blockers
	if len(blockers) == 0 && r != nil && r.blocker != "" {
		blockers = []string{r.blocker}
	}
	left, err := budget.Left(ctx, q, o)
	var spent *budget.SpentError
	if errors.As(err, &spent) {
		// Readiness refuses a round once the budget is spent; an event
		// written past it is held here rather than run.
		blockers, err = append(slices.Clone(blockers), spent.Error()), nil
	}
	if err != nil {
		return err
	}
	if len(blockers) > 0 {
		if err := block(ctx, q, o, blockers, now); err != nil {
			return err
		}
		return mark(domain.ReasonBlocked)
	}
	typ, meta := a.Diazotroph, domain.SnapshotMetadata{BaseBranch: o.BaseBranch}
	var target *diazotroph.Target
	if o.Repository != "" {
		if r == nil || r.target == nil {
			// It was not TODO when the repository would have been read.
			return fmt.Errorf("objective %s changed while its event was scheduled", o.ObjectiveID)
		}
		target = r.target
		typ, meta = diazotroph.PatchType, domain.SnapshotMetadata{CommitSHA: target.CommitSHA, BaseBranch: target.BaseBranch}
	}
	yields, err := relatedYields(ctx, q, o, ev)
	if err != nil {
		return err
	}

	snap := &domain.ContextSnapshot{ContextSnapshotID: snapshotID(o.ObjectiveID, ev.TransitionSeq),
		ObjectiveID: o.ObjectiveID, FullPromptText: Prompt(o, target, yields), Metadata: meta,
		RelatedYieldRefs: yields, CreatedAt: now}
	if err := q.CreateContextSnapshot(ctx, snap); err != nil {
		return err
	}
	_, _, err = q.CreateWorkOrder(ctx, &domain.WorkOrder{WorkOrderID: workOrderID(o.ObjectiveID, ev.TransitionSeq),
		EventID: ev.EventID, ObjectiveID: o.ObjectiveID, DiazotrophType: typ,
		ContextSnapshotID: snap.ContextSnapshotID, BranchName: BranchName(o.ObjectiveID),
		BudgetMS: a.Budget.Milliseconds(), BudgetUSDRemaining: left, Status: domain.WorkOrderCreated, CreatedAt: now})
	if err != nil {
		return err
	}
	if _, err := q.TransitionObjective(ctx, transition.Schedule.Params(o.ObjectiveID, now)); err != nil {
		return err
	}
	return mark(domain.ReasonScheduled)
}

// block is the scheduler's answer to blockers (docs/protocol/patch-flow.md#blockers): the objective becomes BLOCKED with its blockers
// and a pause state that says how to go on.
func block(ctx context.Context, q store.Querier, o *domain.Objective, blockers []string, now time.Time) error {
	p := transition.Block.Params(o.ObjectiveID, now)
	ref := domain.BlockersOf(o.ObjectiveID)
	p.BlockerRef, p.Blockers = &ref, &blockers
	moved, err := q.TransitionObjective(ctx, p)
	if err != nil {
		return err
	}
	ps := pause.Blocked(o.ObjectiveID, moved.StatusSeq, blockers, now)
	return q.CreatePauseState(ctx, &ps)
}

// scheduled reads the stored outcome of a processed event.
func (a *Steps) scheduled(ctx context.Context, q roundReader, ev *domain.Event) (ScheduleResult, error) {
	res := ScheduleResult{Reason: ev.ProcessedReason, ObjectiveID: ev.SubjectID}
	o, err := q.GetObjective(ctx, ev.SubjectID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return res, nil
	case err != nil:
		return res, err
	}
	res.Status = o.Status
	switch ev.ProcessedReason {
	case domain.ReasonScheduled:
		w, err := q.GetWorkOrderByEvent(ctx, ev.EventID)
		if err != nil {
			return res, err
		}
		res.WorkOrder = workOrderRef(w)
		a.shape(res.WorkOrder, o)
	case domain.ReasonBlocked:
		pauses, err := q.ListPauseStates(ctx, o.ObjectiveID)
		if err != nil {
			return res, err
		}
		for _, p := range pauses {
			if p.Reason == domain.PauseBlocked {
				res.Pause = p
			}
		}
	}
	return res, nil
}

// Prompt is the frozen prompt of a run: the objective's title, description
// and acceptance criteria; for a repository, the state the run starts from with a bounded
// listing of its files; and what the run draws on (yields): the previous
// attempt's verdict and output, the human's comment.
func Prompt(o *domain.Objective, t *diazotroph.Target, yields []domain.YieldRef) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Objective %s (%s, urgency %s)\n\n%s\n", o.ObjectiveID, o.ObjectiveType, o.Urgency, o.Title)
	if o.Description != "" {
		fmt.Fprintf(&b, "\nDescription:\n%s\n", o.Description)
	}
	if len(o.AcceptanceCriteria) > 0 {
		b.WriteString("\nAcceptance criteria:\n")
		for _, c := range o.AcceptanceCriteria {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	switch {
	case t != nil:
		fmt.Fprintf(&b, "\nRepository: %s\nBase branch: %s at commit %s\nWork branch: %s\n",
			t.Repository, t.BaseBranch, t.CommitSHA, BranchName(o.ObjectiveID))
		fmt.Fprintf(&b, "\nTracked files (%d of %d):\n", len(t.Files), t.TotalFiles)
		for _, f := range t.Files {
			fmt.Fprintf(&b, "  %s\n", f)
		}
		if more := t.TotalFiles - len(t.Files); more > 0 {
			fmt.Fprintf(&b, "  ... and %d more\n", more)
		}
	case o.Repository != "":
		fmt.Fprintf(&b, "\nRepository: %s (base branch %s)\n", o.Repository, cmp.Or(o.BaseBranch, "default"))
	}
	writeYields(&b, yields)
	return b.String()
}
