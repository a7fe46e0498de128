package gitlabfake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

func (s *Server) currentUser(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	who := caller(r)
	writeJSON(w, http.StatusOK, struct {
		userJSON
		CreatedAt stamp  `json:"created_at"`
		Bio       string `json:"bio"`
		Bot       bool   `json:"bot"`
	}{userJSON: s.userJSON(who), CreatedAt: stamp(s.clock), Bot: who == s.opt.Username})
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := r.URL.Query().Get("username")
	out := []userJSON{}
	for _, u := range s.users {
		if name == "" || strings.EqualFold(u.username, name) {
			out = append(out, s.userJSON(u.username))
		}
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

func (s *Server) listLabels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	search := strings.ToLower(r.URL.Query().Get("search"))
	out := []labelJSON{}
	for i, name := range s.labels {
		if strings.Contains(strings.ToLower(name), search) {
			out = append(out, labelJSON{ID: i + 1, Name: name, Color: "#6699cc", TextColor: "#FFFFFF", IsProjectLabel: true})
		}
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

func (s *Server) listMergeRequests(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.URL.Query()
	state := q.Get("state")
	out := []mergeRequestJSON{}
	// Newest first: GitLab's default order is created_at desc.
	for _, m := range slices.Backward(s.mrs) {
		if (state == "" || state == "all" || m.state == state) &&
			(q.Get("source_branch") == "" || m.source == q.Get("source_branch")) &&
			(q.Get("target_branch") == "" || m.target == q.Get("target_branch")) {
			out = append(out, s.mergeRequestJSON(m))
		}
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

// labelList is labels as the API takes them: "a,b" or ["a","b"].
type labelList []string

func (l *labelList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = nil
		for name := range strings.SplitSeq(one, ",") {
			if name = strings.TrimSpace(name); name != "" {
				*l = append(*l, name)
			}
		}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(l))
}

func (s *Server) createMergeRequest(w http.ResponseWriter, r *http.Request) {
	var in struct {
		SourceBranch string    `json:"source_branch"`
		TargetBranch string    `json:"target_branch"`
		Title        string    `json:"title"`
		Description  string    `json:"description"`
		Labels       labelList `json:"labels"`
		ReviewerIDs  []int     `json:"reviewer_ids"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "400 Bad request - " + err.Error()})
		return
	}
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"source_branch", in.SourceBranch}, {"target_branch", in.TargetBranch}, {"title", in.Title},
	} {
		if f.value == "" {
			missing = append(missing, f.name+" is missing")
		}
	}
	if len(missing) > 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": strings.Join(missing, ", ")})
		return
	}
	s.mu.Lock()
	hook := s.onCreate
	s.mu.Unlock()
	if hook != nil {
		hook() // a test's race: something happens between azolla's list and its create
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if in.SourceBranch == in.TargetBranch {
		writeJSON(w, http.StatusUnprocessableEntity, map[string][]string{"message": {"You can't use same project/branch for source and target"}})
		return
	}
	if open := s.openFrom(in.SourceBranch); open != nil {
		writeJSON(w, http.StatusConflict, map[string][]string{"message": {
			fmt.Sprintf("Another open merge request already exists for this source branch: !%d", open.iid)}})
		return
	}
	for _, b := range []struct{ field, name string }{{"source_branch", in.SourceBranch}, {"target_branch", in.TargetBranch}} {
		if _, ok := s.branches[b.name]; !ok {
			writeJSON(w, http.StatusBadRequest, map[string]map[string][]string{"message": {b.field: {"does not exist"}}})
			return
		}
	}
	for _, l := range in.Labels {
		if !slices.Contains(s.labels, l) {
			s.labels = append(s.labels, l) // GitLab creates a label it does not know
		}
	}
	m := s.openLocked(in.SourceBranch, in.TargetBranch, in.Title, in.Description, caller(r))
	m.labels = in.Labels
	for _, id := range in.ReviewerIDs {
		for _, u := range s.users {
			if u.id == id {
				m.reviewers = append(m.reviewers, u.username)
			}
		}
	}
	writeJSON(w, http.StatusCreated, s.mergeRequestDetailJSON(m))
}

func (s *Server) getMergeRequest(w http.ResponseWriter, _ *http.Request, iid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.mrs[iid-1]
	writeJSON(w, http.StatusOK, s.mergeRequestDetailJSON(m))
	// GitLab computes mergeability in the background after a change; the
	// next read finds it done.
	m.checked = true
}

func (s *Server) updateMergeRequest(w http.ResponseWriter, r *http.Request, iid int) {
	var in struct {
		Title       *string `json:"title"`
		Description *string `json:"description"`
		StateEvent  string  `json:"state_event"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "400 Bad request - " + err.Error()})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.mrs[iid-1]
	if in.Title != nil {
		if *in.Title == "" {
			writeJSON(w, http.StatusBadRequest, map[string]map[string][]string{"message": {"title": {"can't be blank"}}})
			return
		}
		m.title = *in.Title
	}
	if in.Description != nil {
		m.body = *in.Description
	}
	switch in.StateEvent {
	case "close":
		s.closeLocked(m, caller(r))
	case "reopen":
		if m.state == "closed" {
			m.state, m.closedAt, m.closedBy = "opened", nil, ""
		}
	}
	m.updated = s.tick()
	writeJSON(w, http.StatusOK, s.mergeRequestDetailJSON(m))
}

func (s *Server) listNotes(w http.ResponseWriter, r *http.Request, iid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []noteJSON{}
	for _, n := range s.notes {
		if n.iid == iid && !n.onIssue {
			out = append(out, s.noteJSON(n))
		}
	}
	// Notes are kept oldest first; GitLab's default is sort=desc.
	if r.URL.Query().Get("sort") != "asc" {
		slices.Reverse(out)
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

func (s *Server) createNote(w http.ResponseWriter, r *http.Request, iid int) {
	var in struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body is missing"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.noteLocked(iid, caller(r), in.Body, false)
	writeJSON(w, http.StatusCreated, s.noteJSON(n))
}

func (s *Server) listStatuses(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sha := r.PathValue("sha")
	if _, ok := s.commits[sha]; !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Commit Not Found"})
		return
	}
	all := r.URL.Query().Get("all") == "true"
	out := []commitStatusJSON{}
	for _, c := range s.statuses {
		if c.sha != sha {
			continue
		}
		if !all && slices.ContainsFunc(s.statuses, func(o *commitStatus) bool {
			return o.sha == sha && o.name == c.name && o.id > c.id
		}) {
			continue // retried: only the latest per name unless all=true
		}
		out = append(out, s.commitStatusJSON(c))
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

// statusStates are the states a commit status may be set to.
var statusStates = []string{"pending", "running", "success", "failed", "canceled", "skipped"}

// postStatus sets a commit status as the caller: GitLab's
// create_commit_status, which needs at least the Developer role.
func (s *Server) postStatus(w http.ResponseWriter, r *http.Request) {
	var in struct {
		State       string `json:"state"`
		Ref         string `json:"ref"`
		Name        string `json:"name"`
		Context     string `json:"context"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "400 Bad request - " + err.Error()})
		return
	}
	switch {
	case in.State == "":
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "state is missing"})
		return
	case !slices.Contains(statusStates, in.State):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "state does not have a valid value"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	who := caller(r)
	if s.level(who) < AccessDeveloper {
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "403 Forbidden"})
		return
	}
	sha := r.PathValue("sha")
	if _, ok := s.commits[sha]; !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Commit Not Found"})
		return
	}
	name := cmp.Or(in.Name, in.Context, "default")
	c := s.statusLocked(sha, name, in.State, in.Description, who, false)
	c.ref = cmp.Or(in.Ref, c.ref)
	c.targetURL = in.TargetURL
	writeJSON(w, http.StatusCreated, s.commitStatusJSON(c))
}
