package github_test

// The fake's issue comments and labels: "REST API endpoints for issue
// comments" and "... for labels", as named at the top of fake_test.go.

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

const (
	docLabels   = "https://docs.github.com/rest/issues/labels"
	docComments = "https://docs.github.com/rest/issues/comments#create-an-issue-comment"
)

func (f *fakeGitHub) createIssueComment(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	p := f.pull(w, r, docComments)
	if p == nil {
		return
	}
	var in struct {
		Body string `json:"body"`
	}
	if !decode(w, r, &in) {
		return
	}
	if !f.mayWrite(u) {
		forbidden(w, docComments)
		return
	}
	if in.Body == "" {
		validationFailed(w, docComments, fieldError("IssueComment", "body", "missing_field"))
		return
	}
	f.issueComments[p.number] = append(f.issueComments[p.number], in.Body)
	id, t := f.id(), stamp(now())
	writeJSON(w, http.StatusCreated, map[string]any{"id": id, "body": in.Body, "user": f.user(u.login),
		"created_at": t, "updated_at": t, "html_url": fmt.Sprintf("https://github.example/%s/%s/pull/%d#issuecomment-%d",
			fakeOwner, fakeRepo, p.number, id)})
}

// addLabels takes {"labels": [...]} or a bare array, both documented. A
// label the repository lacks is created, as GitHub does.
func (f *fakeGitHub) addLabels(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docLabels + "#add-labels-to-an-issue"
	p := f.pull(w, r, doc)
	if p == nil {
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
	for _, v := range list {
		name, _ := v.(string)
		if name == "" {
			validationFailed(w, doc, fieldError("Label", "name", "invalid"))
			return
		}
		if f.labels[strings.ToLower(name)] == nil {
			f.labels[strings.ToLower(name)] = &fakeLabel{id: f.id(), name: name, color: "ededed"}
		}
		if !slices.Contains(p.labels, name) {
			p.labels = append(p.labels, name)
		}
	}
	out := []jsonLabel{}
	for _, name := range p.labels {
		out = append(out, f.labelJSON(f.labels[strings.ToLower(name)]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *fakeGitHub) getLabel(w http.ResponseWriter, r *http.Request, _ *fakeUser) {
	l := f.labels[strings.ToLower(r.PathValue("name"))]
	if l == nil {
		notFound(w, docLabels+"#get-a-label")
		return
	}
	writeJSON(w, http.StatusOK, f.labelJSON(l))
}
