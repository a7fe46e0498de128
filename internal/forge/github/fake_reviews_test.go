package github_test

// The fake's reviews and review comments: "REST API endpoints for pull
// request reviews" and "... for pull request review comments", as named
// at the top of fake_test.go.

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

const (
	docReviews        = "https://docs.github.com/rest/pulls/reviews"
	docReviewComments = "https://docs.github.com/rest/pulls/comments#list-review-comments-on-a-pull-request"
)

// reviewStates maps a review's event to the state it leaves.
var reviewStates = map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}

func (f *fakeGitHub) reviewJSON(rv *fakeReview) map[string]any {
	html := fmt.Sprintf("https://github.example/%s/%s/pull/%d#pullrequestreview-%d", fakeOwner, fakeRepo, rv.pull, rv.id)
	j := map[string]any{
		"id": rv.id, "node_id": "PRR_" + strconv.FormatInt(rv.id, 10), "user": f.user(rv.author),
		"body": rv.body, "state": rv.state, "html_url": html,
		"pull_request_url": f.apiURL("/pulls/" + strconv.Itoa(rv.pull)),
		"_links":           map[string]any{"html": map[string]string{"href": html}},
		"commit_id":        rv.commit, "author_association": f.association(rv.author),
	}
	// A pending review has not been submitted: GitHub leaves the field out.
	if rv.state != "PENDING" {
		j["submitted_at"] = stamp(rv.submitted)
	}
	return j
}

func (f *fakeGitHub) commentJSON(c *fakeComment) map[string]any {
	html := fmt.Sprintf("https://github.example/%s/%s/pull/%d#discussion_r%d", fakeOwner, fakeRepo, c.pull, c.id)
	var line, position any = c.line, 1
	if c.outdated {
		line, position = nil, nil
	}
	return map[string]any{
		"url": f.apiURL("/pulls/comments/" + strconv.FormatInt(c.id, 10)), "pull_request_review_id": c.review,
		"id": c.id, "node_id": "PRRC_" + strconv.FormatInt(c.id, 10),
		"diff_hunk": fmt.Sprintf("@@ -0,0 +1,%d @@", c.line), "path": c.path,
		"position": position, "original_position": 1, "commit_id": c.commit, "original_commit_id": c.commit,
		"user": f.user(c.author), "body": c.body, "created_at": stamp(c.created), "updated_at": stamp(c.created),
		"html_url": html, "pull_request_url": f.apiURL("/pulls/" + strconv.Itoa(c.pull)),
		"author_association": f.association(c.author), "_links": map[string]any{"html": map[string]string{"href": html}},
		"start_line": nil, "original_start_line": nil, "start_side": nil,
		"line": line, "original_line": c.line, "side": c.side, "subject_type": "line",
	}
}

// visible says whether u may see rv: a pending review is its author's
// alone.
func visible(rv *fakeReview, u *fakeUser) bool {
	return rv.state != "PENDING" || rv.author == u.login
}

func (f *fakeGitHub) listReviews(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	p := f.pull(w, r, docReviews+"#list-reviews-for-a-pull-request")
	if p == nil {
		return
	}
	out := []map[string]any{}
	for _, rv := range f.reviews {
		if rv.pull == p.number && visible(rv, u) {
			out = append(out, f.reviewJSON(rv))
		}
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

type draftComment struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Side string `json:"side"`
	Body string `json:"body"`
}

func (f *fakeGitHub) createReview(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docReviews + "#create-a-review-for-a-pull-request"
	p := f.pull(w, r, doc)
	if p == nil {
		return
	}
	var in struct {
		CommitID string         `json:"commit_id"`
		Body     string         `json:"body"`
		Event    string         `json:"event"`
		Comments []draftComment `json:"comments"`
	}
	if !decode(w, r, &in) {
		return
	}
	state := "PENDING"
	if in.Event != "" {
		state = reviewStates[in.Event]
	}
	if refused := f.refuseReview(p, u, state, in.Body, len(in.Comments)); refused != "" {
		writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", doc, refused)
		return
	}
	for _, c := range in.Comments {
		if !slices.Contains(f.branches[p.head].files, c.Path) || c.Line < 1 {
			writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", doc, "Path could not be resolved")
			return
		}
	}
	commit := in.CommitID
	if commit == "" {
		commit = p.headSHA
	}
	if !f.commits[commit] {
		validationFailed(w, doc, fieldError("PullRequestReview", "commit_id", "invalid"))
		return
	}
	rv := &fakeReview{id: f.id(), pull: p.number, author: u.login, state: state, body: in.Body, commit: commit}
	if state != "PENDING" {
		rv.submitted = now()
	}
	f.reviews = append(f.reviews, rv)
	for _, c := range in.Comments {
		side := c.Side
		if side == "" {
			side = "RIGHT"
		}
		f.comments = append(f.comments, &fakeComment{id: f.id(), review: rv.id, pull: p.number, author: u.login,
			path: c.Path, side: side, line: c.Line, body: c.Body, commit: commit, created: now()})
	}
	writeJSON(w, http.StatusOK, f.reviewJSON(rv))
}

// refuseReview returns why GitHub refuses a review in state by u, or "".
func (f *fakeGitHub) refuseReview(p *fakePull, u *fakeUser, state, body string, comments int) string {
	switch {
	case state == "":
		return "Unknown review event"
	case p.author == u.login && state == "APPROVED":
		return "Can not approve your own pull request"
	case p.author == u.login && state == "CHANGES_REQUESTED":
		return "Can not request changes on your own pull request"
	case body == "" && (state == "CHANGES_REQUESTED" || state == "COMMENTED" && comments == 0):
		return "Body is required for this event"
	}
	if state == "PENDING" {
		for _, rv := range f.reviews {
			if rv.pull == p.number && rv.author == u.login && rv.state == "PENDING" {
				return "User can only have one pending review per pull request"
			}
		}
	}
	return ""
}

// review returns the review named in the path if u may see it, or answers
// 404.
func (f *fakeGitHub) review(w http.ResponseWriter, r *http.Request, p *fakePull, u *fakeUser, doc string) *fakeReview {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for _, rv := range f.reviews {
		if rv.id == id && rv.pull == p.number && visible(rv, u) {
			return rv
		}
	}
	notFound(w, doc)
	return nil
}

func (f *fakeGitHub) submitReview(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docReviews + "#submit-a-review-for-a-pull-request"
	p := f.pull(w, r, doc)
	if p == nil {
		return
	}
	rv := f.review(w, r, p, u, doc)
	if rv == nil {
		return
	}
	var in struct {
		Body  string `json:"body"`
		Event string `json:"event"`
	}
	if !decode(w, r, &in) {
		return
	}
	if rv.state != "PENDING" {
		writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", doc, "Can not submit a non-pending review")
		return
	}
	state := reviewStates[in.Event]
	if in.Body != "" {
		rv.body = in.Body
	}
	comments := 0
	for _, c := range f.comments {
		if c.review == rv.id {
			comments++
		}
	}
	if refused := f.refuseReview(p, u, state, rv.body, comments); refused != "" {
		writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", doc, refused)
		return
	}
	rv.state, rv.submitted = state, now()
	writeJSON(w, http.StatusOK, f.reviewJSON(rv))
}

func (f *fakeGitHub) dismissReview(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docReviews + "#dismiss-a-review-for-a-pull-request"
	p := f.pull(w, r, doc)
	if p == nil {
		return
	}
	rv := f.review(w, r, p, u, doc)
	if rv == nil {
		return
	}
	if !f.mayWrite(u) {
		forbidden(w, doc)
		return
	}
	if rv.state != "APPROVED" && rv.state != "CHANGES_REQUESTED" {
		writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", doc,
			"Can not dismiss a "+rv.state+" pull request review")
		return
	}
	rv.state = "DISMISSED"
	writeJSON(w, http.StatusOK, f.reviewJSON(rv))
}

func (f *fakeGitHub) listReviewComments(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	p := f.pull(w, r, docReviewComments)
	if p == nil {
		return
	}
	pending := map[int64]bool{}
	for _, rv := range f.reviews {
		if !visible(rv, u) {
			pending[rv.id] = true
		}
	}
	out := []map[string]any{}
	for _, c := range f.comments {
		if c.pull == p.number && !pending[c.review] {
			out = append(out, f.commentJSON(c))
		}
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

// outdate marks every review comment on a pull request outdated, as
// GitHub does when a push changes the lines under them: line and position
// become null.
func (f *fakeGitHub) outdate(number int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.comments {
		if c.pull == number {
			c.outdated = true
		}
	}
}
