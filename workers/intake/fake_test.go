package intake_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// fakeForge is one repository's issues and conversations in memory, with
// the forge's rules intake leans on: times to the second, "since"
// inclusive, only the author edits a comment (or a writer).
type fakeForge struct {
	forge.Forge // the pull request methods: not used by intake

	mu       sync.Mutex
	self     string
	clock    time.Time
	issues   map[int]*forge.Issue
	comments map[forge.Thread][]*forge.Comment
	perms    map[string]forge.Permission
	nextID   int
	// labelled is who applied each label to each issue, and when.
	labelled map[int]map[string]labelEvent
	// failPost fails the next n PostComment calls, as a forge that went
	// away does.
	failPost int
	posts    int
	// limitIssues answers the next Issues call with a rate limit of that
	// many seconds; issueReads counts the calls.
	limitIssues time.Duration
	issueReads  int
}

func newFakeForge() *fakeForge {
	return &fakeForge{self: "azolla-bot", clock: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
		issues: map[int]*forge.Issue{}, comments: map[forge.Thread][]*forge.Comment{},
		perms: map[string]forge.Permission{"azolla-bot": forge.PermissionAdmin, "ana": forge.PermissionWrite,
			"rita": forge.PermissionRead}}
}

type labelEvent struct {
	user string
	at   time.Time
}

// label has user apply label to issue n.
func (f *fakeForge) label(n int, user, label string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.issues[n]
	is.Labels = append(is.Labels, label)
	is.UpdatedAt = f.tick()
	if f.labelled == nil {
		f.labelled = map[int]map[string]labelEvent{}
	}
	if f.labelled[n] == nil {
		f.labelled[n] = map[string]labelEvent{}
	}
	f.labelled[n][strings.ToLower(label)] = labelEvent{user, is.UpdatedAt}
}

func (f *fakeForge) LabelledBy(_ context.Context, n int, label string) (string, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.issues[n] == nil {
		return "", time.Time{}, forge.ErrNotFound
	}
	e := f.labelled[n][strings.ToLower(label)]
	return e.user, e.at, nil
}

// tick moves the forge's clock a second on: every change is in a second
// of its own unless a test says otherwise.
func (f *fakeForge) tick() time.Time {
	f.clock = f.clock.Add(time.Second)
	return f.clock
}

func (f *fakeForge) open(author, title, body string, labels ...string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.issues) + len(f.comments) + 1
	for f.issues[n] != nil {
		n++
	}
	f.issues[n] = &forge.Issue{Number: n, URL: fmt.Sprintf("https://git.example.com/acme/widgets/issues/%d", n),
		Title: title, Body: body, Author: author, State: forge.IssueOpen, UpdatedAt: f.tick()}
	f.mu.Unlock()
	for _, l := range labels {
		f.label(n, author, l) // applied as it was opened, by its author
	}
	f.mu.Lock()
	return n
}

func (f *fakeForge) edit(n int, m func(*forge.Issue)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m(f.issues[n])
	f.issues[n].UpdatedAt = f.tick()
}

func (f *fakeForge) say(user string, on forge.Thread, body string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.add(user, on, body).ID
}

func (f *fakeForge) add(user string, on forge.Thread, body string) *forge.Comment {
	f.nextID++
	at := f.tick()
	c := &forge.Comment{ID: strconv.Itoa(1000 + f.nextID), Author: user, Body: body, CreatedAt: at, UpdatedAt: at}
	f.comments[on] = append(f.comments[on], c)
	if is := f.issues[on.Number]; is != nil && !on.Pull {
		is.UpdatedAt = at
	}
	return c
}

// remove deletes comment id, as a human who deletes it does.
func (f *fakeForge) remove(on forge.Thread, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.comments[on] = slices.DeleteFunc(f.comments[on], func(c *forge.Comment) bool { return c.ID == id })
}

// thread is a copy of a thread's comments.
func (f *fakeForge) thread(on forge.Thread) []forge.Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []forge.Comment
	for _, c := range f.comments[on] {
		out = append(out, *c)
	}
	return out
}

// by is the comments of user in a thread.
func (f *fakeForge) by(user string, on forge.Thread) []forge.Comment {
	return slices.DeleteFunc(f.thread(on), func(c forge.Comment) bool { return c.Author != user })
}

func (f *fakeForge) Issues(_ context.Context, since time.Time) ([]forge.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.issueReads++
	if f.limitIssues > 0 {
		d := f.limitIssues
		f.limitIssues = 0
		return nil, &forge.RateLimitError{RetryAfter: d, Message: "slow down"}
	}
	var out []forge.Issue
	for _, is := range f.issues {
		if !is.UpdatedAt.Before(since) {
			out = append(out, *is)
		}
	}
	slices.SortFunc(out, func(a, b forge.Issue) int { return a.UpdatedAt.Compare(b.UpdatedAt) })
	return out, nil
}

func (f *fakeForge) Issue(_ context.Context, n int) (forge.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if is := f.issues[n]; is != nil {
		return *is, nil
	}
	return forge.Issue{}, forge.ErrNotFound
}

func (f *fakeForge) Comments(_ context.Context, on forge.Thread, since time.Time) ([]forge.Comment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []forge.Comment
	for _, c := range f.comments[on] {
		if !c.UpdatedAt.Before(since) {
			out = append(out, *c)
		}
	}
	return out, nil
}

func (f *fakeForge) PostComment(_ context.Context, on forge.Thread, body string) (forge.Comment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failPost > 0 {
		f.failPost--
		return forge.Comment{}, errors.New("forge unavailable")
	}
	f.posts++
	return *f.add(f.self, on, body), nil
}

func (f *fakeForge) EditComment(_ context.Context, on forge.Thread, id, body string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.comments[on] {
		if c.ID == id {
			c.Body, c.UpdatedAt = body, f.tick()
			return nil
		}
	}
	return forge.ErrNotFound
}

func (f *fakeForge) Permission(_ context.Context, user string) (forge.Permission, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.perms[user], nil
}

func (f *fakeForge) TeamMember(context.Context, string, string) (bool, error) { return false, nil }

// fakeDecider is the lifecycle as intake sees it: it takes one decision
// per request id, as Temporal's update ids make it, and moves the
// objective in the store as the lifecycle would.
type fakeDecider struct {
	mu      sync.Mutex
	store   store.Store
	taken   map[string]workflows.DecisionResult
	calls   []decision
	started []string
}

type decision struct {
	objective, kind, request string
	workflows.Decision
}

func (d *fakeDecider) DecideOnce(ctx context.Context, objectiveID, kind, requestID string, dec workflows.Decision) (workflows.DecisionResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, decision{objectiveID, kind, requestID, dec})
	if res, ok := d.taken[requestID]; ok && requestID != "" {
		return res, nil
	}
	o, err := d.store.GetObjective(ctx, objectiveID)
	if err != nil {
		return workflows.DecisionResult{}, err
	}
	var res workflows.DecisionResult
	switch {
	case kind == workflows.Approve && o.Status == domain.StatusNew:
		if _, err := d.store.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: objectiveID,
			From: []domain.Status{domain.StatusNew}, To: domain.StatusTodo}); err != nil {
			return res, err
		}
		res.EventID = "ev-ready-" + objectiveID
	case kind == workflows.Reject && o.Status == domain.StatusNew:
		ps := &domain.PauseState{PauseStateID: "ps-rejected-" + objectiveID, ObjectiveID: objectiveID,
			Reason: domain.PauseRejected, PrioritizedActions: []string{"Rejected by " + dec.By + ": " + dec.Comment},
			CreatedAt: time.Now().UTC()}
		if err := d.store.CreatePauseState(ctx, ps); err != nil {
			return res, err
		}
		res.Pause = ps
	case kind == workflows.Retry && o.Status != domain.StatusNew:
		if _, err := d.store.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: objectiveID,
			To: domain.StatusTodo}); err != nil {
			return res, err
		}
		res.EventID = fmt.Sprintf("ev-retry-%s-%d", objectiveID, len(d.taken))
	default:
		return res, fmt.Errorf("%s: %w: objective %s is %s", kind, starter.ErrRefused, objectiveID, o.Status)
	}
	if d.taken == nil {
		d.taken = map[string]workflows.DecisionResult{}
	}
	d.taken[requestID] = res
	return res, nil
}

func (d *fakeDecider) Start(_ context.Context, o *domain.Objective) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.started = append(d.started, o.ObjectiveID)
	return nil
}

// decided is the decisions the lifecycle took (repeats folded), of kind.
func (d *fakeDecider) decided(kind string) []decision {
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := map[string]bool{}
	var out []decision
	for _, c := range d.calls {
		if c.kind == kind && !seen[c.request] {
			if _, ok := d.taken[c.request]; ok {
				seen[c.request] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// fakeObserver counts what intake reports.
type fakeObserver struct {
	mu       sync.Mutex
	intake   map[string]int
	commands map[string]int
}

func (o *fakeObserver) Intake(_, result string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.intake[result]++
}

func (o *fakeObserver) Command(command, result string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.commands[command+" "+result]++
}

func (o *fakeObserver) count(m map[string]int, key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return m[key]
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
