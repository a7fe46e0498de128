package github_test

// The fake's pull requests: "REST API endpoints for pull requests" and
// "... for review requests", as named at the top of fake_test.go, and
// pushes.

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// pull returns the pull request named in the path, or answers 404.
func (f *fakeGitHub) pull(w http.ResponseWriter, r *http.Request, doc string) *fakePull {
	n, err := strconv.Atoi(r.PathValue("number"))
	p := f.pullNumbered(n)
	if err != nil || p == nil {
		notFound(w, doc)
		return nil
	}
	return p
}

// pullNumbered is pull request n, nil when n is no pull request's number.
func (f *fakeGitHub) pullNumbered(n int) *fakePull {
	i := slices.IndexFunc(f.pulls, func(p *fakePull) bool { return p.number == n })
	if i < 0 {
		return nil
	}
	return f.pulls[i]
}

// nextNumber is the number of a new issue or pull request: GitHub counts
// both in one sequence.
func (f *fakeGitHub) nextNumber() int {
	f.lastNumber++
	return f.lastNumber
}

const (
	docPulls     = "https://docs.github.com/rest/pulls/pulls"
	docReviewers = "https://docs.github.com/rest/pulls/review-requests#request-reviewers-for-a-pull-request"
)

func (f *fakeGitHub) listPulls(w http.ResponseWriter, r *http.Request, _ *fakeUser) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	out := []jsonPullSimple{}
	// Newest first: the default sort is created, descending.
	for _, p := range slices.Backward(f.pulls) {
		if state != "all" && p.state != state {
			continue
		}
		if h := q.Get("head"); h != "" && h != fakeOwner+":"+p.head {
			continue
		}
		if b := q.Get("base"); b != "" && b != p.base {
			continue
		}
		out = append(out, f.simple(p))
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

type newPull struct {
	Title string `json:"title"`
	Head  string `json:"head"`
	Base  string `json:"base"`
	Body  string `json:"body"`
	Draft bool   `json:"draft"`
}

func (f *fakeGitHub) createPull(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docPulls + "#create-a-pull-request"
	if !f.mayWrite(u) {
		forbidden(w, doc)
		return
	}
	var in newPull
	if !decode(w, r, &in) {
		return
	}
	status, body := f.openPull(in, u.login)
	if status != http.StatusCreated {
		validationFailed(w, doc, body)
		return
	}
	p := body.(*fakePull)
	w.Header().Set("Location", f.apiURL("/pulls/"+strconv.Itoa(p.number)))
	writeJSON(w, http.StatusCreated, f.full(p, false))
}

// openPull opens a pull request as author, or returns the 422 entry that
// refuses it. The caller holds f.mu.
func (f *fakeGitHub) openPull(in newPull, author string) (int, any) {
	head := strings.TrimPrefix(in.Head, fakeOwner+":")
	base, hb := f.branches[in.Base], f.branches[head]
	switch {
	case in.Title == "":
		return 422, fieldError("PullRequest", "title", "missing_field")
	case base == nil:
		return 422, fieldError("PullRequest", "base", "invalid")
	case hb == nil:
		return 422, fieldError("PullRequest", "head", "invalid")
	case hb.sha == base.sha:
		return 422, customError("PullRequest", fmt.Sprintf("No commits between %s and %s", in.Base, head))
	}
	for _, p := range f.pulls {
		if p.state == "open" && p.head == head && p.base == in.Base {
			return 422, customError("PullRequest", fmt.Sprintf("A pull request already exists for %s:%s.", fakeOwner, head))
		}
	}
	t := now()
	p := &fakePull{number: f.nextNumber(), id: f.id(), title: in.Title, body: in.Body, author: author,
		head: head, base: in.Base, headSHA: hb.sha, state: "open", draft: in.Draft,
		mergeSHA: f.sha("test-merge", len(f.pulls)), created: t, updated: t}
	f.pulls = append(f.pulls, p)
	return http.StatusCreated, p
}

// humanOpens opens a pull request as the maintainer, straight into the
// state, and returns its number.
func (f *fakeGitHub) humanOpens(head, title string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	status, body := f.openPull(newPull{Title: title, Head: head, Base: fakeBase, Body: "by hand"}, "maintainer")
	if status != http.StatusCreated {
		panic(fmt.Sprintf("fake: opening from %s: %v", head, body))
	}
	return body.(*fakePull).number
}

func (f *fakeGitHub) getPull(w http.ResponseWriter, r *http.Request, _ *fakeUser) {
	if p := f.pull(w, r, docPulls+"#get-a-pull-request"); p != nil {
		writeJSON(w, http.StatusOK, f.full(p, true))
	}
}

func (f *fakeGitHub) updatePull(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docPulls + "#update-a-pull-request"
	p := f.pull(w, r, doc)
	if p == nil {
		return
	}
	if !f.mayWrite(u) && u.login != p.author {
		forbidden(w, doc)
		return
	}
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.State != nil && *in.State != "open" && *in.State != "closed" {
		validationFailed(w, doc, fieldError("PullRequest", "state", "invalid"))
		return
	}
	if in.Title != nil {
		p.title = *in.Title
	}
	if in.Body != nil {
		p.body = *in.Body
	}
	if in.State != nil && *in.State == "closed" && p.state == "open" {
		p.state, p.closed = "closed", now()
	}
	p.updated = now()
	writeJSON(w, http.StatusOK, f.full(p, false))
}

func (f *fakeGitHub) mergePull(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docPulls + "#merge-a-pull-request"
	p := f.pull(w, r, doc)
	if p == nil {
		return
	}
	if !f.mayWrite(u) {
		forbidden(w, doc)
		return
	}
	var in struct {
		SHA string `json:"sha"`
	}
	if !decode(w, r, &in) {
		return
	}
	switch {
	case p.state != "open" || p.draft:
		writeError(w, http.StatusMethodNotAllowed, "Pull Request is not mergeable", doc)
		return
	case in.SHA != "" && in.SHA != p.headSHA:
		writeError(w, http.StatusConflict, "Head branch was modified. Review and try the merge again.", doc)
		return
	}
	t := now()
	p.merged, p.mergedBy, p.mergedAt, p.closed, p.updated, p.state = true, u.login, t, t, t, "closed"
	p.mergeSHA = f.sha("merge", p.number)
	f.branches[p.base].sha = p.mergeSHA
	f.commits[p.mergeSHA] = true
	writeJSON(w, http.StatusOK, map[string]any{"sha": p.mergeSHA, "merged": true, "message": "Pull Request successfully merged"})
}

func (f *fakeGitHub) requestReviewers(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	p := f.pull(w, r, docReviewers)
	if p == nil {
		return
	}
	if !f.mayWrite(u) {
		forbidden(w, docReviewers)
		return
	}
	var in struct {
		Reviewers []string `json:"reviewers"`
	}
	if !decode(w, r, &in) {
		return
	}
	for _, login := range in.Reviewers {
		if login == p.author {
			writeError(w, http.StatusUnprocessableEntity, "Review cannot be requested from pull request author.", docReviewers)
			return
		}
		if f.roleOf(login) == "" {
			writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf(
				"Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the %s/%s repository.",
				fakeOwner, fakeRepo), docReviewers)
			return
		}
	}
	for _, login := range in.Reviewers {
		if !slices.Contains(p.reviewers, login) {
			p.reviewers = append(p.reviewers, login)
		}
	}
	writeJSON(w, http.StatusCreated, f.simple(p))
}

// push adds a commit on branch (created from the base), changing the next
// of fakeFiles, moves the open pull requests from it along, and returns
// the commit.
func (f *fakeGitHub) push(branch string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.branches[branch]
	if b == nil {
		b = &fakeBranch{}
		f.branches[branch] = b
	}
	file := fakeFiles[b.pushes%len(fakeFiles)]
	b.pushes++
	if !slices.Contains(b.files, file) {
		b.files = append(b.files, file)
	}
	b.sha = f.sha(branch, b.pushes)
	f.commits[b.sha] = true
	for _, p := range f.pulls {
		if p.state == "open" && p.head == branch {
			p.headSHA, p.mergeableKnown, p.updated = b.sha, false, now()
		}
	}
	return b.sha
}

// labelsOf and reviewersOf read a pull request's labels and requested
// reviewers straight from the state.
func (f *fakeGitHub) labelsOf(number int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.pullNumbered(number).labels)
}

func (f *fakeGitHub) reviewersOf(number int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.pullNumbered(number).reviewers)
}

func (f *fakeGitHub) pullCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pulls)
}

// now is the fake's clock: GitHub's timestamps have whole seconds.
func now() time.Time { return time.Now().UTC().Truncate(time.Second) }
