package gitops_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

func TestPush_ForcePushesAfterTheBranchWasReset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, "", "init", "-q", "--bare", remote)

	first := b.commitReadme(t, "first attempt")
	require.NoError(t, b.g.Push(ctx, b.ws, remote, testBranch))
	require.Equal(t, first+"\n", git(t, remote, "rev-parse", "refs/heads/"+testBranch))

	// A retry starts from the base again; its commit does not descend from
	// the first one, so only a forced push can replace it.
	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, b.ws, testBranch, b.base))
	writeFile(t, b.ws, "second.txt", "second attempt\n")
	second, err := b.g.Commit(ctx, b.ws, bot, "second attempt")
	require.NoError(t, err)
	require.NotEqual(t, first, second)
	require.NoError(t, b.g.Push(ctx, b.ws, remote, testBranch))
	require.Equal(t, second+"\n", git(t, remote, "rev-parse", "refs/heads/"+testBranch))
	require.Equal(t, "refs/heads/"+testBranch+"\n", git(t, remote, "for-each-ref", "--format=%(refname)"),
		"only the branch is pushed")
}

func TestPush_RefusesHostileInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	pwned := filepath.Join(t.TempDir(), "pwned")

	for _, remote := range []string{"--receive-pack=touch " + pwned, "--exec=touch " + pwned, "origin", "ext::sh -c touch% " + pwned} {
		require.ErrorIs(t, b.g.Push(ctx, b.ws, remote, testBranch), gitops.ErrInvalidRepository, remote)
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, "", "init", "-q", "--bare", remote)
	for _, branch := range []string{"--all", "main:refs/heads/other", "+main", "a..b"} {
		require.ErrorIs(t, b.g.Push(ctx, b.ws, remote, branch), gitops.ErrInvalidBranch, branch)
	}
	requireNotExist(t, pwned)
	require.Equal(t, "", git(t, remote, "for-each-ref"))
}

// smartHTTP serves the bare repositories under root over git's smart HTTP
// protocol (git http-backend through CGI), answering 401 to any request
// without the Basic credential user:token.
func smartHTTP(t *testing.T, root, user, token string) *httptest.Server {
	t.Helper()
	exec, err := gitExecPath()
	require.NoError(t, err)
	backend := &cgi.Handler{Path: filepath.Join(exec, "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="forge"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		// http-backend refuses a push from an unauthenticated user.
		r.Header.Set("Remote-User", u)
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func gitExecPath() (string, error) {
	out, err := exec.Command("git", "--exec-path").Output()
	return strings.TrimSpace(string(out)), err
}

func TestPushWith_SendsTheTokenAsAHeaderOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	root := t.TempDir()
	remote := filepath.Join(root, "app.git")
	git(t, "", "init", "-q", "--bare", remote)
	git(t, remote, "config", "http.receivepack", "true")
	const token = "forge-token-0123456789abcdef"
	srv := smartHTTP(t, root, "x-access-token", token)

	head := b.commitReadme(t, "for the forge")

	err := b.g.PushWith(ctx, b.ws, srv.URL+"/app.git", testBranch, &gitops.HTTPAuth{User: "x-access-token", Token: "wrong-token-0123456789"})
	require.Error(t, err, "a wrong token is refused")
	require.NotContains(t, err.Error(), "wrong-token")
	err = b.g.Push(ctx, b.ws, srv.URL+"/app.git", testBranch)
	require.Error(t, err, "no token, no push")

	require.NoError(t, b.g.PushWith(ctx, b.ws, srv.URL+"/app.git", testBranch, &gitops.HTTPAuth{User: "x-access-token", Token: token}))
	require.Equal(t, head+"\n", git(t, remote, "rev-parse", "refs/heads/"+testBranch))
	require.NotContains(t, git(t, b.ws, "config", "--list"), token, "the token is written nowhere")

	require.ErrorContains(t, b.g.PushWith(ctx, b.ws, remote, testBranch, &gitops.HTTPAuth{User: "u", Token: token}),
		"only sent to an http(s) remote")
}

// A push that fails on the way to the remote (nothing listens, the server
// drops the connection, a 5xx) is transient; one the remote refuses (a
// wrong token, a missing repository, a ref it rejects) is not.
func TestTransient_TellsTheWayFromTheRefusal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.commitReadme(t, "for the remote")

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	dropping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(dropping.Close)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	// Dropped in the middle: the refs were read, the pack's upload dies.
	midRoot := t.TempDir()
	git(t, "", "init", "-q", "--bare", filepath.Join(midRoot, "app.git"))
	git(t, filepath.Join(midRoot, "app.git"), "config", "http.receivepack", "true")
	execPath, err := gitExecPath()
	require.NoError(t, err)
	backend := &cgi.Handler{Path: filepath.Join(execPath, "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + midRoot, "GIT_HTTP_EXPORT_ALL=1"}}
	midway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		}
		r.Header.Set("Remote-User", "azolla")
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(midway.Close)
	for name, url := range map[string]string{"nothing listens": closed.URL + "/app.git",
		"the connection dropped": dropping.URL + "/app.git", "a 503": failing.URL + "/app.git",
		"the upload dropped": midway.URL + "/app.git"} {
		err := b.g.Push(ctx, b.ws, url, testBranch)
		require.Error(t, err, name)
		require.True(t, gitops.Transient(err), "%s: %v", name, err)
	}

	root := t.TempDir()
	remote := filepath.Join(root, "app.git")
	git(t, "", "init", "-q", "--bare", remote)
	git(t, remote, "config", "http.receivepack", "true")
	srv := smartHTTP(t, root, "x-access-token", "forge-token-0123456789abcdef")
	wrong := &gitops.HTTPAuth{User: "x-access-token", Token: "wrong-token-0123456789"}
	err = b.g.PushWith(ctx, b.ws, srv.URL+"/app.git", testBranch, wrong)
	require.Error(t, err)
	require.False(t, gitops.Transient(err), "a wrong token: %v", err)
	err = b.g.Push(ctx, b.ws, srv.URL+"/missing.git", testBranch)
	require.Error(t, err)
	require.False(t, gitops.Transient(err), "a missing repository: %v", err)

	// A ref the remote rejects: it holds a commit the workspace lacks.
	bare := filepath.Join(t.TempDir(), "remote.git")
	git(t, "", "init", "-q", "--bare", bare)
	require.NoError(t, b.g.Push(ctx, b.ws, bare, testBranch))
	require.NoError(t, b.g.PrepareWorkspace(ctx, b.mirror, b.ws, testBranch, b.base))
	writeFile(t, b.ws, "other.txt", "another attempt\n")
	_, err = b.g.Commit(ctx, b.ws, bot, "another attempt")
	require.NoError(t, err)
	err = b.g.PushAdding(ctx, b.ws, bare, testBranch, nil)
	require.Error(t, err)
	require.False(t, gitops.Transient(err), "a rejected ref: %v", err)
	require.False(t, gitops.Transient(context.Canceled))
	// The remote's lock on the branch, held by another push of it.
	locked := &gitops.Error{ExitCode: 1, Err: errors.New("exit status 1"),
		Stderr: "remote: error: cannot lock ref 'refs/heads/azolla/obj-1': Unable to create '/r.git/refs/heads/azolla/obj-1.lock': File exists."}
	require.True(t, gitops.Transient(locked))
}

// A push whose connection the network leaves open and silent is given up
// after the stall timeout, as a transient failure, rather than held until
// its context ends.
func TestPush_GivesUpASilentConnection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.commitReadme(t, "for a silent remote")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	held := make(chan net.Conn, 8)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			held <- conn // read nothing, answer nothing
		}
	}()
	t.Cleanup(func() {
		for len(held) > 0 {
			_ = (<-held).Close()
		}
	})

	g := b.g
	g.StallTimeout = time.Second
	err = g.Push(ctx, b.ws, "http://"+ln.Addr().String()+"/app.git", testBranch)
	require.Error(t, err)
	require.True(t, gitops.Transient(err), "%v", err)
}
