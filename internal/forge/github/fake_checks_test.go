package github_test

// The fake's commit statuses and check runs: "REST API endpoints for
// commit statuses" and "... for check runs", as named at the top of
// fake_test.go.

import (
	"net/http"
	"strconv"
)

const (
	docStatuses  = "https://docs.github.com/rest/commits/statuses"
	docCheckRuns = "https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference"
)

func (f *fakeGitHub) statusJSON(s *fakeStatus) map[string]any {
	var target, descr any
	if s.targetURL != "" {
		target = s.targetURL
	}
	if s.description != "" {
		descr = s.description
	}
	return map[string]any{
		"url": f.apiURL("/statuses/" + s.sha), "avatar_url": nil, "id": s.id,
		"node_id": "SC_" + strconv.FormatInt(s.id, 10), "state": s.state, "description": descr,
		"target_url": target, "context": s.context, "created_at": stamp(s.created),
		"updated_at": stamp(s.created), "creator": f.user(s.creator),
	}
}

func (f *fakeGitHub) checkRunJSON(c *fakeCheckRun) map[string]any {
	var conclusion, title any
	if c.conclusion != "" {
		conclusion = c.conclusion
	}
	if c.title != "" {
		title = c.title
	}
	return map[string]any{
		"id": c.id, "head_sha": c.sha, "node_id": "CR_" + strconv.FormatInt(c.id, 10), "external_id": "",
		"url":         f.apiURL("/check-runs/" + strconv.FormatInt(c.id, 10)),
		"html_url":    "https://github.example/" + fakeOwner + "/" + fakeRepo + "/runs/" + strconv.FormatInt(c.id, 10),
		"details_url": c.detailsURL,
		"status":      c.status, "conclusion": conclusion,
		"started_at": stamp(c.started), "completed_at": stamp(c.completed),
		"output":        map[string]any{"title": title, "summary": nil, "text": nil, "annotations_count": 0},
		"name":          c.name,
		"check_suite":   map[string]any{"id": 1},
		"app":           map[string]any{"id": 15368, "slug": "github-actions", "name": "GitHub Actions"},
		"pull_requests": []any{},
	}
}

// resolve returns the commit a ref names: a branch or a commit.
func (f *fakeGitHub) resolve(ref string) (string, bool) {
	if b := f.branches[ref]; b != nil {
		return b.sha, true
	}
	return ref, f.commits[ref]
}

func (f *fakeGitHub) createStatus(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docStatuses + "#create-a-commit-status"
	// Only who may push may post a status, as the documentation says; to
	// anyone else GitHub answers as if the repository were not there.
	if !f.mayWrite(u) {
		notFound(w, doc)
		return
	}
	var in struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	if !decode(w, r, &in) {
		return
	}
	sha := r.PathValue("sha")
	if !f.commits[sha] {
		writeError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+sha, doc)
		return
	}
	switch in.State {
	case "error", "failure", "pending", "success":
	default:
		validationFailed(w, doc, fieldError("Status", "state", "invalid"))
		return
	}
	if in.Context == "" {
		in.Context = "default"
	}
	s := &fakeStatus{id: f.id(), sha: sha, state: in.State, context: in.Context, description: in.Description,
		targetURL: in.TargetURL, creator: u.login, created: now()}
	f.statuses = append(f.statuses, s)
	writeJSON(w, http.StatusCreated, f.statusJSON(s))
}

// combinedStatus answers the latest status of each context and the state
// they combine to: failure if any is error or failure, else pending if
// there are none or any is pending, else success.
func (f *fakeGitHub) combinedStatus(w http.ResponseWriter, r *http.Request, _ *fakeUser) {
	sha, ok := f.resolve(r.PathValue("ref"))
	if !ok {
		writeError(w, http.StatusNotFound, "No commit found for SHA: "+r.PathValue("ref"),
			docStatuses+"#get-the-combined-status-for-a-specific-reference")
		return
	}
	latest := map[string]*fakeStatus{}
	var order []string
	for _, s := range f.statuses {
		if s.sha != sha {
			continue
		}
		if latest[s.context] == nil {
			order = append(order, s.context)
		}
		latest[s.context] = s
	}
	state := "success"
	if len(order) == 0 {
		state = "pending"
	}
	all := []map[string]any{}
	for _, c := range order {
		switch s := latest[c]; {
		case s.state == "error" || s.state == "failure":
			state = "failure"
		case s.state == "pending" && state != "failure":
			state = "pending"
		}
		all = append(all, f.statusJSON(latest[c]))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"state": state, "statuses": paginate(w, r, all), "sha": sha, "total_count": len(all),
		"repository": f.repoJSON(), "commit_url": f.apiURL("/commits/" + sha),
		"url": f.apiURL("/commits/" + sha + "/status"),
	})
}

func (f *fakeGitHub) listCheckRuns(w http.ResponseWriter, r *http.Request, _ *fakeUser) {
	sha, ok := f.resolve(r.PathValue("ref"))
	if !ok {
		writeError(w, http.StatusNotFound, "No commit found for SHA: "+r.PathValue("ref"), docCheckRuns)
		return
	}
	latest := r.URL.Query().Get("filter") != "all"
	runs := []map[string]any{}
	for i, c := range f.checkRuns {
		if c.sha != sha || latest && f.supersededRun(i) {
			continue
		}
		runs = append(runs, f.checkRunJSON(c))
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": paginate(w, r, runs)})
}

// supersededRun says whether a later run of the same name on the same
// commit exists.
func (f *fakeGitHub) supersededRun(i int) bool {
	for _, later := range f.checkRuns[i+1:] {
		if later.sha == f.checkRuns[i].sha && later.name == f.checkRuns[i].name {
			return true
		}
	}
	return false
}

// addCheckRun records a check run on sha as a GitHub App would create it
// (azolla's harness has no app); conclusion is empty until completed.
func (f *fakeGitHub) addCheckRun(sha, name, status, conclusion, title string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &fakeCheckRun{id: f.id(), sha: sha, name: name, status: status, conclusion: conclusion, title: title,
		detailsURL: "https://ci.example/" + name, started: now()}
	if status == "completed" {
		c.completed = now()
	}
	f.checkRuns = append(f.checkRuns, c)
}
