package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/lifecycle/transition"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
)

// ObjectiveView is what a lifecycle needs to know to pick its next step.
type ObjectiveView struct {
	Found         bool
	ObjectiveID   string
	ObjectiveType string
	Status        domain.Status
	StatusSeq     int64
	BlockerRef    domain.BlockerRef
	// PendingEventID is the oldest unprocessed TICKET_READY event about the
	// objective, "" if none.
	PendingEventID string
	// OpenWorkOrder is the newest workorder without a run record, if any.
	OpenWorkOrder *WorkOrderRef
	// LastPause is the newest pause state.
	LastPause *domain.PauseState
	// LeaseTTL is the workers' lease, the Run activity's heartbeat timeout.
	LeaseTTL time.Duration
	// PullRequest is the URL of a DONE objective's open pull request,
	// which the lifecycle follows; "" otherwise.
	PullRequest string `json:",omitempty"`
}

// WorkOrderRef is what the workflow needs of a workorder to run it.
type WorkOrderRef struct {
	WorkOrderID    string
	DiazotrophType string
	BudgetMS       int64
	Status         string
	BranchName     string
	// Attempts, above 1, is how many candidates the run makes (best-of-N),
	// EarlyStop whether the first to pass every gate command stops the
	// others, and Parallel, above 0, how many run at a time.
	Attempts  int  `json:",omitempty"`
	EarlyStop bool `json:",omitempty"`
	Parallel  int  `json:",omitempty"`
	// Urgency is the objective's, which orders who gets the next free run
	// slot; Repository its repository ("" for none), whose runs share
	// the slots fairly with other repositories'.
	Urgency    string `json:",omitempty"`
	Repository string `json:",omitempty"`
	// GateCommands: the repository's gate runs commands, so the gate is a
	// heavy step that takes a run slot; without them it is a light one.
	GateCommands bool `json:",omitempty"`
}

func workOrderRef(w *domain.WorkOrder) *WorkOrderRef {
	return &WorkOrderRef{WorkOrderID: w.WorkOrderID, DiazotrophType: w.DiazotrophType, BudgetMS: w.BudgetMS,
		Status: w.Status, BranchName: w.BranchName}
}

// Load reads an objective and its open work.
func (a *Steps) Load(ctx context.Context, objectiveID string) (ObjectiveView, error) {
	v := ObjectiveView{ObjectiveID: objectiveID, LeaseTTL: a.LeaseTTL}
	// Events first: one about a missing objective still needs scheduling
	// (to MISSING_TICKET).
	events, err := a.Store.ListUnprocessedEvents(ctx, store.ListEventsParams{EventType: domain.EventTicketReady,
		SubjectID: objectiveID, Limit: 1})
	if err != nil {
		return v, err
	}
	if len(events) > 0 {
		v.PendingEventID = events[0].EventID
	}
	o, err := a.Store.GetObjective(ctx, objectiveID)
	if errors.Is(err, domain.ErrNotFound) {
		return v, nil
	}
	if err != nil {
		return v, err
	}
	v.Found, v.ObjectiveType, v.Status, v.StatusSeq, v.BlockerRef = true, o.ObjectiveType, o.Status, o.StatusSeq, o.BlockerRef
	if v.OpenWorkOrder, err = openWorkOrder(ctx, a.Store, objectiveID); err != nil {
		return v, err
	}
	a.shape(v.OpenWorkOrder, o)
	pauses, err := a.Store.ListPauseStates(ctx, objectiveID)
	if err != nil {
		return v, err
	}
	if n := len(pauses); n > 0 {
		v.LastPause = pauses[n-1]
	}
	if o.Status == domain.StatusDone && a.Forges != nil {
		pr, err := a.Store.GetPullRequest(ctx, objectiveID)
		switch {
		case err == nil && pr.State == domain.PullRequestOpen:
			v.PullRequest = pr.URL
		case err != nil && !errors.Is(err, domain.ErrNotFound):
			return v, err
		}
	}
	return v, nil
}

// openWorkOrder is the objective's newest workorder without a run record,
// nil if none.
func openWorkOrder(ctx context.Context, st store.RunQuerier, objectiveID string) (*WorkOrderRef, error) {
	wos, err := st.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: objectiveID})
	if err != nil {
		return nil, err
	}
	for _, w := range slices.Backward(wos) {
		_, err := st.GetRunRecord(ctx, w.WorkOrderID)
		if errors.Is(err, domain.ErrNotFound) {
			return workOrderRef(w), nil
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// Readiness modes: why an objective is being made ready. Each but
// ReadyResume is the transition of the same name.
const (
	// ReadyApprove is the human's NEW -> TODO.
	ReadyApprove = string(transition.Approve)
	// ReadyRetry re-emits after a failed gate or a block.
	ReadyRetry = string(transition.Retry)
	// ReadyUnblock is ReadyRetry that also clears the blockers.
	ReadyUnblock = string(transition.Unblock)
	// ReadyResume emits for a TODO objective that has no event yet (written
	// straight into the store), without a transition.
	ReadyResume = "resume"
)

// ReadyInput asks for a TICKET_READY event.
type ReadyInput struct {
	ObjectiveID string
	Mode        string
	// By and Comment are the human decision behind the transition; the
	// event records them, and a comment reaches the next run's snapshot.
	By      string
	Comment string
	// Fresh: the round starts from the snapshot's commit, not from the
	// partial work the round before left (the event records it).
	Fresh bool `json:",omitempty"`
	// Answer: Comment answers the question the round before's agent
	// asked; refused when the objective waits for no answer.
	Answer bool `json:",omitempty"`
}

// ReadyResult names the event that now stands for the objective's readiness.
type ReadyResult struct {
	EventID   string
	Status    domain.Status
	StatusSeq int64
}

// Bounds of a decision recorded on an event (the event schema's).
const (
	maxDecidedBy = 200
	maxComment   = 4096
)

// Ready is the readiness worker: it makes the transition of in.Mode and
// emits one TICKET_READY event for it, recording the decision, in one
// transaction. The event is keyed by the transition, so a retry after a
// commit finds and returns the same event instead of emitting a second.
func (a *Steps) Ready(ctx context.Context, in ReadyInput) (ReadyResult, error) {
	var res ReadyResult
	err := a.Store.InTx(ctx, func(q store.Querier) error {
		o, err := q.GetObjective(ctx, in.ObjectiveID)
		if err != nil {
			return err
		}
		t := transition.Name(in.Mode)
		switch in.Mode {
		case ReadyApprove, ReadyRetry, ReadyUnblock:
			// A retry of a committed attempt finds the objective as the
			// transition left it, its event waiting.
			if t.Settled(o) {
				if ev, err := pendingEvent(ctx, q, o); err != nil || ev != nil {
					if ev != nil {
						res = ReadyResult{EventID: ev.EventID, Status: o.Status, StatusSeq: o.StatusSeq}
					}
					return err
				}
			}
			if in.Answer {
				if err := pause.CheckAnswer(ctx, q, o, in.Comment); err != nil {
					return err
				}
			}
			if in.Mode != ReadyApprove {
				// A new round spends: not once the budget is gone.
				if _, err := budget.Left(ctx, q, o); err != nil {
					return err
				}
			}
			if o, err = q.TransitionObjective(ctx, t.Params(o.ObjectiveID, a.now())); err != nil {
				return err
			}
		case ReadyResume:
			if o.Status != domain.StatusTodo || o.BlockerRef != "" {
				return domain.ObjectiveTransitionError(o.ObjectiveID, o.Status, []domain.Status{domain.StatusTodo},
					string(domain.StatusTodo))
			}
		default:
			return fmt.Errorf("readiness: unknown mode %q", in.Mode)
		}
		ev, _, err := q.EmitEvent(ctx, &domain.Event{EventID: eventID(o.ObjectiveID, o.StatusSeq),
			EventType: domain.EventTicketReady, SubjectID: o.ObjectiveID, TransitionSeq: o.StatusSeq,
			DecidedBy: truncate(textsafe.Line(in.By), maxDecidedBy), Comment: truncate(in.Comment, maxComment),
			Fresh: in.Fresh, CreatedAt: a.now()})
		if err != nil {
			return err
		}
		res = ReadyResult{EventID: ev.EventID, Status: o.Status, StatusSeq: o.StatusSeq}
		return nil
	})
	if err != nil {
		return ReadyResult{}, permanent(fmt.Errorf("make objective %q ready (%s): %w", in.ObjectiveID, in.Mode, err))
	}
	logger(ctx, in.ObjectiveID, "").Info("objective ready", "mode", in.Mode, "event_id", res.EventID, "by", in.By)
	return res, nil
}

// pendingEvent returns the unprocessed TICKET_READY event of the objective's
// current transition, or nil.
func pendingEvent(ctx context.Context, q store.EventQuerier, o *domain.Objective) (*domain.Event, error) {
	events, err := q.ListUnprocessedEvents(ctx, store.ListEventsParams{EventType: domain.EventTicketReady,
		SubjectID: o.ObjectiveID})
	if err != nil {
		return nil, err
	}
	for _, ev := range events {
		if ev.TransitionSeq == o.StatusSeq {
			return ev, nil
		}
	}
	return nil, nil
}

// RejectInput is a human's refusal of a NEW objective.
type RejectInput struct {
	ObjectiveID string
	By          string
	Comment     string
}

// Reject ends a NEW objective's lifecycle with a REJECTED pause state. The
// objective stays NEW: nothing was done, and the record says why.
func (a *Steps) Reject(ctx context.Context, in RejectInput) (domain.PauseState, error) {
	var ps domain.PauseState
	err := a.Store.InTx(ctx, func(q store.Querier) error {
		o, err := q.GetObjective(ctx, in.ObjectiveID)
		if err != nil {
			return err
		}
		if !transition.Reject.Allows(o.Status) {
			return transition.Reject.Refusal(o.ObjectiveID, o.Status)
		}
		ps = pause.Rejected(o.ObjectiveID, o.StatusSeq, truncate(in.By, maxDecidedBy), truncate(in.Comment, maxComment), a.now())
		pauses, err := q.ListPauseStates(ctx, o.ObjectiveID)
		if err != nil {
			return err
		}
		for _, p := range pauses {
			if p.PauseStateID == ps.PauseStateID {
				ps = *p // a retry after the commit
				return nil
			}
		}
		return q.CreatePauseState(ctx, &ps)
	})
	if err != nil {
		return domain.PauseState{}, permanent(fmt.Errorf("reject objective %q: %w", in.ObjectiveID, err))
	}
	return ps, nil
}

// truncate keeps the first max characters of s.
func truncate(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max])
}
