// Package gitlabfake is an in-memory GitLab for tests: an httptest.Server
// answering the part of the REST API v4 that package gitlab uses, with
// GitLab's status codes, headers and JSON shapes, and methods that act on
// it as the people around a merge request do (push, open, review, post a
// status, merge, close).
//
// Each shape follows GitLab's REST documentation:
//
//   - status codes, error bodies ({"message":"404 Not found"},
//     {"message":"401 Unauthorized"}, {"error":"title is missing"}) and
//     URL-encoded project paths (/projects/group%2Fsub%2Fname/…):
//     https://docs.gitlab.com/api/rest/ and
//     https://docs.gitlab.com/api/rest/troubleshooting/
//   - pagination headers X-Page, X-Per-Page, X-Next-Page, X-Prev-Page,
//     X-Total, X-Total-Pages and Link (per_page 20 by default, 100 at most):
//     https://docs.gitlab.com/api/rest/#pagination
//   - RateLimit-Limit, -Observed, -Remaining, -Reset, -ResetTime and a 429
//     with Retry-After and the plain-text body "Retry later":
//     https://docs.gitlab.com/security/rate_limits/ and
//     https://docs.gitlab.com/administration/settings/user_and_ip_rate_limits/#response-headers
//   - merge requests (list with state, source_branch, target_branch; get;
//     create answering 201, 409 {"message":["Another open merge request
//     already exists for this source branch: !N"]}, or 400
//     {"message":{"source_branch":["does not exist"]}}; update with
//     state_event; draft by title prefix; detailed_merge_status):
//     https://docs.gitlab.com/api/merge_requests/
//   - notes of a merge request (list with sort and order_by; create), their
//     type DiffNote and position {base_sha, start_sha, head_sha,
//     position_type, old_path, new_path, old_line, new_line}:
//     https://docs.gitlab.com/api/notes/#merge-requests and
//     https://docs.gitlab.com/api/discussions/#create-new-merge-request-thread
//   - commit statuses (list with all, paged; 404 "404 Commit Not Found"),
//     and setting one (POST /projects/:id/statuses/:sha, 201; 400 for a
//     missing or unknown state; 403 {"message":"403 Forbidden"} below the
//     Developer role, which creating a commit status needs):
//     https://docs.gitlab.com/api/commits/#list-the-statuses-of-a-commit and
//     https://docs.gitlab.com/api/commits/#set-the-pipeline-status-of-a-commit
//   - users (GET /user, GET /users?username=), each with a token of its
//     own (Server.Token) that requests act as:
//     https://docs.gitlab.com/api/users/#get-the-current-user and
//     https://docs.gitlab.com/api/users/#list-users
//   - members (GET /projects/:id/members/all/:user_id and
//     /groups/:id/members/all/:user_id: the user's basic fields,
//     access_level, created_at, expires_at, membership_state; 404
//     {"message":"404 Not found"} for a user who is not a member; a
//     group's parents' members count, at the highest level they hold):
//     https://docs.gitlab.com/api/members/#get-a-member-of-a-group-or-project-including-inherited-and-invited-members
//   - groups (GET /groups/:id by id or URL-encoded full path, projects
//     left out with with_projects=false; 404 {"message":"404 Group Not
//     Found"}): https://docs.gitlab.com/api/groups/#get-a-single-group
//   - labels (list with search, include_ancestor_groups):
//     https://docs.gitlab.com/api/labels/#list-labels
//   - issues (list with state, updated_after, on or after it, order_by
//     created_at or updated_at, sort; get; create, 201, by anyone who
//     may see the public project, labels and assignees kept only from a
//     Planner or above and silently dropped otherwise; update with
//     state_event, labels, add_labels, remove_labels and assignee_ids, by the author or
//     a Planner or above, 403 {"message":"403 Forbidden"} for anyone
//     else, labels and assignees again a Planner's). A label GitLab does
//     not know is created. Issues are numbered apart from merge requests:
//     https://docs.gitlab.com/api/issues/
//   - an issue's resource label events (list, oldest first: an "add" or
//     "remove" for every change of its labels above, by who made it):
//     https://docs.gitlab.com/api/resource_label_events/
//   - notes of an issue (list, create, update) and updating a merge
//     request's note: anyone who may see the public project may comment;
//     a note moves its issue's or merge request's updated_at; a note is
//     edited by its author or a Maintainer or above (403 otherwise); 404
//     {"message":"404 Not found"} for a note not on that issue or merge
//     request: https://docs.gitlab.com/api/notes/ and
//     https://docs.gitlab.com/user/discussions/#edit-a-comment
//
// A review is published as GitLab's "Submit review" publishes one
// (https://docs.gitlab.com/user/project/merge_requests/reviews/): one
// DiffNote per line comment, the summary as a plain note, then the verdict
// as the system note GitLab writes for it ("approved this merge request",
// "requested changes", "unapproved this merge request"). Those texts are
// not in the REST docs; they are GitLab's own, from its
// app/services/system_notes/merge_requests_service.rb.
package gitlabfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Users the fake knows besides azolla's, and their role in the project
// (azolla's user is a Developer). The project is public: Stranger, who has
// no role in it, may still read it, comment and review.
const (
	Reviewer   = "reviewer"   // Developer
	Maintainer = "maintainer" // Maintainer
	Reader     = "reader"     // Reporter
	Stranger   = "stranger"   // no membership
)

// Team is the group whose members include Reader and not Stranger. Its
// parent group, acme, has Maintainer as its Owner.
const Team = "acme/readers"

// GitLab's access levels: https://docs.gitlab.com/api/members/#roles
const (
	AccessNone       = 0
	AccessMinimal    = 5
	AccessGuest      = 10
	AccessPlanner    = 15
	AccessReporter   = 20
	AccessDeveloper  = 30
	AccessMaintainer = 40
	AccessOwner      = 50
)

// Options shape a fake. Every field has a default.
type Options struct {
	// Project is the project's full path; default "azolla/widgets".
	Project string
	// Token is azolla's token, as PRIVATE-TOKEN or a bearer token; it
	// belongs to Username. Every other user has a token of their own
	// (Server.Token).
	Token    string
	Username string
	// Base is the default branch; default "main".
	Base string
	// Files are the paths Push changes, one per commit in turn; default
	// "README.md", "cmd/widget/main.go".
	Files []string
	// Labels are the project's labels.
	Labels []string
	// RateLimit is RateLimit-Limit, requests per minute; default 2000.
	RateLimit int
}

// Limit makes the fake refuse requests with 429.
type Limit struct {
	// Requests is how many requests in a row are refused.
	Requests int
	// RetryAfter is the wait the 429 names, in Retry-After and as
	// RateLimit-Reset from the fake's clock (Now).
	RetryAfter time.Duration
	// ResetOnly leaves Retry-After out.
	ResetOnly bool
}

// Request is one request the fake answered.
type Request struct {
	Method string
	// Path is the escaped path, as sent: /api/v4/projects/group%2Fname/….
	Path  string
	Query url.Values
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	// URL is the instance's address, without /api/v4.
	URL string

	srv *httptest.Server
	opt Options

	mu          sync.Mutex
	clock       time.Time
	projectID   int
	users       []*user
	members     map[string]membership // the project's, by username
	groups      []*group
	branches    map[string][]string // name → commit shas, oldest first
	commits     map[string]string   // sha → the branch it was pushed to
	mrs         []*mergeRequest     // by iid-1
	issues      []*issue            // by iid-1
	notes       []*note
	statuses    []*commitStatus
	labels      []string
	labelEvents []labelEvent
	ids         int // the last id given to a merge request, note or status
	limit       Limit
	requests    []Request
	onCreate    func()
}

// New starts a fake; it stops when the test ends.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Project == "" {
		o.Project = "azolla/widgets"
	}
	if o.Token == "" {
		o.Token = "glpat-fake-azolla-token"
	}
	if o.Username == "" {
		o.Username = "azolla-bot"
	}
	if o.Base == "" {
		o.Base = "main"
	}
	if len(o.Files) == 0 {
		o.Files = []string{"README.md", "cmd/widget/main.go"}
	}
	if o.RateLimit <= 0 {
		o.RateLimit = 2000
	}
	s := &Server{
		opt:       o,
		clock:     time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC),
		projectID: 4242,
		branches:  map[string][]string{},
		commits:   map[string]string{},
		labels:    append([]string(nil), o.Labels...),
		ids:       1000,
	}
	s.members = map[string]membership{}
	for _, u := range []struct {
		name  string
		level int
	}{
		{o.Username, AccessDeveloper}, {Reviewer, AccessDeveloper}, {Maintainer, AccessMaintainer},
		{Reader, AccessReporter}, {Stranger, AccessNone},
	} {
		s.setAccessLocked(u.name, u.level)
	}
	s.setGroupAccessLocked("acme", Maintainer, AccessOwner)
	s.setGroupAccessLocked(Team, Reader, AccessReporter)
	s.pushLocked(o.Base)
	s.srv = httptest.NewServer(s.routes())
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Options are the fake's options, defaults filled in.
func (s *Server) Options() Options { return s.opt }

// Now is the fake's clock: it moves a second at every change.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock
}

func (s *Server) tick() time.Time {
	s.clock = s.clock.Add(time.Second)
	return s.clock
}

func (s *Server) nextID() int {
	s.ids++
	return s.ids
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	const p = "/api/v4/projects/{id}"
	mux.HandleFunc("GET /api/v4/user", s.currentUser)
	mux.HandleFunc("GET /api/v4/users", s.listUsers)
	mux.HandleFunc("GET /api/v4/groups/{id}", s.group(s.getGroup))
	mux.HandleFunc("GET /api/v4/groups/{id}/members/all/{user_id}", s.group(s.getGroupMember))
	mux.HandleFunc("GET "+p+"/members/all/{user_id}", s.project(s.getProjectMember))
	mux.HandleFunc("GET "+p+"/labels", s.project(s.listLabels))
	mux.HandleFunc("GET "+p+"/merge_requests", s.project(s.listMergeRequests))
	mux.HandleFunc("POST "+p+"/merge_requests", s.project(s.createMergeRequest))
	mux.HandleFunc("GET "+p+"/merge_requests/{iid}", s.mergeRequest(s.getMergeRequest))
	mux.HandleFunc("PUT "+p+"/merge_requests/{iid}", s.mergeRequest(s.updateMergeRequest))
	mux.HandleFunc("GET "+p+"/merge_requests/{iid}/notes", s.mergeRequest(s.listNotes))
	mux.HandleFunc("POST "+p+"/merge_requests/{iid}/notes", s.mergeRequest(s.createNote))
	mux.HandleFunc("PUT "+p+"/merge_requests/{iid}/notes/{note_id}", s.mergeRequest(s.updateMergeRequestNote))
	mux.HandleFunc("GET "+p+"/issues", s.project(s.listIssues))
	mux.HandleFunc("POST "+p+"/issues", s.project(s.createIssue))
	mux.HandleFunc("GET "+p+"/issues/{iid}", s.issue(s.getIssue))
	mux.HandleFunc("PUT "+p+"/issues/{iid}", s.issue(s.updateIssue))
	mux.HandleFunc("GET "+p+"/issues/{iid}/notes", s.issue(s.listIssueNotes))
	mux.HandleFunc("GET "+p+"/issues/{iid}/resource_label_events", s.issue(s.listIssueLabelEvents))
	mux.HandleFunc("POST "+p+"/issues/{iid}/notes", s.issue(s.createIssueNote))
	mux.HandleFunc("PUT "+p+"/issues/{iid}/notes/{note_id}", s.issue(s.updateIssueNote))
	mux.HandleFunc("GET "+p+"/repository/commits/{sha}/statuses", s.project(s.listStatuses))
	mux.HandleFunc("POST "+p+"/statuses/{sha}", s.project(s.postStatus))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "404 Not Found"})
	})
	return s.gate(mux)
}

// gate records every request, then answers as GitLab's middleware does
// before any endpoint: the rate limit first, then the token.
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.Query()})
		observed := len(s.requests)
		limited := s.limit.Requests > 0
		limit := s.limit
		if limited {
			s.limit.Requests--
		}
		now := s.clock
		s.mu.Unlock()

		h := w.Header()
		reset := now.Truncate(time.Minute).Add(time.Minute)
		remaining := max(s.opt.RateLimit-observed, 0)
		if limited {
			reset, remaining = now.Add(limit.RetryAfter), 0
		}
		h.Set("RateLimit-Limit", strconv.Itoa(s.opt.RateLimit))
		h.Set("RateLimit-Observed", strconv.Itoa(observed))
		h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
		h.Set("RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
		h.Set("RateLimit-ResetTime", reset.Format(http.TimeFormat))
		if limited {
			h.Set("RateLimit-Name", "throttle_authenticated_api")
			if !limit.ResetOnly {
				h.Set("Retry-After", strconv.Itoa(int(limit.RetryAfter/time.Second)))
			}
			h.Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, "Retry later\n")
			return
		}
		who, ok := s.authenticate(r)
		if !ok {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "401 Unauthorized"})
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, who)))
	})
}

// authenticate returns the user whose token the request carries.
func (s *Server) authenticate(r *http.Request) (string, bool) {
	token := r.Header.Get("PRIVATE-TOKEN")
	if token == "" {
		bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			return "", false
		}
		token = bearer
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if token != "" && u.token == token {
			return u.username, true
		}
	}
	return "", false
}

type callerKey struct{}

// caller is the user the request was authenticated as.
func caller(r *http.Request) string {
	who, _ := r.Context().Value(callerKey{}).(string)
	return who
}

// Token is username's token ("" for a user the fake does not know):
// requests with it act as username.
func (s *Server) Token(username string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.userNamed(username); u != nil {
		return u.token
	}
	return ""
}

// project answers 404 for a project other than the fake's, by id or by
// its full path (which arrives URL-encoded: group%2Fsub%2Fname).
func (s *Server) project(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if id != strconv.Itoa(s.projectID) && !strings.EqualFold(id, s.opt.Project) {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Project Not Found"})
			return
		}
		h(w, r)
	}
}

// mergeRequest is project, and 404 for a merge request the project does
// not have.
func (s *Server) mergeRequest(h func(http.ResponseWriter, *http.Request, int)) http.HandlerFunc {
	return s.project(func(w http.ResponseWriter, r *http.Request) {
		iid, err := strconv.Atoi(r.PathValue("iid"))
		s.mu.Lock()
		found := err == nil && iid >= 1 && iid <= len(s.mrs)
		s.mu.Unlock()
		if !found {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not found"})
			return
		}
		h(w, r, iid)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// paginate answers one page of items as GitLab's offset pagination does,
// headers included, and returns it.
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T) []T {
	q := r.URL.Query()
	perPage, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || perPage < 1 {
		perPage = 20
	}
	perPage = min(perPage, 100)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	pages := max((len(items)+perPage-1)/perPage, 1)
	link := func(n int, rel string) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(n))
		q.Set("per_page", strconv.Itoa(perPage))
		return fmt.Sprintf(`<http://%s%s?%s>; rel="%s"`, r.Host, r.URL.EscapedPath(), q.Encode(), rel)
	}
	var links []string
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(perPage))
	h.Set("X-Total", strconv.Itoa(len(items)))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Prev-Page", "")
	h.Set("X-Next-Page", "")
	if page > 1 {
		h.Set("X-Prev-Page", strconv.Itoa(page-1))
		links = append(links, link(page-1, "prev"))
	}
	if page < pages {
		h.Set("X-Next-Page", strconv.Itoa(page+1))
		links = append(links, link(page+1, "next"))
	}
	links = append(links, link(1, "first"), link(pages, "last"))
	h.Set("Link", strings.Join(links, ", "))
	start := min((page-1)*perPage, len(items))
	end := min(start+perPage, len(items))
	return items[start:end]
}
