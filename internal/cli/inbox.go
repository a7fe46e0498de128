package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/deadline"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
)

// Kinds of inbox item, most urgent kind first.
const (
	inboxOverdue   = "OVERDUE"
	inboxBlocked   = "BLOCKED"
	inboxGateFail  = "GATE_FAILED"
	inboxPR        = "PULL_REQUEST"
	inboxApproval  = "APPROVAL"
	inboxProposals = "PROPOSALS"
	inboxManifest  = "MANIFEST"
)

var inboxKindRank = map[string]int{inboxOverdue: 0, inboxBlocked: 1, inboxGateFail: 2, inboxPR: 3, inboxApproval: 4,
	inboxProposals: 5, inboxManifest: 6}

var urgencyRank = map[string]int{"CRITICAL": 0, "HIGH": 1, "NORMAL": 2, "LOW": 3}

// inboxAction is one thing the human can do, with the command that does
// it when there is one.
type inboxAction struct {
	Text    string `json:"text"`
	Command string `json:"command,omitempty"`
}

// inboxItem is one thing waiting for a human.
type inboxItem struct {
	Kind         string        `json:"kind"`
	Urgency      string        `json:"urgency,omitempty"`
	SubjectType  string        `json:"subject_type"`
	SubjectID    string        `json:"subject_id"`
	Title        string        `json:"title"`
	PauseStateID string        `json:"pause_state_id,omitempty"`
	Reason       string        `json:"reason,omitempty"`
	DeadlineAt   *time.Time    `json:"deadline_at,omitempty"`
	Since        time.Time     `json:"since"`
	Actions      []inboxAction `json:"actions"`
	// NotTaken says, one line each, which reviews of its open pull request
	// were not taken because their authors may not steer an agent.
	NotTaken []string `json:"not_taken,omitempty"`
	// Spend is what an objective's runs have spent so far, and BudgetUSD
	// its cap; absent on approvals and on runs that cost nothing.
	Spend     *domain.Spend `json:"spend,omitempty"`
	BudgetUSD *float64      `json:"budget_usd,omitempty"`
}

// inboxSource is what the inbox reads.
type inboxSource struct {
	q    store.Querier
	self string
	sla  map[string]time.Duration
	now  time.Time
	// hasForge says whether a repository has a forge, whose PASSes get a
	// pull request; nil for none.
	hasForge func(repository string) bool
}

// pendingWindow is how long after a PASS a missing pull request is listed
// as pending: the lifecycle asks a forge that is down for a day.
const pendingWindow = 24 * time.Hour

// inboxPage bounds each store read of the inbox.
const inboxPage = 500

// items gathers every pause state that waits for a human, and every
// objective waiting for approval, most urgent first: by kind (overdue,
// blocked, failed gate, approval, proposals, manifest), then urgency, then
// oldest first.
func (src inboxSource) items(ctx context.Context) ([]inboxItem, error) {
	objectives := map[string]*domain.Objective{}
	var open []*domain.Objective
	listOpen := func(after domain.Cursor) ([]*domain.Objective, error) {
		return src.q.ListObjectivesPage(ctx, store.ObjectivesPageParams{After: after, Limit: inboxPage,
			Statuses: domain.OpenStatuses()})
	}
	for o, err := range pages(listOpen, objectiveCursor) {
		if err != nil {
			return nil, err
		}
		objectives[o.ObjectiveID] = o
		open = append(open, o)
	}
	// The latest pause of each objective, of each triage and of manifests.
	latest := map[string]*domain.PauseState{}
	var overdue, triage []*domain.PauseState
	var manifest *domain.PauseState
	listPauses := func(after domain.Cursor) ([]*domain.PauseState, error) {
		return src.q.ListPauseStatesPage(ctx, store.ListPauseStatesParams{After: after, Limit: inboxPage})
	}
	for p, err := range pages(listPauses, pauseCursor) {
		if err != nil {
			return nil, err
		}
		switch {
		case p.Reason == domain.PauseOverdue:
			overdue = append(overdue, p)
		case p.Subject() == domain.SubjectObjective:
			latest[p.ObjectiveID] = p
		case p.Subject() == domain.SubjectTriage:
			triage = append(triage, p)
		case p.Subject() == domain.SubjectManifest:
			manifest = p
		}
	}

	var out []inboxItem
	// An overdue objective is one item, with whatever else it waits for
	// (an approval) among its actions.
	isOverdue := map[string]int{}
	for _, ps := range overdue {
		o := objectives[ps.ObjectiveID]
		// An OVERDUE pause waits while its objective is open and the
		// deadline it names is still the objective's.
		// A rejected objective stays NEW but waits for nothing.
		if o == nil || ps.DeadlineAt == nil || !deadline.Deadline(o, src.sla).Equal(*ps.DeadlineAt) ||
			isRejected(o, latest[o.ObjectiveID]) {
			continue
		}
		it := src.pauseItem(inboxOverdue, o, ps)
		it.DeadlineAt = ps.DeadlineAt
		isOverdue[o.ObjectiveID] = len(out)
		out = append(out, it)
	}
	for _, o := range open {
		ps := latest[o.ObjectiveID]
		switch {
		case o.Status == domain.StatusNew && !isRejected(o, ps):
			approve := []inboxAction{
				{Text: "approve it", Command: src.self + " objective approve " + o.ObjectiveID},
				{Text: "or reject it", Command: src.self + " objective reject " + o.ObjectiveID},
			}
			if i, ok := isOverdue[o.ObjectiveID]; ok {
				out[i].Actions = append(out[i].Actions, approve...)
				continue
			}
			out = append(out, inboxItem{Kind: inboxApproval, Urgency: o.Urgency, SubjectType: domain.SubjectObjective,
				SubjectID: o.ObjectiveID, Title: o.Title, Since: o.CreatedAt, Actions: approve})
		case ps != nil && o.Status == domain.StatusBlocked:
			out = append(out, src.pauseItem(inboxBlocked, o, ps))
		case ps != nil && o.Status == domain.StatusTodo && (ps.Reason == domain.PauseGateFailed || ps.Reason == domain.PauseBudgetSpent):
			out = append(out, src.pauseItem(inboxGateFail, o, ps))
		}
	}
	if err := src.spend(ctx, out, objectives); err != nil {
		return nil, err
	}
	prs, err := src.pullRequests(ctx, latest)
	if err != nil {
		return nil, err
	}
	out = append(out, prs...)
	proposed, err := src.proposedBy(ctx)
	if err != nil {
		return nil, err
	}
	for _, ps := range triage {
		// A review waits while one of its proposals still waits for
		// approval; a failed triage while it is the latest.
		waiting := ps.Reason != domain.PauseProposalsReview && ps == triage[len(triage)-1]
		for _, id := range proposed[ps.SubjectID] {
			if o := objectives[id]; o != nil && o.Status == domain.StatusNew {
				waiting = true
			}
		}
		if waiting {
			out = append(out, src.subjectItem(inboxProposals, ps))
		}
	}
	if manifest != nil {
		out = append(out, src.subjectItem(inboxManifest, manifest))
	}
	slices.SortStableFunc(out, func(a, b inboxItem) int {
		return cmp.Or(cmp.Compare(inboxKindRank[a.Kind], inboxKindRank[b.Kind]),
			cmp.Compare(rankOf(a.Urgency), rankOf(b.Urgency)), a.Since.Compare(b.Since),
			cmp.Compare(a.SubjectID, b.SubjectID))
	})
	return out, nil
}

// pages yields every row of a cursor-paged listing, reading inboxPage rows
// at a time; cursor is the position after a row. A failed read is yielded
// as the last pair.
func pages[T any](list func(after domain.Cursor) ([]T, error), cursor func(T) domain.Cursor) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for after := (domain.Cursor{}); ; {
			page, err := list(after)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, row := range page {
				if !yield(row, nil) {
					return
				}
			}
			if len(page) < inboxPage {
				return
			}
			after = cursor(page[len(page)-1])
		}
	}
}

func objectiveCursor(o *domain.Objective) domain.Cursor {
	return domain.Cursor{CreatedAt: o.CreatedAt, ID: o.ObjectiveID}
}

func pauseCursor(p *domain.PauseState) domain.Cursor {
	return domain.Cursor{CreatedAt: p.CreatedAt, ID: p.PauseStateID}
}

// isRejected says whether o, whose latest pause of its own is ps (nil for
// none), was rejected: a rejected objective stays NEW.
func isRejected(o *domain.Objective, ps *domain.PauseState) bool {
	return o.Status == domain.StatusNew && pause.WasRejected([]*domain.PauseState{ps})
}

func rankOf(urgency string) int {
	if r, ok := urgencyRank[urgency]; ok {
		return r
	}
	return len(urgencyRank)
}

// proposedBy maps each triage workorder to the objectives its captures
// became.
func (src inboxSource) proposedBy(ctx context.Context) (map[string][]string, error) {
	cs, err := src.q.ListCaptureBuffers(ctx, store.ListCaptureBuffersParams{Status: domain.CaptureProcessed})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, c := range cs {
		if c.WorkOrderID != "" {
			out[c.WorkOrderID] = append(out[c.WorkOrderID], c.ObjectiveIDs...)
		}
	}
	return out, nil
}

// spend fills in what each listed objective's runs have spent so far.
func (src inboxSource) spend(ctx context.Context, items []inboxItem, objectives map[string]*domain.Objective) error {
	for i := range items {
		it := &items[i]
		if it.SubjectType != domain.SubjectObjective || it.Kind == inboxApproval {
			continue
		}
		sp, err := src.q.ObjectiveSpend(ctx, it.SubjectID)
		if err != nil {
			return err
		}
		if sp.Runs > 0 {
			it.Spend = &sp
		}
		if o := objectives[it.SubjectID]; o != nil {
			it.BudgetUSD = o.BudgetUSD
		}
	}
	return nil
}

// spendLine says an item's spend against its budget, "" for none.
func spendLine(sp *domain.Spend, capUSD *float64) string {
	switch {
	case sp == nil && capUSD == nil:
		return ""
	case sp == nil:
		return "nothing yet, budget " + domain.USD(*capUSD)
	case capUSD == nil:
		return sp.String()
	}
	left := budget.Standing{Budget: capUSD, Spend: *sp}.Left()
	return fmt.Sprintf("%s, budget %s, %s left", sp, domain.USD(*capUSD), domain.USD(*left))
}

// pauseItem is an objective's pause state as an inbox item.
func (src inboxSource) pauseItem(kind string, o *domain.Objective, ps *domain.PauseState) inboxItem {
	it := inboxItem{Kind: kind, Urgency: o.Urgency, SubjectType: domain.SubjectObjective, SubjectID: o.ObjectiveID,
		Title: o.Title, PauseStateID: ps.PauseStateID, Reason: ps.Reason, Since: ps.CreatedAt}
	it.Actions = src.actions(ps)
	return it
}

// subjectItem is a triage or manifest run's pause state as an inbox item,
// titled by its first action (by its reason when a row written past the
// schema has none).
func (src inboxSource) subjectItem(kind string, ps *domain.PauseState) inboxItem {
	title := ps.Reason
	if len(ps.PrioritizedActions) > 0 {
		title = ps.PrioritizedActions[0]
	}
	return inboxItem{Kind: kind, SubjectType: ps.Subject(), SubjectID: ps.SubjectID, Title: title,
		PauseStateID: ps.PauseStateID, Reason: ps.Reason, Since: ps.CreatedAt, Actions: src.actions(ps)}
}

func (src inboxSource) actions(ps *domain.PauseState) []inboxAction {
	out := make([]inboxAction, 0, len(ps.PrioritizedActions))
	for i, a := range ps.PrioritizedActions {
		out = append(out, inboxAction{Text: a, Command: pause.Command(src.self, ps, i)})
	}
	return out
}

// pullRequests are the open pull requests, each waiting for a review, and
// the DONE objectives whose pull request was closed without merge or ran
// out of rounds (their latest pause).
func (src inboxSource) pullRequests(ctx context.Context, latest map[string]*domain.PauseState) ([]inboxItem, error) {
	var out []inboxItem
	// open are the objectives with an open pull request: none of them
	// waits for one to be opened.
	open := map[string]bool{}
	list := func(after domain.Cursor) ([]*domain.PullRequest, error) {
		return src.q.ListPullRequests(ctx, store.ListPullRequestsParams{After: after, Limit: inboxPage,
			States: []domain.PullRequestState{domain.PullRequestOpen}})
	}
	cursor := func(p *domain.PullRequest) domain.Cursor {
		return domain.Cursor{CreatedAt: p.CreatedAt, ID: p.ObjectiveID}
	}
	for pr, err := range pages(list, cursor) {
		if err != nil {
			return nil, err
		}
		open[pr.ObjectiveID] = true
		o, err := src.q.GetObjective(ctx, pr.ObjectiveID)
		if err != nil {
			return nil, err
		}
		if ps := latest[o.ObjectiveID]; ps != nil && ps.Reason == domain.PauseRevisionLimit {
			out = append(out, src.pauseItem(inboxPR, o, ps))
			continue
		}
		if o.Status != domain.StatusDone {
			continue // its next round runs
		}
		id := o.ObjectiveID
		fb, err := src.q.ListPullRequestFeedback(ctx, id)
		if err != nil {
			return nil, err
		}
		var refused []string
		for _, f := range notTaken(fb, pr.Number) {
			refused = append(refused, notTakenLine(f))
		}
		out = append(out, inboxItem{Kind: inboxPR, Urgency: o.Urgency, SubjectType: domain.SubjectObjective,
			SubjectID: id, Title: o.Title, Reason: "review " + pr.URL, Since: pr.UpdatedAt, NotTaken: refused,
			Actions: []inboxAction{
				{Text: fmt.Sprintf("review pull request #%d (round %d)", pr.Number, pr.Rounds), Command: pr.URL},
				{Text: "ask for another round with its review", Command: src.self + " objective retry " + id +
					` --comment "what to change"`},
				{Text: "read it now rather than at the next poll", Command: src.self + " pr sync " + id},
			}})
	}
	for id, ps := range latest {
		switch {
		case ps.Reason == domain.PausePullRequestClosed:
			o, err := src.q.GetObjective(ctx, id)
			if err != nil {
				return nil, err
			}
			if o.Status == domain.StatusDone {
				out = append(out, src.pauseItem(inboxPR, o, ps))
			}
		case ps.Reason == domain.PauseRunComplete && src.hasForge != nil && !open[id] && src.now.Sub(ps.CreatedAt) < pendingWindow:
			it, err := src.pendingPullRequest(ctx, id, ps)
			if err != nil {
				return nil, err
			}
			if it != nil {
				out = append(out, *it)
			}
		}
	}
	return out, nil
}

// pendingPullRequest is the item of a recent PASS on a repository with a
// forge whose pull request is not recorded yet (the forge is down, or
// refused: objective show says which); nil when there is none to wait for.
func (src inboxSource) pendingPullRequest(ctx context.Context, id string, ps *domain.PauseState) (*inboxItem, error) {
	o, err := src.q.GetObjective(ctx, id)
	if err != nil {
		return nil, err
	}
	if o.Status != domain.StatusDone || !src.hasForge(o.Repository) {
		return nil, nil
	}
	if _, err := src.q.GetPullRequest(ctx, id); err == nil || !errors.Is(err, domain.ErrNotFound) {
		return nil, err
	}
	return &inboxItem{Kind: inboxPR, Urgency: o.Urgency, SubjectType: domain.SubjectObjective, SubjectID: id,
		Title: o.Title, Reason: "pull request pending", Since: ps.CreatedAt, Actions: []inboxAction{
			{Text: "its pull request is not open yet: see why", Command: src.self + " objective show " + id},
		}}, nil
}
