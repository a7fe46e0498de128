package gitlabfake

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/azolla/azolla/internal/forge"
)

// Push adds a commit to branch, creating it from the default branch if it
// does not exist, and returns the commit's sha. An open merge request
// from the branch follows it, with GitLab's "added 1 commit" system note
// by azolla's user, who pushes.
func (s *Server) Push(branch string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pushLocked(branch)
}

func (s *Server) pushLocked(branch string) string {
	commits, ok := s.branches[branch]
	if !ok && branch != s.opt.Base {
		commits = slices.Clone(s.branches[s.opt.Base])
	}
	sum := sha1.Sum(fmt.Appendf(nil, "%s\x00%d\x00%d", branch, len(s.commits), s.tick().UnixNano()))
	sha := hex.EncodeToString(sum[:])
	s.branches[branch] = append(commits, sha)
	s.commits[sha] = branch
	if m := s.openFrom(branch); m != nil {
		m.sha, m.checked, m.updated = sha, false, s.clock
		s.noteLocked(m.iid, s.opt.Username, fmt.Sprintf("added 1 commit\n\n<ul><li>%s - Change %s</li></ul>", sha[:8], s.file(len(commits))), true)
	}
	return sha
}

// file is the file the n-th commit of a branch changes.
func (s *Server) file(n int) string { return s.opt.Files[n%len(s.opt.Files)] }

func (s *Server) head(branch string) string {
	commits := s.branches[branch]
	if len(commits) == 0 {
		return ""
	}
	return commits[len(commits)-1]
}

func (s *Server) openFrom(branch string) *mergeRequest {
	for _, m := range s.mrs {
		if m.state == "opened" && m.source == branch {
			return m
		}
	}
	return nil
}

// Open opens a merge request from head onto the default branch as author
// (a human, outside of azolla) and returns its iid.
func (s *Server) Open(head, title, author string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.branches[head]; !ok {
		return 0, fmt.Errorf("gitlabfake: no branch %q", head)
	}
	if m := s.openFrom(head); m != nil {
		return 0, fmt.Errorf("gitlabfake: !%d is open from %q", m.iid, head)
	}
	return s.openLocked(head, s.opt.Base, title, "", author).iid, nil
}

func (s *Server) openLocked(source, target, title, body, author string) *mergeRequest {
	now := s.tick()
	m := &mergeRequest{
		id: s.nextID(), iid: len(s.mrs) + 1, title: title, body: body, state: "opened",
		source: source, target: target, sha: s.head(source), author: author,
		created: now, updated: now,
	}
	s.mrs = append(s.mrs, m)
	return m
}

// OnCreate sets f to run at every merge request create the API receives,
// after its parameters are read and before it is decided (nil: none).
func (s *Server) OnCreate(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCreate = f
}

// Review submits a review of merge request iid by author as GitLab's
// "Submit review" does: a DiffNote per comment, body as a plain note, then
// the verdict. Approving adds author's approval; requesting changes
// withdraws it; dismissed withdraws it on its own. The project is public:
// any user the fake knows may review, members or not; who may approve is
// not checked.
func (s *Server) Review(iid int, author string, state forge.ReviewState, body string, comments []forge.ReviewComment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if iid < 1 || iid > len(s.mrs) {
		return fmt.Errorf("gitlabfake: no merge request !%d", iid)
	}
	if s.userNamed(author) == nil {
		return fmt.Errorf("gitlabfake: no user %q", author)
	}
	m := s.mrs[iid-1]
	for _, c := range comments {
		n := s.noteLocked(iid, author, c.Body, false)
		n.kind = "DiffNote"
		n.position = &position{baseSHA: s.head(m.target), headSHA: m.sha, path: c.Path, newLine: c.Line, oldLine: c.OldLine}
	}
	if body != "" {
		s.noteLocked(iid, author, body, false)
	}
	approved := slices.Contains(m.approvedBy, author)
	unapprove := func() {
		m.approvedBy = slices.DeleteFunc(m.approvedBy, func(u string) bool { return u == author })
		s.noteLocked(iid, author, "unapproved this merge request", true)
	}
	switch state {
	case forge.ReviewApproved:
		if !approved {
			m.approvedBy = append(m.approvedBy, author)
			s.noteLocked(iid, author, "approved this merge request", true)
		}
	case forge.ReviewChangesRequested:
		s.noteLocked(iid, author, "requested changes", true)
		if approved {
			unapprove()
		}
	case forge.ReviewDismissed:
		if approved {
			unapprove()
		}
	}
	return nil
}

// noteLocked adds a note to merge request iid; the merge request's
// updated_at moves with it, as GitLab touches what a note is on.
func (s *Server) noteLocked(iid int, author, body string, system bool) *note {
	now := s.tick()
	n := &note{id: s.nextID(), iid: iid, author: author, body: body, system: system, created: now, updated: now}
	s.notes = append(s.notes, n)
	s.mrs[iid-1].updated = now
	return n
}

// Status posts a commit status on sha as the project's CI does, with no
// role checked: status is GitLab's word (pending, running, success,
// failed, canceled, skipped, manual, …). To post one as a given user, their
// role checked, call the REST API with their Token: POST
// /projects/:id/statuses/:sha.
func (s *Server) Status(sha, name, status, description string, allowFailure bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.commits[sha]; !ok {
		return fmt.Errorf("gitlabfake: no commit %s", sha)
	}
	c := s.statusLocked(sha, name, status, description, s.opt.Username, allowFailure)
	c.targetURL = fmt.Sprintf("%s/%s/-/jobs/%d", s.URL, s.opt.Project, c.id)
	return nil
}

// statusLocked records a commit status on sha, a commit the fake has.
func (s *Server) statusLocked(sha, name, status, description, author string, allowFailure bool) *commitStatus {
	c := &commitStatus{
		id: s.nextID(), sha: sha, ref: s.commits[sha], name: name, status: status, description: description,
		allowFailure: allowFailure, created: s.tick(), author: author,
	}
	s.statuses = append(s.statuses, c)
	return c
}

// Merge merges merge request iid as by, with a merge commit on its target.
func (s *Server) Merge(iid int, by string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if iid < 1 || iid > len(s.mrs) || s.mrs[iid-1].state != "opened" {
		return fmt.Errorf("gitlabfake: no open merge request !%d", iid)
	}
	m := s.mrs[iid-1]
	m.mergeCommit = s.pushLocked(m.target)
	now := s.clock
	m.state, m.mergedAt, m.mergedBy, m.updated = "merged", &now, by, now
	return nil
}

// Close closes merge request iid as by, without merging.
func (s *Server) Close(iid int, by string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if iid < 1 || iid > len(s.mrs) || s.mrs[iid-1].state != "opened" {
		return fmt.Errorf("gitlabfake: no open merge request !%d", iid)
	}
	s.closeLocked(s.mrs[iid-1], by)
	return nil
}

func (s *Server) closeLocked(m *mergeRequest, by string) {
	if m.state != "opened" {
		return
	}
	now := s.tick()
	m.state, m.closedAt, m.closedBy, m.updated = "closed", &now, by, now
}

// Throttle makes the fake answer the next requests with 429.
func (s *Server) Throttle(l Limit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = l
}

// Requests are the requests answered so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// MergeRequest is what a test inspects of a merge request.
type MergeRequest struct {
	IID       int
	Title     string
	Body      string
	State     string
	Source    string
	Target    string
	Author    string
	Labels    []string
	Reviewers []string
	Notes     int
}

// MergeRequest returns merge request iid.
func (s *Server) MergeRequest(iid int) (MergeRequest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if iid < 1 || iid > len(s.mrs) {
		return MergeRequest{}, false
	}
	m := s.mrs[iid-1]
	out := MergeRequest{
		IID: m.iid, Title: m.title, Body: m.body, State: m.state, Source: m.source, Target: m.target,
		Author: m.author, Labels: slices.Clone(m.labels), Reviewers: slices.Clone(m.reviewers),
	}
	for _, n := range s.notes {
		if n.iid == iid && !n.onIssue {
			out.Notes++
		}
	}
	return out, true
}

// Count is how many merge requests the project has, in any state.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mrs)
}
