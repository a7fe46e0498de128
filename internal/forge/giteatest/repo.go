package giteatest

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/forgetest"
)

// Files are the files Push changes, the first commit on a branch the
// first, the second the second, and so on in turn. The base branch has
// neither, so every line of them is in a pull request's diff.
var Files = []string{"one.txt", "two.txt"}

// Repo is one public repository on a Server, owned by Admin, with
// Reviewer as a collaborator who may write, Reader as one who may only
// read, and a local clone to push from.
type Repo struct {
	Server *Server
	Owner  string
	Name   string
	// Base is the default branch, with one commit (a README).
	Base  string
	clone string
	env   []string
}

var repoSeq atomic.Int64

// NewRepo creates a fresh repository on s for one test.
func NewRepo(t testing.TB, s *Server) *Repo {
	t.Helper()
	ctx := context.Background()
	r := &Repo{Server: s, Owner: s.Admin.Name, Base: "main",
		Name: fmt.Sprintf("repo-%d-%s", repoSeq.Add(1), randomHex(3))}
	require.NoError(t, s.API(ctx, s.Admin.Token, http.MethodPost, "/user/repos", map[string]any{
		"name": r.Name, "auto_init": true, "readme": "Default", "default_branch": r.Base, "private": false,
	}, nil), "create repository")
	require.NoError(t, s.API(ctx, s.Admin.Token, http.MethodPut,
		r.Path("/collaborators/"+s.Reviewer.Name), map[string]string{"permission": "write"}, nil),
		"make the reviewer a collaborator")
	require.NoError(t, s.API(ctx, s.Admin.Token, http.MethodPut,
		r.Path("/collaborators/"+s.Reader.Name), map[string]string{"permission": "read"}, nil),
		"make the reader a collaborator who may only read")

	dir := t.TempDir()
	r.clone = filepath.Join(dir, "clone")
	basic := base64.StdEncoding.EncodeToString([]byte(s.Admin.Name + ":" + s.Admin.Token))
	// The test's git sees this environment only, as Gitea does (server.go),
	// not the test process's. The token travels in a header set through
	// it: never in the remote's URL, the clone's config or the command line.
	r.env = append([]string{"PATH=" + os.Getenv("PATH")}, "HOME="+dir, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_COUNT=3",
		"GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Basic "+basic,
		"GIT_CONFIG_KEY_1=user.name", "GIT_CONFIG_VALUE_1=Test Pusher",
		"GIT_CONFIG_KEY_2=user.email", "GIT_CONFIG_VALUE_2=pusher@example.com")
	r.git(t, dir, "clone", "--quiet", s.URL+"/"+r.Owner+"/"+r.Name+".git", r.clone)
	return r
}

// Path is the API path of the repository followed by rest.
func (r *Repo) Path(rest string) string { return "/repos/" + r.Owner + "/" + r.Name + rest }

// Push creates branch from Base on the server, or adds a commit on it, and
// returns the new head commit.
func (r *Repo) Push(t *testing.T, branch string) string {
	t.Helper()
	r.git(t, r.clone, "fetch", "--quiet", "--prune", "origin")
	start := "origin/" + r.Base
	exists := exec.Command("git", "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+branch)
	exists.Dir, exists.Env = r.clone, r.env
	if exists.Run() == nil {
		start = "origin/" + branch
	}
	r.git(t, r.clone, "checkout", "--quiet", "-B", branch, start)
	n, err := strconv.Atoi(r.git(t, r.clone, "rev-list", "--count", "origin/"+r.Base+"..HEAD"))
	require.NoError(t, err)
	file := Files[n%len(Files)]
	f, err := os.OpenFile(filepath.Join(r.clone, file), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = fmt.Fprintf(f, "commit %d on %s\n", n+1, branch)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	r.git(t, r.clone, "add", file)
	r.git(t, r.clone, "commit", "--quiet", "-m", fmt.Sprintf("%s: commit %d", branch, n+1))
	r.git(t, r.clone, "push", "--quiet", "origin", "HEAD:refs/heads/"+branch)
	return r.git(t, r.clone, "rev-parse", "HEAD")
}

// Open opens a pull request from head onto Base as Admin, outside of the
// implementation under test, and returns its number.
func (r *Repo) Open(t *testing.T, head, title string) int {
	t.Helper()
	var pr struct {
		Number int `json:"number"`
	}
	require.NoError(t, r.Server.API(context.Background(), r.Server.Admin.Token, http.MethodPost, r.Path("/pulls"),
		map[string]string{"head": head, "base": r.Base, "title": title, "body": "Opened by hand."}, &pr))
	return pr.Number
}

// reviewEvents maps the seam's verdicts to Gitea's review events.
var reviewEvents = map[forge.ReviewState]string{
	forge.ReviewApproved:         "APPROVED",
	forge.ReviewChangesRequested: "REQUEST_CHANGES",
	forge.ReviewCommented:        "COMMENT",
}

// Review submits a review as Reviewer. A dismissed review is submitted
// requesting changes, then dismissed by Admin.
func (r *Repo) Review(t *testing.T, number int, state forge.ReviewState, body string, comments []forge.ReviewComment) {
	t.Helper()
	r.ReviewAs(t, r.Server.Reviewer, number, state, body, comments)
}

// ReviewAs submits a review as u, one of the server's users.
func (r *Repo) ReviewAs(t testing.TB, u User, number int, state forge.ReviewState, body string, comments []forge.ReviewComment) {
	t.Helper()
	event, ok := reviewEvents[state]
	if state == forge.ReviewDismissed {
		event, ok = "REQUEST_CHANGES", true
	}
	require.True(t, ok, "review state %q", state)
	type comment struct {
		Path        string `json:"path"`
		Body        string `json:"body"`
		NewPosition int    `json:"new_position"`
		OldPosition int    `json:"old_position"`
	}
	in := struct {
		Event    string    `json:"event"`
		Body     string    `json:"body"`
		Comments []comment `json:"comments"`
	}{Event: event, Body: body, Comments: []comment{}}
	for _, c := range comments {
		in.Comments = append(in.Comments, comment{Path: c.Path, Body: c.Body, NewPosition: c.Line, OldPosition: c.OldLine})
	}
	var out struct {
		ID int64 `json:"id"`
	}
	ctx := context.Background()
	prPath := r.Path("/pulls/" + strconv.Itoa(number))
	require.NoError(t, r.Server.API(ctx, u.Token, http.MethodPost, prPath+"/reviews", in, &out))
	if state == forge.ReviewDismissed {
		require.NoError(t, r.Server.API(ctx, r.Server.Admin.Token, http.MethodPost,
			fmt.Sprintf("%s/reviews/%d/dismissals", prPath, out.ID), map[string]string{"message": "Dismissed."}, nil))
	}
}

// statusStates maps the seam's check states to Gitea's commit status
// states.
var statusStates = map[forge.CheckState]string{
	forge.ChecksPending: "pending",
	forge.ChecksSuccess: "success",
	forge.ChecksFailure: "failure",
}

// Status posts a commit status as Admin.
func (r *Repo) Status(t *testing.T, sha, name string, state forge.CheckState, description string) {
	t.Helper()
	require.NoError(t, r.StatusAs(t, r.Server.Admin, sha, name, state, description))
}

// StatusAs posts a commit status as u and returns Gitea's answer.
func (r *Repo) StatusAs(t testing.TB, u User, sha, name string, state forge.CheckState, description string) error {
	t.Helper()
	s, ok := statusStates[state]
	require.True(t, ok, "check state %q", state)
	return r.Server.API(context.Background(), u.Token, http.MethodPost, r.Path("/statuses/"+sha),
		map[string]string{"state": s, "context": name, "description": description,
			"target_url": r.Server.URL + "/ci/" + name}, nil)
}

// user is the server's user named name.
func (r *Repo) user(t testing.TB, name string) User {
	t.Helper()
	for _, u := range []User{r.Server.Admin, r.Server.Reviewer, r.Server.Reader, r.Server.Stranger} {
		if u.Name == name {
			return u
		}
	}
	t.Fatalf("giteatest: no user %q", name)
	return User{}
}

// Merge merges the pull request as Admin once Gitea has found it
// mergeable (it checks after every push, in the background).
func (r *Repo) Merge(t *testing.T, number int) {
	t.Helper()
	ctx := context.Background()
	prPath := r.Path("/pulls/" + strconv.Itoa(number))
	require.Eventually(t, func() bool {
		var pr struct {
			Mergeable bool `json:"mergeable"`
		}
		return r.Server.API(ctx, r.Server.Admin.Token, http.MethodGet, prPath, nil, &pr) == nil && pr.Mergeable
	}, 30*time.Second, 50*time.Millisecond, "pull request %d never became mergeable", number)
	// Gitea still answers 405 "Please try again later" while a check it
	// started after the last push runs: ask again until it merges.
	var err error
	require.Eventually(t, func() bool {
		err = r.Server.API(ctx, r.Server.Admin.Token, http.MethodPost, prPath+"/merge", map[string]string{"Do": "merge"}, nil)
		return err == nil || !strings.Contains(err.Error(), "try again later")
	}, 30*time.Second, 50*time.Millisecond, "pull request %d: Gitea kept asking to merge later", number)
	require.NoError(t, err)
}

// Close closes the pull request without merging, as Admin.
func (r *Repo) Close(t *testing.T, number int) {
	t.Helper()
	require.NoError(t, r.Server.API(context.Background(), r.Server.Admin.Token, http.MethodPatch,
		r.Path("/pulls/"+strconv.Itoa(number)), map[string]string{"state": "closed"}, nil))
}

// Harness is the conformance suite's view of the repository, with f (an
// implementation holding Admin's token) under test.
func (r *Repo) Harness(f forge.Forge) *forgetest.Harness {
	s := r.Server
	return &forgetest.Harness{Forge: f, Base: r.Base, Files: Files,
		Push: r.Push, Open: r.Open, Review: r.Review, Status: r.Status, Merge: r.Merge, Close: r.Close,
		Self: s.Admin.Name, Writer: s.Reviewer.Name, Reader: s.Reader.Name, Stranger: s.Stranger.Name, Team: s.Team,
		ReviewAs: func(t *testing.T, user string, number int, state forge.ReviewState, body string) {
			r.ReviewAs(t, r.user(t, user), number, state, body, nil)
		},
		StatusAs: func(t *testing.T, user, sha, name string, state forge.CheckState, description string) error {
			return r.StatusAs(t, r.user(t, user), sha, name, state, description)
		},
		OpenIssue: func(t *testing.T, user, title, body string, labels, assignees []string) int {
			return r.OpenIssue(t, r.user(t, user), title, body, labels, assignees)
		},
		LabelIssue: func(t *testing.T, user string, number int, label string) {
			r.LabelIssue(t, r.user(t, user), number, label)
		},
		UnlabelIssue: func(t *testing.T, user string, number int, label string) {
			r.UnlabelIssue(t, r.user(t, user), number, label)
		},
		CloseIssue: func(t *testing.T, number int) { r.CloseIssue(t, number) },
		CommentAs: func(t *testing.T, user string, on forge.Thread, body string) string {
			return r.CommentAs(t, r.user(t, user), on, body)
		}}
}

// git runs git in dir and returns its trimmed standard output.
func (r *Repo) git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = r.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), stderr.String())
	return strings.TrimSpace(string(out))
}
