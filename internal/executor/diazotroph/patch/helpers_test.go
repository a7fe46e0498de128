package patch_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// TestMain keeps the user's git configuration out of every git run.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "azolla-patch-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", home)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

var author = gitops.Author{Name: "Azolla Test", Email: "azolla-test@example.com"}

// testBundle is a repository with a few files, its own git dir and a Patch
// on them.
type testBundle struct {
	root     string // temp dir holding everything
	repo     string // the upstream repository
	outside  string // a directory beside the repository, never to be written
	gitDir   string
	settings patch.Settings
	// gate runs the gate commands of tb.repo when settings names none.
	gate *sandbox.Executor
	// secrets are the values no patch may carry.
	secrets *redact.Redactor
	// fresh is patch.resume: fresh.
	fresh bool
	p     *patch.Patch
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	root := t.TempDir()
	tb := &testBundle{root: root, repo: filepath.Join(root, "upstream"), outside: filepath.Join(root, "outside"),
		gitDir: filepath.Join(root, "git"), gate: sandboxtest.Unconfined(t, sandbox.Policy{})}
	require.NoError(t, os.MkdirAll(tb.outside, 0o755))
	require.NoError(t, os.MkdirAll(tb.repo, 0o755))
	git(t, tb.repo, "init", "-q", "-b", "main")
	write(t, tb.repo, "README.md", "# sample\n\nHello.\n")
	write(t, tb.repo, "src/greet.sh", "#!/bin/sh\necho hello\n")
	// A tracked symlink leading out of the repository.
	require.NoError(t, os.Symlink(tb.outside, filepath.Join(tb.repo, "docs")))
	git(t, tb.repo, "add", "-A")
	git(t, tb.repo, "commit", "-q", "-m", "initial")
	tb.p = tb.newPatch(nil)
	return tb
}

// newPatch builds a Patch on tb, with extra generators.
func (tb *testBundle) newPatch(extra map[string]patchgen.Generator) *patch.Patch {
	gens := map[string]patchgen.Generator{"static": patchgen.NewStatic()}
	for k, v := range extra {
		gens[k] = v
	}
	return patch.New(patch.Options{Dir: tb.gitDir, Generators: gens, Default: "static",
		Unconfigured: map[string]string{"openai": "set patch.openai.model"}, Author: author,
		Policy: gitops.PatchPolicy{MaxBytes: 1 << 20}, FileListLimit: 2, Secrets: tb.secrets, Fresh: tb.fresh,
		Settings: func(repo string) patch.Settings {
			if repo != tb.repo {
				return patch.Settings{}
			}
			s := tb.settings
			if s.Gate == nil {
				s.Gate = tb.gate
			}
			return s
		}})
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Upstream", "-c", "user.email=up@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// request is a workorder for objective id carrying patch, scheduled on the
// repository's main branch as Resolve reads it.
func (tb *testBundle) request(t *testing.T, id, patchText string) diazotroph.Request {
	t.Helper()
	target, err := tb.p.Resolve(context.Background(), tb.repo, "main")
	require.NoError(t, err)
	return diazotroph.Request{
		Objective: domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "Greet by name",
			AcceptanceCriteria: []string{"greet.sh takes a name", "the README says so"}, Status: domain.StatusInProgress,
			StatusSeq: 2, Blockers: []string{}, Urgency: "NORMAL", Repository: tb.repo, BaseBranch: "main",
			Patch: patchText, CreatedAt: t0, UpdatedAt: t0},
		WorkOrder: domain.WorkOrder{WorkOrderID: "wo-" + id + "-2", EventID: "ev-" + id + "-2", ObjectiveID: id,
			DiazotrophType: diazotroph.PatchType, ContextSnapshotID: "cs-" + id + "-2", BranchName: "azolla/" + id,
			BudgetMS: 60000, Status: domain.WorkOrderCreated, CreatedAt: t0},
		Snapshot: domain.ContextSnapshot{ContextSnapshotID: "cs-" + id + "-2", ObjectiveID: id,
			FullPromptText: "Greet by name",
			Metadata:       domain.SnapshotMetadata{CommitSHA: target.CommitSHA, BaseBranch: target.BaseBranch}},
		Budget: time.Minute,
	}
}

// goodPatch changes both files the objective is about.
const goodPatch = `diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1,3 +1,5 @@
 # sample
 
 Hello.
+
+Run src/greet.sh NAME to be greeted by name.
diff --git a/src/greet.sh b/src/greet.sh
--- a/src/greet.sh
+++ b/src/greet.sh
@@ -1,2 +1,2 @@
 #!/bin/sh
-echo hello
+echo "hello, ${1:-world}"
`

// requireUntouched asserts that nothing was written beside the repository
// and that the upstream repository has no azolla branch.
func (tb *testBundle) requireUntouched(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(tb.outside)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing is written outside the workspace")
	require.Empty(t, strings.TrimSpace(git(t, tb.repo, "branch", "--list", "azolla/*")),
		"the upstream repository gets no branch")
	require.Empty(t, strings.TrimSpace(git(t, tb.repo, "status", "--porcelain")), "the upstream worktree is unchanged")
}

// headOf is the commit a branch of the workspace points at.
func headOf(t *testing.T, ws, branch string) string {
	t.Helper()
	return strings.TrimSpace(git(t, ws, "rev-parse", "--verify", "refs/heads/"+branch))
}
