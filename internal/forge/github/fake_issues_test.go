package github_test

// The fake's issues: "REST API endpoints for issues", as named at the top
// of fake_test.go. A number names an issue or a pull request; the issue
// endpoints answer both, a pull request in the issue shape with its
// pull_request key (fake_shapes_test.go).

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const docIssues = "https://docs.github.com/rest/issues/issues"

// fakeThread is what a number names: an issue, or a pull request's issue
// side. Exactly one is set.
type fakeThread struct {
	issue *fakeIssue
	pull  *fakePull
}

// numbered returns the issue or pull request numbered n.
func (f *fakeGitHub) numbered(n int) (fakeThread, bool) {
	if p := f.pullNumbered(n); p != nil {
		return fakeThread{pull: p}, true
	}
	i := slices.IndexFunc(f.issues, func(is *fakeIssue) bool { return is.number == n })
	if i < 0 {
		return fakeThread{}, false
	}
	return fakeThread{issue: f.issues[i]}, true
}

// thread returns the issue or pull request named in the path, or answers
// 404.
func (f *fakeGitHub) thread(w http.ResponseWriter, r *http.Request, doc string) (fakeThread, bool) {
	n, err := strconv.Atoi(r.PathValue("number"))
	th, ok := f.numbered(n)
	if err != nil || !ok {
		notFound(w, doc)
		return fakeThread{}, false
	}
	return th, true
}

func (th fakeThread) number() int {
	if th.pull != nil {
		return th.pull.number
	}
	return th.issue.number
}

func (th fakeThread) author() string {
	if th.pull != nil {
		return th.pull.author
	}
	return th.issue.author
}

// labels and assignees point at the thread's lists, to change them.
func (th fakeThread) labels() *[]string {
	if th.pull != nil {
		return &th.pull.labels
	}
	return &th.issue.labels
}

func (th fakeThread) assignees() *[]string {
	if th.pull != nil {
		return &th.pull.assignees
	}
	return &th.issue.assignees
}

// touch moves the thread's updated_at, as any change to it does.
func (th fakeThread) touch(t time.Time) {
	if th.pull != nil {
		th.pull.updated = t
	} else {
		th.issue.updated = t
	}
}

// threads are every issue and pull request, by number.
func (f *fakeGitHub) threads() []fakeThread {
	var out []fakeThread
	for n := 1; n <= f.lastNumber; n++ {
		if th, ok := f.numbered(n); ok {
			out = append(out, th)
		}
	}
	return out
}

func (f *fakeGitHub) updatedOf(th fakeThread) time.Time {
	if th.pull != nil {
		return th.pull.updated
	}
	return th.issue.updated
}

// setUpdated sets the updated_at of issue or pull request number, as time
// passing would.
func (f *fakeGitHub) setUpdated(number int, t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	th, ok := f.numbered(number)
	if !ok {
		panic(fmt.Sprintf("fake: no issue #%d", number))
	}
	th.touch(t)
}

// querySince reads since: an ISO 8601 timestamp, the zero time when
// absent; false after answering 422.
func querySince(w http.ResponseWriter, r *http.Request, doc, resource string) (time.Time, bool) {
	v := r.URL.Query().Get("since")
	if v == "" {
		return time.Time{}, true
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		validationFailed(w, doc, fieldError(resource, "since", "invalid"))
		return time.Time{}, false
	}
	return t, true
}

func (f *fakeGitHub) listIssues(w http.ResponseWriter, r *http.Request, _ *fakeUser) {
	const doc = docIssues + "#list-repository-issues"
	q := r.URL.Query()
	state, by, dir := cmp.Or(q.Get("state"), "open"), cmp.Or(q.Get("sort"), "created"), cmp.Or(q.Get("direction"), "desc")
	for _, p := range []struct {
		name, value string
		allowed     []string
	}{
		{"state", state, []string{"open", "closed", "all"}},
		{"sort", by, []string{"created", "updated", "comments"}},
		{"direction", dir, []string{"asc", "desc"}},
	} {
		if !slices.Contains(p.allowed, p.value) {
			validationFailed(w, doc, fieldError("Issue", p.name, "invalid"))
			return
		}
	}
	since, ok := querySince(w, r, doc, "Issue")
	if !ok {
		return
	}
	out := []jsonIssue{}
	for _, th := range f.threads() {
		j := f.issueJSON(th)
		if (state == "all" || j.State == state) && !f.updatedOf(th).Before(since) {
			out = append(out, j)
		}
	}
	key := func(j jsonIssue) string {
		switch by {
		case "updated":
			return *j.UpdatedAt
		case "comments":
			return fmt.Sprintf("%09d", j.Comments)
		}
		return *j.CreatedAt
	}
	// Ties keep the order of their numbers.
	slices.SortStableFunc(out, func(a, b jsonIssue) int { return strings.Compare(key(a), key(b)) })
	if dir == "desc" {
		slices.Reverse(out)
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

type issueRequest struct {
	Title       *string   `json:"title"`
	Body        *string   `json:"body"`
	State       *string   `json:"state"`
	StateReason *string   `json:"state_reason"`
	Labels      *[]string `json:"labels"`
	Assignees   *[]string `json:"assignees"`
}

func (f *fakeGitHub) createIssue(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docIssues + "#create-an-issue"
	var in issueRequest
	if !decode(w, r, &in) {
		return
	}
	if in.Title == nil || *in.Title == "" {
		validationFailed(w, doc, fieldError("Issue", "title", "missing_field"))
		return
	}
	t := now()
	is := &fakeIssue{id: f.id(), title: *in.Title, author: u.login, state: "open", created: t, updated: t}
	if in.Body != nil {
		is.body = *in.Body
	}
	th := fakeThread{issue: is}
	if !f.triage(w, doc, u, th, in) {
		return
	}
	is.number = f.nextNumber()
	f.issues = append(f.issues, is)
	w.Header().Set("Location", f.apiURL("/issues/"+strconv.Itoa(is.number)))
	writeJSON(w, http.StatusCreated, f.issueJSON(th))
}

// triage sets in's labels and assignees on th when u has push access;
// GitHub silently drops both for anyone else. A label the repository
// lacks is created; an assignee who may not be assigned (not a
// collaborator) is a 422, and nothing is changed.
func (f *fakeGitHub) triage(w http.ResponseWriter, doc string, u *fakeUser, th fakeThread, in issueRequest) bool {
	if !f.mayWrite(u) {
		return true
	}
	if in.Assignees != nil {
		for _, login := range *in.Assignees {
			if f.roleOf(login) == "" {
				validationFailed(w, doc, fieldError("Issue", "assignees", "invalid"))
				return false
			}
		}
		*th.assignees() = slices.Clone(*in.Assignees)
	}
	if in.Labels != nil {
		for _, name := range *in.Labels {
			if f.labels[strings.ToLower(name)] == nil {
				f.labels[strings.ToLower(name)] = &fakeLabel{id: f.id(), name: name, color: "ededed"}
			}
		}
		before := *th.labels()
		*th.labels() = slices.Clone(*in.Labels)
		f.recordLabels(th, u.login, before)
	}
	return true
}

func (f *fakeGitHub) getIssue(w http.ResponseWriter, r *http.Request, _ *fakeUser) {
	if th, ok := f.thread(w, r, docIssues+"#get-an-issue"); ok {
		writeJSON(w, http.StatusOK, f.issueJSON(th))
	}
}

// updateIssue changes an issue, or a pull request's issue side, as its
// author or a caller with push access.
func (f *fakeGitHub) updateIssue(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docIssues + "#update-an-issue"
	th, ok := f.thread(w, r, doc)
	if !ok {
		return
	}
	var in issueRequest
	if !decode(w, r, &in) {
		return
	}
	if !f.mayWrite(u) && u.login != th.author() {
		forbidden(w, doc)
		return
	}
	if in.State != nil && *in.State != "open" && *in.State != "closed" {
		validationFailed(w, doc, fieldError("Issue", "state", "invalid"))
		return
	}
	if !f.triage(w, doc, u, th, in) {
		return
	}
	t := now()
	if p := th.pull; p != nil {
		if in.Title != nil {
			p.title = *in.Title
		}
		if in.Body != nil {
			p.body = *in.Body
		}
		if in.State != nil && *in.State == "closed" && p.state == "open" {
			p.state, p.closed = "closed", t
		}
	} else {
		is := th.issue
		if in.Title != nil {
			is.title = *in.Title
		}
		if in.Body != nil {
			is.body = *in.Body
		}
		switch {
		case in.State != nil && *in.State == "closed" && is.state == "open":
			is.state, is.closed, is.closedBy, is.stateReason = "closed", t, u.login, "completed"
			if in.StateReason != nil {
				is.stateReason = *in.StateReason
			}
		case in.State != nil && *in.State == "open" && is.state == "closed":
			is.state, is.closed, is.stateReason = "open", time.Time{}, "reopened"
		}
	}
	th.touch(t)
	writeJSON(w, http.StatusOK, f.issueJSON(th))
}
