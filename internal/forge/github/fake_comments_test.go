package github_test

// The fake's issue comments and labels: "REST API endpoints for issue
// comments" and "... for labels", as named at the top of fake_test.go.
// Comments are on an issue's or a pull request's conversation alike.

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

const (
	docLabels   = "https://docs.github.com/rest/issues/labels"
	docComments = "https://docs.github.com/rest/issues/comments"
)

func (f *fakeGitHub) commentCount(number int) int {
	n := 0
	for _, c := range f.issueComments {
		if c.number == number {
			n++
		}
	}
	return n
}

func (f *fakeGitHub) listIssueComments(w http.ResponseWriter, r *http.Request, _ *fakeUser) {
	const doc = docComments + "#list-issue-comments"
	th, ok := f.thread(w, r, doc)
	if !ok {
		return
	}
	since, ok := querySince(w, r, doc, "IssueComment")
	if !ok {
		return
	}
	out := []jsonIssueComment{}
	for _, c := range f.issueComments {
		if c.number == th.number() && !c.updated.Before(since) {
			out = append(out, f.issueCommentJSON(c))
		}
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

// createIssueComment adds a comment to an issue's or a pull request's
// conversation. Anyone who may see the public repository may comment
// (serve has refused the anonymous).
func (f *fakeGitHub) createIssueComment(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docComments + "#create-an-issue-comment"
	th, ok := f.thread(w, r, doc)
	if !ok {
		return
	}
	var in struct {
		Body string `json:"body"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Body == "" {
		validationFailed(w, doc, fieldError("IssueComment", "body", "missing_field"))
		return
	}
	t := now()
	c := &fakeIssueComment{id: f.id(), number: th.number(), author: u.login, body: in.Body, created: t, updated: t}
	f.issueComments = append(f.issueComments, c)
	th.touch(t)
	writeJSON(w, http.StatusCreated, f.issueCommentJSON(c))
}

// updateIssueComment edits a comment, as its author or a caller with push
// access.
func (f *fakeGitHub) updateIssueComment(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docComments + "#update-an-issue-comment"
	id, err := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
	i := slices.IndexFunc(f.issueComments, func(c *fakeIssueComment) bool { return c.id == id })
	if err != nil || i < 0 {
		notFound(w, doc)
		return
	}
	c := f.issueComments[i]
	var in struct {
		Body string `json:"body"`
	}
	if !decode(w, r, &in) {
		return
	}
	if !f.mayWrite(u) && u.login != c.author {
		forbidden(w, doc)
		return
	}
	if in.Body == "" {
		validationFailed(w, doc, fieldError("IssueComment", "body", "missing_field"))
		return
	}
	c.body, c.updated = in.Body, now()
	writeJSON(w, http.StatusOK, f.issueCommentJSON(c))
}

// addLabels takes {"labels": [...]} or a bare array, both documented. A
// label the repository lacks is created, as GitHub does.
func (f *fakeGitHub) addLabels(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docLabels + "#add-labels-to-an-issue"
	th, ok := f.thread(w, r, doc)
	if !ok {
		return
	}
	if !f.mayWrite(u) {
		forbidden(w, doc)
		return
	}
	var raw any
	if !decode(w, r, &raw) {
		return
	}
	if m, ok := raw.(map[string]any); ok {
		raw = m["labels"]
	}
	list, ok := raw.([]any)
	if !ok {
		validationFailed(w, doc, fieldError("Label", "labels", "invalid"))
		return
	}
	labels := th.labels()
	before := slices.Clone(*labels)
	for _, v := range list {
		name, _ := v.(string)
		if name == "" {
			validationFailed(w, doc, fieldError("Label", "name", "invalid"))
			return
		}
		if f.labels[strings.ToLower(name)] == nil {
			f.labels[strings.ToLower(name)] = &fakeLabel{id: f.id(), name: name, color: "ededed"}
		}
		if !slices.Contains(*labels, name) {
			*labels = append(*labels, name)
		}
	}
	f.labelsChanged(w, th, u.login, before, *labels)
}

func (f *fakeGitHub) getLabel(w http.ResponseWriter, r *http.Request, _ *fakeUser) {
	l := f.labels[strings.ToLower(r.PathValue("name"))]
	if l == nil {
		notFound(w, docLabels+"#get-a-label")
		return
	}
	writeJSON(w, http.StatusOK, f.labelJSON(l))
}
