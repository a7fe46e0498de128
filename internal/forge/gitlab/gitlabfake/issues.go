package gitlabfake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// issueJSON is an issue as GitLab answers it, field names as documented.
type issueJSON struct {
	ID                 int            `json:"id"`
	IID                int            `json:"iid"`
	ProjectID          int            `json:"project_id"`
	Title              string         `json:"title"`
	Description        string         `json:"description"`
	State              string         `json:"state"`
	CreatedAt          stamp          `json:"created_at"`
	UpdatedAt          stamp          `json:"updated_at"`
	ClosedAt           *stamp         `json:"closed_at"`
	ClosedBy           *userJSON      `json:"closed_by"`
	Labels             []string       `json:"labels"`
	Milestone          *struct{}      `json:"milestone"`
	Assignees          []userJSON     `json:"assignees"`
	Assignee           *userJSON      `json:"assignee"`
	Author             userJSON       `json:"author"`
	Type               string         `json:"type"`
	UserNotesCount     int            `json:"user_notes_count"`
	MergeRequestsCount int            `json:"merge_requests_count"`
	Upvotes            int            `json:"upvotes"`
	Downvotes          int            `json:"downvotes"`
	DueDate            *string        `json:"due_date"`
	Confidential       bool           `json:"confidential"`
	DiscussionLocked   *bool          `json:"discussion_locked"`
	IssueType          string         `json:"issue_type"`
	WebURL             string         `json:"web_url"`
	References         referencesJSON `json:"references"`
	Imported           bool           `json:"imported"`
	ImportedFrom       string         `json:"imported_from"`
	Severity           string         `json:"severity"`
}

// The caller holds s.mu.
func (s *Server) issueJSON(is *issue) issueJSON {
	ref := fmt.Sprintf("#%d", is.iid)
	out := issueJSON{
		ID: is.id, IID: is.iid, ProjectID: s.projectID, Title: is.title, Description: is.body, State: is.state,
		CreatedAt: stamp(is.created), UpdatedAt: stamp(is.updated), ClosedAt: stampOf(is.closedAt),
		ClosedBy: s.userRef(is.closedBy), Labels: append([]string{}, is.labels...), Assignees: []userJSON{},
		Author: s.userJSON(is.author), Type: "ISSUE", IssueType: "issue", Severity: "UNKNOWN", ImportedFrom: "none",
		WebURL:     fmt.Sprintf("%s/%s/-/issues/%d", s.URL, s.opt.Project, is.iid),
		References: referencesJSON{Short: ref, Relative: ref, Full: s.opt.Project + ref},
	}
	for _, a := range is.assignees {
		out.Assignees = append(out.Assignees, s.userJSON(a))
	}
	if len(out.Assignees) > 0 {
		out.Assignee = &out.Assignees[0]
	}
	for _, n := range s.notes {
		if n.onIssue && n.iid == is.iid && !n.system {
			out.UserNotesCount++
		}
	}
	return out
}

// issue is project, and 404 for an issue the project does not have.
func (s *Server) issue(h func(http.ResponseWriter, *http.Request, int)) http.HandlerFunc {
	return s.project(func(w http.ResponseWriter, r *http.Request) {
		iid, err := strconv.Atoi(r.PathValue("iid"))
		s.mu.Lock()
		found := err == nil && iid >= 1 && iid <= len(s.issues)
		s.mu.Unlock()
		if !found {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not found"})
			return
		}
		h(w, r, iid)
	})
}

func (s *Server) listIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var after time.Time
	if v := q.Get("updated_after"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "updated_after is invalid"})
			return
		}
		after = t
	}
	orderBy, sort := cmp.Or(q.Get("order_by"), "created_at"), cmp.Or(q.Get("sort"), "desc")
	if !slices.Contains([]string{"created_at", "updated_at"}, orderBy) || !slices.Contains([]string{"asc", "desc"}, sort) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "order_by, sort does not have a valid value"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	state := q.Get("state")
	var picked []*issue
	for _, is := range s.issues {
		if (state == "" || state == "all" || is.state == state) && !is.updated.Before(after) {
			picked = append(picked, is)
		}
	}
	key := func(is *issue) time.Time {
		if orderBy == "updated_at" {
			return is.updated
		}
		return is.created
	}
	slices.SortStableFunc(picked, func(a, b *issue) int { return key(a).Compare(key(b)) })
	if sort == "desc" {
		slices.Reverse(picked)
	}
	out := []issueJSON{}
	for _, is := range picked {
		out = append(out, s.issueJSON(is))
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

// issueInput is what create and update take.
type issueInput struct {
	Title        *string    `json:"title"`
	Description  *string    `json:"description"`
	StateEvent   string     `json:"state_event"`
	Labels       *labelList `json:"labels"`
	AddLabels    *labelList `json:"add_labels"`
	RemoveLabels *labelList `json:"remove_labels"`
	AssigneeID   *int       `json:"assignee_id"`
	AssigneeIDs  *[]int     `json:"assignee_ids"`
}

func (s *Server) createIssue(w http.ResponseWriter, r *http.Request) {
	var in issueInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "400 Bad request - " + err.Error()})
		return
	}
	if in.Title == nil || *in.Title == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "title is missing"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.tick()
	is := &issue{id: s.nextID(), iid: len(s.issues) + 1, title: *in.Title, state: "opened", author: caller(r),
		created: now, updated: now}
	if in.Description != nil {
		is.body = *in.Description
	}
	s.triageLocked(is, caller(r), in)
	s.issues = append(s.issues, is)
	writeJSON(w, http.StatusCreated, s.issueJSON(is))
}

// triageLocked sets in's labels and assignees on is when who is a
// Planner or above; GitLab silently drops them for anyone else. A label
// GitLab does not know is created.
func (s *Server) triageLocked(is *issue, who string, in issueInput) {
	if s.level(who) < AccessPlanner {
		return
	}
	before := slices.Clone(is.labels)
	defer s.recordLabelsLocked(is, who, before)
	var labels []string
	switch {
	case in.Labels != nil:
		labels, is.labels = *in.Labels, nil
	case in.AddLabels != nil:
		labels = *in.AddLabels
	}
	for _, l := range labels {
		if !slices.Contains(s.labels, l) {
			s.labels = append(s.labels, l)
		}
		if !slices.Contains(is.labels, l) {
			is.labels = append(is.labels, l)
		}
	}
	if in.RemoveLabels != nil {
		is.labels = slices.DeleteFunc(is.labels, func(l string) bool { return slices.Contains(*in.RemoveLabels, l) })
	}
	ids := in.AssigneeIDs
	if ids == nil && in.AssigneeID != nil {
		ids = &[]int{*in.AssigneeID}
	}
	if ids != nil {
		is.assignees = nil
		for _, id := range *ids {
			if u := s.userByID(strconv.Itoa(id)); u != nil {
				is.assignees = append(is.assignees, u.username)
			}
		}
	}
}

func (s *Server) getIssue(w http.ResponseWriter, _ *http.Request, iid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.issueJSON(s.issues[iid-1]))
}

// updateIssue changes an issue as its author or a Planner or above.
func (s *Server) updateIssue(w http.ResponseWriter, r *http.Request, iid int) {
	var in issueInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "400 Bad request - " + err.Error()})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is, who := s.issues[iid-1], caller(r)
	if who != is.author && s.level(who) < AccessPlanner {
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "403 Forbidden"})
		return
	}
	if in.Title != nil {
		if *in.Title == "" {
			writeJSON(w, http.StatusBadRequest, map[string]map[string][]string{"message": {"title": {"can't be blank"}}})
			return
		}
		is.title = *in.Title
	}
	if in.Description != nil {
		is.body = *in.Description
	}
	s.triageLocked(is, who, in)
	now := s.tick()
	switch {
	case in.StateEvent == "close" && is.state == "opened":
		is.state, is.closedAt, is.closedBy = "closed", &now, who
	case in.StateEvent == "reopen" && is.state == "closed":
		is.state, is.closedAt, is.closedBy = "opened", nil, ""
	}
	is.updated = now
	writeJSON(w, http.StatusOK, s.issueJSON(is))
}

func (s *Server) listIssueNotes(w http.ResponseWriter, r *http.Request, iid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []noteJSON{}
	for _, n := range s.notes {
		if n.onIssue && n.iid == iid {
			out = append(out, s.noteJSON(n))
		}
	}
	// Notes are kept oldest first; GitLab's default is sort=desc.
	if r.URL.Query().Get("sort") != "asc" {
		slices.Reverse(out)
	}
	writeJSON(w, http.StatusOK, paginate(w, r, out))
}

// createIssueNote adds a note to an issue as the caller: anyone who may
// see the public project may comment.
func (s *Server) createIssueNote(w http.ResponseWriter, r *http.Request, iid int) {
	var in struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body is missing"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.tick()
	n := &note{id: s.nextID(), iid: iid, onIssue: true, author: caller(r), body: in.Body, created: now, updated: now}
	s.notes = append(s.notes, n)
	s.issues[iid-1].updated = now
	writeJSON(w, http.StatusCreated, s.noteJSON(n))
}

func (s *Server) updateIssueNote(w http.ResponseWriter, r *http.Request, iid int) {
	s.updateNote(w, r, iid, true)
}

func (s *Server) updateMergeRequestNote(w http.ResponseWriter, r *http.Request, iid int) {
	s.updateNote(w, r, iid, false)
}

// updateNote edits a note of issue (onIssue) or merge request iid, as
// its author or a Maintainer or above. A system note is not edited.
func (s *Server) updateNote(w http.ResponseWriter, r *http.Request, iid int, onIssue bool) {
	var in struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body is missing"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := strconv.Atoi(r.PathValue("note_id"))
	i := slices.IndexFunc(s.notes, func(n *note) bool { return n.id == id && n.iid == iid && n.onIssue == onIssue })
	if err != nil || i < 0 {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not found"})
		return
	}
	n, who := s.notes[i], caller(r)
	if n.system || (!strings.EqualFold(who, n.author) && s.level(who) < AccessMaintainer) {
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "403 Forbidden"})
		return
	}
	n.body, n.updated = in.Body, s.tick()
	writeJSON(w, http.StatusOK, s.noteJSON(n))
}
