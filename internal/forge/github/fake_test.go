package github_test

// fakeGitHub answers like GitHub's REST API (version 2022-11-28) for one
// public repository of an organisation, keeping its state in memory. Every
// shape is the one GitHub's REST API documentation gives, page by page:
//
//   - "Getting started with the REST API" and "Troubleshooting the REST
//     API": error bodies {"message","documentation_url","status"}, 401 "Bad
//     credentials" for a token GitHub does not know, 401 "Requires
//     authentication" for a change (or a question about people) asked
//     without one, as the repository is public and anyone may read it, 403
//     for a token without the permission; 422 "Validation Failed" with
//     errors[] of {resource,field,code[,message]}.
//   - "Using pagination in the REST API": per_page (default 30, at most 100)
//     and page, and the Link header with rel="prev", "next", "last" and
//     "first", left out when everything fits on one page.
//   - "Rate limits for the REST API": x-ratelimit-limit, -remaining,
//     -used, -reset and -resource on every answer; a primary limit is a 403
//     with x-ratelimit-remaining 0 and the reset time, a secondary one a 403
//     whose message says "secondary rate limit", with Retry-After.
//   - "REST API endpoints for pull requests": list (the "pull request simple"
//     shape, without merged or mergeable, filtered by state, head=owner:ref
//     and base), create (201; 422 "A pull request already exists for
//     owner:branch."; 422 head invalid), get (the full shape; mergeable is
//     null until GitHub has computed it), update, merge (200; 405 "Pull
//     Request is not mergeable"; 409 when sha is not the head).
//   - "... for review requests" (201; 422 for a reviewer who is not a
//     collaborator), "... for pull request reviews" (list, create with
//     event or pending, submit, dismiss; anyone who may see the pull
//     request may review it, a stranger to the public repository too; a
//     pending review is visible to its author only; author_association is
//     COLLABORATOR or NONE), "... for pull request review comments" (the
//     list on a pull request, with line, original_line, side and
//     pull_request_review_id; the per-review list, which answers the
//     "legacy review comment" without them, is not served, as the Forge
//     does not ask it).
//   - "REST API endpoints for issues": list repository issues (state open,
//     closed or all; sort created, updated or comments; direction; since,
//     an updated_at at or after it; pull requests are issues there, with a
//     pull_request key), create (201; anyone who may see the public
//     repository may open one; labels and assignees are set only for a
//     caller with push access and silently dropped otherwise; 422 for an
//     assignee who may not be assigned), get (a pull request's number
//     answers it as an issue) and update (title, body, state and
//     state_reason by the author or a caller with push access, 403 for
//     anyone else; labels and assignees by push access only, silently
//     dropped otherwise). Issues and pull requests share one sequence of
//     numbers.
//   - "... for issue comments": list an issue's (oldest first; since, an
//     updated_at at or after it), create (anyone who may see the public
//     repository may comment, on an issue or a pull request; the issue's
//     updated_at moves) and update (its author, or a caller with push
//     access; 403 for anyone else), and "... for labels" (adding a label
//     the repository lacks creates it, as GitHub does; removing one, 404
//     when the issue lacks it), and "... for issue events" (list, oldest
//     first: the "labeled" and "unlabeled" of every change above, by who
//     made it).
//   - "REST API endpoints for collaborators": check (204 or 404) and get
//     repository permissions for a user (200 with permission, role_name
//     and the user as a collaborator; 404 for a user who is not one, or
//     does not exist). Roles are GitHub's (admin, maintain, write, triage,
//     read) or the organisation's custom ones, each on a base role, whose
//     legacy permission it answers. GitHub answers the permission only to
//     a caller with push access; to others, 403 "Must have push access to
//     view collaborator permission." (the page lists 200 and 404 alone).
//   - "... for teams" (get a team by name: the team, or 404) and "... for
//     team members" (get team membership for a user: {url,role,state},
//     state active or pending; 404 for no membership). Both are only for
//     members of the team's organisation: 404 to anyone else.
//   - "REST API endpoints for commit statuses" (create 201, for users with
//     push access; to others GitHub answers 404, as it does for a
//     repository they may not write to; the combined status, latest per
//     context, state failure > pending > success) and "... for check runs"
//     (list for a ref, filter=latest by default).
//
// Where the documentation gives no body for an error (a review comment on
// a file outside the diff), the answer takes the documented 422 shape.
// Pushing is git, not REST: push changes the state directly.

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
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

// Tokens of the fake's users. azollaToken is the one the Forge under test
// holds; the others are the people around a pull request.
const (
	azollaToken     = "ghp_AzollaSecretTokenNeverPrinted0001"
	maintainerToken = "ghp_MaintainerToken000000000000000002"
	reviewerToken   = "ghp_ReviewerToken00000000000000000003"
	readerToken     = "ghp_ReaderToken0000000000000000000004"
	strangerToken   = "ghp_StrangerToken00000000000000000005"

	fakeOwner     = "acme"
	fakeRepo      = "widgets"
	fakeBase      = "main"
	fakeRateLimit = 5000
	apiVersion    = "2022-11-28"
)

// fakeFiles are the files pushes change, in the order of a branch's
// commits.
var fakeFiles = []string{"cmd/widget/main.go", "internal/widget/widget.go"}

type fakeGitHub struct {
	srv    *httptest.Server
	prefix string // "" on github.com, "/api/v3" on GitHub Enterprise Server

	mu            sync.Mutex
	users         map[string]*fakeUser  // by token
	roles         map[string]string     // role_name by lower-case login: the collaborators
	customRoles   map[string]string     // the organisation's custom roles: the base role each inherits
	teams         map[string]*fakeTeam  // by slug
	labels        map[string]*fakeLabel // by lower-case name
	branches      map[string]*fakeBranch
	commits       map[string]bool
	lastNumber    int // the last number given to an issue or a pull request
	pulls         []*fakePull
	issues        []*fakeIssue
	reviews       []*fakeReview
	comments      []*fakeComment
	issueComments []*fakeIssueComment
	labelEvents   []*fakeLabelEvent
	statuses      []*fakeStatus
	checkRuns     []*fakeCheckRun
	nextID        int64
	used          map[string]int
	resetAt       time.Time
	faults        []fault
	log           []string
	beforeRequest func(r *http.Request)
}

// newFake starts a fake GitHub serving the REST API under prefix.
func newFake(t *testing.T, prefix string) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{
		prefix: prefix,
		users: map[string]*fakeUser{
			azollaToken:     {login: "azolla-bot", id: 1001},
			maintainerToken: {login: "maintainer", id: 1002},
			reviewerToken:   {login: "reviewer", id: 1003},
			readerToken:     {login: "reader", id: 1004},
			strangerToken:   {login: "stranger", id: 1005},
		},
		// The stranger has no role: not a collaborator, and not a member of
		// the organisation.
		roles: map[string]string{"azolla-bot": "admin", "maintainer": "maintain", "reviewer": "write",
			"reader": "read"},
		customRoles: map[string]string{"release-manager": "maintain", "auditor": "read"},
		teams: map[string]*fakeTeam{
			"readers": {id: 77, slug: "readers", name: "Readers", memberships: map[string]fakeMembership{
				"reader":     {role: "member", state: "active"},
				"maintainer": {role: "maintainer", state: "active"},
				"reviewer":   {role: "member", state: "pending"},
			}},
		},
		labels:   map[string]*fakeLabel{},
		branches: map[string]*fakeBranch{},
		commits:  map[string]bool{},
		used:     map[string]int{},
		resetAt:  time.Now().Add(time.Hour).Truncate(time.Second),
		nextID:   5000,
	}
	for _, l := range []string{"azolla", "needs-review"} {
		f.labels[l] = &fakeLabel{id: f.id(), name: l, color: "0e8a16"}
	}
	base := f.sha("main", 0)
	f.branches[fakeBase] = &fakeBranch{sha: base}
	f.commits[base] = true
	f.srv = httptest.NewServer(f.routes())
	t.Cleanup(f.srv.Close)
	return f
}

// baseURL is the REST API's root as Options.BaseURL takes it.
func (f *fakeGitHub) baseURL() string { return f.srv.URL + f.prefix + "/" }

func (f *fakeGitHub) id() int64 { f.nextID++; return f.nextID }

func (f *fakeGitHub) sha(branch string, n int) string {
	sum := sha1.Sum([]byte(fmt.Sprintf("%s/%d/%d", branch, n, f.id())))
	return hex.EncodeToString(sum[:])
}

// tokenOf is login's token, "" for a login the fake has no token of.
func (f *fakeGitHub) tokenOf(login string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for token, u := range f.users {
		if u.login == login {
			return token
		}
	}
	return ""
}

// failNext makes the next answers to azolla's token the faults, one each.
func (f *fakeGitHub) failNext(faults ...fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, faults...)
}

// onRequest runs hook before each request of azolla's is answered.
func (f *fakeGitHub) onRequest(hook func(r *http.Request)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beforeRequest = hook
}

// requests returns azolla's requests so far ("GET /repos/…?query") that
// start with prefix (after the API's root).
func (f *fakeGitHub) requests(prefix string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, l := range f.log {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

type userKey struct{}

// anonymous is the caller without a token: it has no login, and no role.
var anonymous = &fakeUser{}

// routes is the fake's API: one pattern per documented endpoint, behind
// authentication, rate-limit headers and faults.
func (f *fakeGitHub) routes() http.Handler {
	mux := http.NewServeMux()
	repo := f.prefix + "/repos/{owner}/{repo}"
	for pattern, h := range map[string]func(http.ResponseWriter, *http.Request, *fakeUser){
		"GET " + repo + "/pulls":                                  f.listPulls,
		"POST " + repo + "/pulls":                                 f.createPull,
		"GET " + repo + "/pulls/{number}":                         f.getPull,
		"PATCH " + repo + "/pulls/{number}":                       f.updatePull,
		"PUT " + repo + "/pulls/{number}/merge":                   f.mergePull,
		"POST " + repo + "/pulls/{number}/requested_reviewers":    f.requestReviewers,
		"GET " + repo + "/pulls/{number}/reviews":                 f.listReviews,
		"POST " + repo + "/pulls/{number}/reviews":                f.createReview,
		"POST " + repo + "/pulls/{number}/reviews/{id}/events":    f.submitReview,
		"PUT " + repo + "/pulls/{number}/reviews/{id}/dismissals": f.dismissReview,
		"GET " + repo + "/pulls/{number}/comments":                f.listReviewComments,
		"GET " + repo + "/issues":                                 f.listIssues,
		"POST " + repo + "/issues":                                f.createIssue,
		"GET " + repo + "/issues/{number}":                        f.getIssue,
		"PATCH " + repo + "/issues/{number}":                      f.updateIssue,
		"GET " + repo + "/issues/{number}/comments":               f.listIssueComments,
		"POST " + repo + "/issues/{number}/comments":              f.createIssueComment,
		"PATCH " + repo + "/issues/comments/{comment_id}":         f.updateIssueComment,
		"POST " + repo + "/issues/{number}/labels":                f.addLabels,
		"DELETE " + repo + "/issues/{number}/labels/{name}":       f.removeLabel,
		"GET " + repo + "/issues/{number}/events":                 f.listIssueEvents,
		"GET " + repo + "/labels/{name}":                          f.getLabel,
		"GET " + repo + "/collaborators/{username}":               f.checkCollaborator,
		"GET " + repo + "/collaborators/{username}/permission":    f.collaboratorPermission,
		"POST " + repo + "/statuses/{sha}":                        f.createStatus,
		"GET " + repo + "/commits/{ref}/status":                   f.combinedStatus,
		"GET " + repo + "/commits/{ref}/check-runs":               f.listCheckRuns,
	} {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			u := r.Context().Value(userKey{}).(*fakeUser)
			if r.PathValue("owner") != fakeOwner || r.PathValue("repo") != fakeRepo {
				notFound(w, "https://docs.github.com/rest")
				return
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			h(w, r, u)
		})
	}
	org := f.prefix + "/orgs/{org}"
	for pattern, h := range map[string]func(http.ResponseWriter, *http.Request, *fakeUser){
		"GET " + org + "/teams/{team_slug}":                        f.getTeam,
		"GET " + org + "/teams/{team_slug}/memberships/{username}": f.getTeamMembership,
	} {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			u := r.Context().Value(userKey{}).(*fakeUser)
			// Organisation names are not case sensitive.
			if !strings.EqualFold(r.PathValue("org"), fakeOwner) {
				notFound(w, "https://docs.github.com/rest")
				return
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			h(w, r, u)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { notFound(w, "https://docs.github.com/rest") })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serve(w, r, mux) })
}

// serve authenticates, counts the request against its user's quota and
// answers a queued fault or the endpoint.
func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request, mux http.Handler) {
	token := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), "token "))
	f.mu.Lock()
	u, known := f.users[token]
	login := ""
	if known {
		login = u.login
	}
	f.used[login]++
	limit := fakeRateLimit
	if !known {
		limit = 60
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(limit-f.used[login], 1)))
	h.Set("X-RateLimit-Used", strconv.Itoa(f.used[login]))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(f.resetAt.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	h.Set("X-GitHub-Api-Version-Selected", apiVersion)
	var fl *fault
	var hook func(*http.Request)
	if known && u.login == "azolla-bot" {
		f.log = append(f.log, r.Method+" "+strings.TrimPrefix(r.URL.RequestURI(), f.prefix))
		if len(f.faults) > 0 {
			fl = &f.faults[0]
			f.faults = f.faults[1:]
		}
		hook = f.beforeRequest
	}
	f.mu.Unlock()

	switch {
	case token == "" && r.Method != http.MethodGet:
		// The repository is public: anyone may read it, no one anonymous
		// may change it.
		requiresAuthentication(w)
	case token == "":
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, anonymous)))
	case !known:
		writeError(w, http.StatusUnauthorized, "Bad credentials", "https://docs.github.com/rest")
	case fl != nil:
		answerFault(w, *fl, limit)
	default:
		if hook != nil {
			hook(r)
		}
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	}
}

func answerFault(w http.ResponseWriter, fl fault, limit int) {
	h := w.Header()
	if fl.primary {
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", strconv.Itoa(limit))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(fl.resetIn).Unix(), 10))
	}
	if fl.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int(fl.retryAfter/time.Second)))
	}
	writeError(w, fl.status, fl.message, fl.docURL)
}

// paginate answers page of items as GitHub does: per_page items from
// page, and the Link header to the others.
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T) []T {
	q := r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per < 1 {
		per = 30
	}
	per = min(per, 100)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	last := max(1, (len(items)+per-1)/per)
	if last > 1 || page > 1 {
		at := func(p int) string {
			q.Set("page", strconv.Itoa(p))
			u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
			return "<" + u.String() + ">"
		}
		var rels []string
		if page > 1 {
			rels = append(rels, at(page-1)+`; rel="prev"`)
		}
		if page < last {
			rels = append(rels, at(page+1)+`; rel="next"`, at(last)+`; rel="last"`)
		}
		if page > 1 {
			rels = append(rels, at(1)+`; rel="first"`)
		}
		w.Header().Set("Link", strings.Join(rels, ", "))
	}
	lo := min((page-1)*per, len(items))
	return items[lo:min(lo+per, len(items))]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers GitHub's error body.
func writeError(w http.ResponseWriter, status int, message, doc string, errs ...any) {
	body := map[string]any{"message": message, "documentation_url": doc, "status": strconv.Itoa(status)}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	writeJSON(w, status, body)
}

// requiresAuthentication is GitHub's answer to an anonymous caller where
// it wants to know who asks.
func requiresAuthentication(w http.ResponseWriter) {
	writeError(w, http.StatusUnauthorized, "Requires authentication", "https://docs.github.com/rest")
}

func notFound(w http.ResponseWriter, doc string) {
	writeError(w, http.StatusNotFound, "Not Found", doc)
}

func validationFailed(w http.ResponseWriter, doc string, errs ...any) {
	writeError(w, http.StatusUnprocessableEntity, "Validation Failed", doc, errs...)
}

// fieldError is one entry of a 422's errors.
func fieldError(resource, field, code string) map[string]string {
	return map[string]string{"resource": resource, "field": field, "code": code}
}

func customError(resource, message string) map[string]string {
	return map[string]string{"resource": resource, "code": "custom", "message": message}
}

// forbidden is GitHub's answer to a token without the permission.
func forbidden(w http.ResponseWriter, doc string) {
	writeError(w, http.StatusForbidden, "Resource not accessible by personal access token", doc)
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", "https://docs.github.com/rest")
		return false
	}
	return true
}

// stamp is GitHub's timestamp, or null.
func stamp(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}
