// Package inbox is the lifecycle's hand-back to humans as one read model:
// every pause state, objective and pull request that waits for a person,
// as items in the order to take them, each with the actions that settle
// it (and the command of each), and what its objective has spent. The
// command line prints it (azolla inbox); it prints nothing itself.
//
// It reads the store through the roles it names in Store, and asks pause
// for the commands of a pause's actions and deadline for whether an
// OVERDUE pause still names its objective's deadline. It may import
// domain, the store's roles, the other lifecycle rules and textsafe;
// never the CLI, cobra or Temporal.
package inbox

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/deadline"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
)

// Kinds of inbox item, most urgent kind first: an agent's question comes
// first, as nothing goes on until it is answered.
const (
	KindQuestion    = "QUESTION"
	KindOverdue     = "OVERDUE"
	KindBlocked     = "BLOCKED"
	KindGateFailed  = "GATE_FAILED"
	KindPullRequest = "PULL_REQUEST"
	KindApproval    = "APPROVAL"
	KindProposals   = "PROPOSALS"
	KindManifest    = "MANIFEST"
)

var kindRank = map[string]int{KindQuestion: 0, KindOverdue: 1, KindBlocked: 2, KindGateFailed: 3, KindPullRequest: 4,
	KindApproval: 5, KindProposals: 6, KindManifest: 7}

var urgencyRank = map[string]int{"CRITICAL": 0, "HIGH": 1, "NORMAL": 2, "LOW": 3}

// Action is one thing the human can do, with the command that does it
// when there is one.
type Action struct {
	Text    string `json:"text"`
	Command string `json:"command,omitempty"`
}

// Item is one thing waiting for a human. Its JSON form is what
// `azolla inbox -o json` prints.
type Item struct {
	Kind        string `json:"kind"`
	Urgency     string `json:"urgency,omitempty"`
	SubjectType string `json:"subject_type"`
	SubjectID   string `json:"subject_id"`
	Title       string `json:"title"`
	// From is the page of the issue (or document) the objective was made
	// from, when it came from one.
	From         string     `json:"from,omitempty"`
	PauseStateID string     `json:"pause_state_id,omitempty"`
	Reason       string     `json:"reason,omitempty"`
	DeadlineAt   *time.Time `json:"deadline_at,omitempty"`
	Since        time.Time  `json:"since"`
	Actions      []Action   `json:"actions"`
	// NotTaken says, one line each, which reviews of its open pull request
	// were not taken because their authors may not steer an agent.
	NotTaken []string `json:"not_taken,omitempty"`
	// Spend is what an objective's runs have spent so far, and BudgetUSD
	// its cap; absent on approvals and on runs that cost nothing.
	Spend     *domain.Spend `json:"spend,omitempty"`
	BudgetUSD *float64      `json:"budget_usd,omitempty"`
}

// Store is what the inbox reads: the store's roles of objectives, pause
// states, captures (what triage proposed), pull requests and their
// feedback, and spend.
type Store interface {
	store.ObjectiveQuerier
	store.PauseQuerier
	store.CaptureQuerier
	store.PullRequestQuerier
	store.PullRequestFeedbackQuerier
	store.SpendQuerier
}

// Source is where the inbox reads, and how its commands are spelled.
type Source struct {
	Store Store
	// Self is the command line as the user invoked it ("azolla"): each
	// action's command starts with it.
	Self string
	// SLA is deadlines.sla: an OVERDUE pause waits only while the deadline
	// it names is still its objective's.
	SLA map[string]time.Duration
	// Now is when the inbox is read.
	Now time.Time
	// HasForge says whether a repository has a forge, whose PASSes get a
	// pull request; nil for none.
	HasForge func(repository string) bool
}

// pendingWindow is how long after a PASS a missing pull request is listed
// as pending: the lifecycle asks a forge that is down for a day.
const pendingWindow = 24 * time.Hour

// Items gathers every pause state that waits for a human, and every
// objective waiting for approval, most urgent first: by kind (an agent's
// question, overdue, blocked, failed gate, pull request, approval, proposals, manifest), then
// urgency, then oldest first.
func (src Source) Items(ctx context.Context) ([]Item, error) {
	objectives := map[string]*domain.Objective{}
	var open []*domain.Objective
	listOpen := func(after domain.Cursor) ([]*domain.Objective, error) {
		return src.Store.ListObjectivesPage(ctx, store.ObjectivesPageParams{After: after, Limit: pageSize,
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
		return src.Store.ListPauseStatesPage(ctx, store.ListPauseStatesParams{After: after, Limit: pageSize})
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

	var out []Item
	// An overdue objective is one item, with whatever else it waits for
	// (an approval) among its actions.
	isOverdue := map[string]int{}
	for _, ps := range overdue {
		o := objectives[ps.ObjectiveID]
		// An OVERDUE pause waits while its objective is open and the
		// deadline it names is still the objective's.
		// A rejected objective stays NEW but waits for nothing.
		if o == nil || ps.DeadlineAt == nil || !deadline.Deadline(o, src.SLA).Equal(*ps.DeadlineAt) ||
			isRejected(o, latest[o.ObjectiveID]) {
			continue
		}
		it := src.pauseItem(KindOverdue, o, ps)
		it.DeadlineAt = ps.DeadlineAt
		isOverdue[o.ObjectiveID] = len(out)
		out = append(out, it)
	}
	for _, o := range open {
		ps := latest[o.ObjectiveID]
		switch {
		case o.Status == domain.StatusNew && !isRejected(o, ps):
			approve := []Action{
				{Text: "approve it", Command: src.Self + " objective approve " + o.ObjectiveID},
				{Text: "or reject it", Command: src.Self + " objective reject " + o.ObjectiveID},
			}
			if o.Provenance != "" {
				approve = append(approve, Action{Text: "or, if it came from a forge issue, comment /azolla approve (or /azolla reject <reason>) there"})
			}
			if i, ok := isOverdue[o.ObjectiveID]; ok {
				out[i].Actions = append(out[i].Actions, approve...)
				continue
			}
			out = append(out, Item{Kind: KindApproval, Urgency: o.Urgency, SubjectType: domain.SubjectObjective,
				SubjectID: o.ObjectiveID, Title: o.Title, From: o.Provenance, Since: o.CreatedAt, Actions: approve})
		case ps != nil && o.Status == domain.StatusBlocked:
			out = append(out, src.pauseItem(KindBlocked, o, ps))
		case ps != nil && o.Status == domain.StatusTodo && ps.Reason == domain.PauseQuestion:
			out = append(out, src.pauseItem(KindQuestion, o, ps))
		case ps != nil && o.Status == domain.StatusTodo && slices.Contains(waitingFail, ps.Reason):
			out = append(out, src.pauseItem(KindGateFailed, o, ps))
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
			out = append(out, src.subjectItem(KindProposals, ps))
		}
	}
	if manifest != nil {
		out = append(out, src.subjectItem(KindManifest, manifest))
	}
	slices.SortStableFunc(out, func(a, b Item) int {
		return cmp.Or(cmp.Compare(kindRank[a.Kind], kindRank[b.Kind]),
			cmp.Compare(rankOf(a.Urgency), rankOf(b.Urgency)), a.Since.Compare(b.Since),
			cmp.Compare(a.SubjectID, b.SubjectID))
	})
	return out, nil
}

// waitingFail are the reasons a TODO objective waits for a retry with: a
// FAIL's, as the gate wrote it.
var waitingFail = []string{domain.PauseGateFailed, domain.PauseBudgetSpent, domain.PauseClosedOnForge}

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
func (src Source) proposedBy(ctx context.Context) (map[string][]string, error) {
	cs, err := src.Store.ListCaptureBuffers(ctx, store.ListCaptureBuffersParams{Status: domain.CaptureProcessed})
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
func (src Source) spend(ctx context.Context, items []Item, objectives map[string]*domain.Objective) error {
	for i := range items {
		it := &items[i]
		if it.SubjectType != domain.SubjectObjective || it.Kind == KindApproval {
			continue
		}
		sp, err := src.Store.ObjectiveSpend(ctx, it.SubjectID)
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

// pauseItem is an objective's pause state as an inbox item.
func (src Source) pauseItem(kind string, o *domain.Objective, ps *domain.PauseState) Item {
	it := Item{Kind: kind, Urgency: o.Urgency, SubjectType: domain.SubjectObjective, SubjectID: o.ObjectiveID,
		Title: o.Title, PauseStateID: ps.PauseStateID, Reason: ps.Reason, Since: ps.CreatedAt}
	it.Actions = src.actions(ps)
	return it
}

// subjectItem is a triage or manifest run's pause state as an inbox item,
// titled by its first action (by its reason when a row written past the
// schema has none).
func (src Source) subjectItem(kind string, ps *domain.PauseState) Item {
	title := ps.Reason
	if len(ps.PrioritizedActions) > 0 {
		title = ps.PrioritizedActions[0]
	}
	return Item{Kind: kind, SubjectType: ps.Subject(), SubjectID: ps.SubjectID, Title: title,
		PauseStateID: ps.PauseStateID, Reason: ps.Reason, Since: ps.CreatedAt, Actions: src.actions(ps)}
}

func (src Source) actions(ps *domain.PauseState) []Action {
	out := make([]Action, 0, len(ps.PrioritizedActions))
	for i, a := range ps.PrioritizedActions {
		out = append(out, Action{Text: a, Command: pause.Command(src.Self, ps, i)})
	}
	return out
}
