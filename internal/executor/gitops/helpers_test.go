package gitops_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

// TestMain isolates every git run, the package's and the tests' own, from
// the machine's git configuration: the package passes os.Environ on.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "gitops-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, kv := range [][2]string{
		{"HOME", home},
		{"XDG_CONFIG_HOME", filepath.Join(home, ".config")},
		{"GIT_CONFIG_NOSYSTEM", "1"},
		{"GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig")},
	} {
		os.Setenv(kv[0], kv[1])
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS",
		"GIT_CONFIG_COUNT", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"} {
		os.Unsetenv(k)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// testIdentity is the identity of commits the tests make themselves.
var testIdentity = []string{
	"GIT_AUTHOR_NAME=Test Upstream", "GIT_AUTHOR_EMAIL=upstream@example.com",
	"GIT_COMMITTER_NAME=Test Upstream", "GIT_COMMITTER_EMAIL=upstream@example.com",
}

// git runs real git in dir for a test and returns its output, failing the
// test on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, args...)
	require.NoError(t, err, "git %s", strings.Join(args, " "))
	return out
}

func gitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), testIdentity...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return string(out), nil
}

// writeFile writes content to dir/name, creating parent directories.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	require.NoError(t, err)
	return string(b)
}

// commitAll commits everything in dir and returns the new HEAD.
func commitAll(t *testing.T, dir, message string) string {
	t.Helper()
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", message)
	return strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
}

// newUpstream makes a repository on main with three files in one commit.
func newUpstream(t *testing.T) (dir, sha string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "upstream")
	git(t, "", "init", "-q", "-b", "main", dir)
	writeFile(t, dir, "README.md", "# demo\n\nA small project.\n")
	writeFile(t, dir, "src/main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	writeFile(t, dir, "docs/guide.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n")
	writeFile(t, dir, ".gitignore", "*.log\n")
	return dir, commitAll(t, dir, "initial")
}

// testBundle is an upstream, its mirror and a workspace on testBranch at
// the upstream's first commit.
type testBundle struct {
	g        gitops.Git
	mirrors  *gitops.Mirrors
	upstream string
	mirror   string
	ws       string
	base     string
}

const testBranch = "azolla/obj-1"

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{}
	b.upstream, b.base = newUpstream(t)
	b.mirrors = &gitops.Mirrors{Root: filepath.Join(t.TempDir(), "mirrors")}
	var err error
	b.mirror, err = b.mirrors.Sync(context.Background(), b.upstream)
	require.NoError(t, err)
	b.ws = filepath.Join(t.TempDir(), "ws")
	require.NoError(t, b.g.PrepareWorkspace(context.Background(), b.mirror, b.ws, testBranch, b.base))
	return b
}

// status is "git status --porcelain --ignored" of dir: "" when the worktree
// and index match HEAD and nothing untracked or ignored is there.
func status(t *testing.T, dir string) string {
	t.Helper()
	return git(t, dir, "status", "--porcelain", "--ignored")
}

// tree is the tree id of dir's HEAD.
func tree(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^{tree}"))
}

func requireNotExist(t *testing.T, path string) {
	t.Helper()
	_, err := os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "%s should not exist", path)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readPID returns the pid a command wrote to dir/name.
func readPID(t *testing.T, dir, name string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, dir, name)))
	require.NoError(t, err)
	return pid
}

// processGone reports whether pid has exited. A killed process whose parent
// died too is reparented to init, which need not reap it promptly (or at
// all in a container), so a zombie counts as gone.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name in parentheses, which may hold ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// commitReadme commits modifyReadme in the workspace with message and
// returns the commit: something to push.
func (b *testBundle) commitReadme(t *testing.T, message string) string {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, b.g.Apply(ctx, b.ws, modifyReadme))
	sha, err := b.g.Commit(ctx, b.ws, bot, message)
	require.NoError(t, err)
	return sha
}
