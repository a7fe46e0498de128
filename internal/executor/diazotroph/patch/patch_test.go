package patch_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/schemas"
)

func execute(t *testing.T, tb *testBundle, req diazotroph.Request) diazotroph.Result {
	t.Helper()
	res, err := tb.p.Execute(context.Background(), req)
	require.NoError(t, err)
	requireValidBundle(t, req, res)
	return res
}

// requireValidBundle checks res makes a valid output bundle, as every
// result must.
func requireValidBundle(t *testing.T, req diazotroph.Request, res diazotroph.Result) {
	t.Helper()
	b := domain.OutputBundle{WorkOrderID: req.WorkOrder.WorkOrderID, Title: res.Title, Content: res.Content,
		Notes: res.Notes, Metadata: res.Metadata, RunnerStatus: res.RunnerStatus, CreatedAt: time.Now().UTC()}
	require.NoError(t, schemas.Validate(schemas.OutputBundle, b), "every result is a valid output bundle")
}

func TestExecute_CommitsThePatchAndReportsTheRepositoryDiff(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	req := tb.request(t, "greet", goodPatch)
	res := execute(t, tb, req)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)

	ws := tb.p.Workspace(req.WorkOrder.WorkOrderID)
	base := req.Snapshot.Metadata.CommitSHA
	head := headOf(t, ws, "azolla/greet")
	require.Equal(t, head, res.Metadata.CommitSHA)
	require.Equal(t, "azolla/greet", res.Metadata.BranchName)
	require.Equal(t, "1\n", git(t, ws, "rev-list", "--count", base+"..azolla/greet"), "one commit on the base")
	require.Equal(t, "Azolla Test <azolla-test@example.com>\n", git(t, ws, "log", "-1", "--format=%an <%ae>", head))
	require.Equal(t, "Azolla Test <azolla-test@example.com>\n", git(t, ws, "log", "-1", "--format=%cn <%ce>", head))
	require.Contains(t, git(t, ws, "log", "-1", "--format=%B", head), "Azolla-Workorder: wo-greet-2")

	// The content is the repository's diff, byte for byte what git says.
	direct := exec.Command("git", gitops.DiffArgs(base, head)...)
	direct.Dir = ws
	want, err := direct.Output()
	require.NoError(t, err)
	require.Equal(t, string(want), res.Content)
	require.NotEqual(t, goodPatch, res.Content, "never the generator's raw text")
	require.Contains(t, res.Content, "index ", "git's own headers")

	require.Contains(t, res.Notes, "2 file(s) changed, +3 -1")
	require.Contains(t, res.Notes, "- src/greet.sh (modified, +1 -1)")
	require.Contains(t, res.Metadata.PRDescriptionDraft, "- [ ] greet.sh takes a name")
	require.Contains(t, res.Metadata.PRDescriptionDraft, "- [ ] the README says so")
	tb.requireUntouched(t)
}

func TestExecute_RerunResetsTheBranch(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	req := tb.request(t, "greet", goodPatch)
	first := execute(t, tb, req)
	ws := tb.p.Workspace(req.WorkOrder.WorkOrderID)
	write(t, ws, "stray.txt", "left behind by a crashed run\n")

	second := execute(t, tb, req)
	require.Equal(t, domain.RunnerOK, second.RunnerStatus)
	require.Equal(t, first.Content, second.Content)
	require.Equal(t, "1\n", git(t, ws, "rev-list", "--count", req.Snapshot.Metadata.CommitSHA+"..azolla/greet"),
		"the branch was reset, not committed on twice")
	require.NoFileExists(t, filepath.Join(ws, "stray.txt"))
}

func TestExecute_PatchThatDoesNotApplyIsApplyFailed(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	stale := strings.Replace(goodPatch, "-echo hello", "-echo goodbye", 1)
	req := tb.request(t, "stale", stale)
	res := execute(t, tb, req)
	require.Equal(t, domain.RunnerApplyFailed, res.RunnerStatus)
	require.Equal(t, stale, res.Content, "the attempted patch is kept")
	require.Contains(t, res.Notes, "git apply refused the patch; nothing was written")
	require.Contains(t, res.Notes, "src/greet.sh")
	require.Empty(t, res.Metadata.CommitSHA)
	ws := tb.p.Workspace(req.WorkOrder.WorkOrderID)
	require.Equal(t, req.Snapshot.Metadata.CommitSHA, headOf(t, ws, "azolla/stale"), "nothing was committed")
	require.Empty(t, strings.TrimSpace(git(t, ws, "status", "--porcelain")), "the workspace is unchanged")
}

func TestExecute_PatchThatChangesNothingIsApplyFailed(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	// Two patches of one file, the second undoing the first: git applies
	// both and the index ends as it began, so git commit refuses.
	there := "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -3 +3 @@\n-Hello.\n+Bye.\n"
	back := "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -3 +3 @@\n-Bye.\n+Hello.\n"
	req := tb.request(t, "noop", there+back)
	res := execute(t, tb, req)
	require.Equal(t, domain.RunnerApplyFailed, res.RunnerStatus, res.Notes)
	require.Contains(t, res.Notes, "The patch applied but changed nothing.")
	require.Equal(t, there+back, res.Content, "the attempted patch is kept")
	require.Empty(t, res.Metadata.CommitSHA)
	ws := tb.p.Workspace(req.WorkOrder.WorkOrderID)
	require.Equal(t, req.Snapshot.Metadata.CommitSHA, headOf(t, ws, "azolla/noop"), "nothing was committed")
}

func TestExecute_PatchHoldingASecretIsRefusedNotRedacted(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.secrets = redact.New(redact.Secret{Name: "OPENAI_API_KEY", Value: "sk-canary-0451"})
	tb.p = tb.newPatch(nil)
	leaky := strings.Replace(goodPatch, "+Run src/greet.sh NAME", "+Set OPENAI_API_KEY=sk-canary-0451, then run src/greet.sh NAME", 1)
	req := tb.request(t, "leaky", leaky)
	res := execute(t, tb, req)
	require.Equal(t, domain.RunnerApplyFailed, res.RunnerStatus)
	require.Contains(t, res.Notes, "it holds the value of OPENAI_API_KEY, a secret of this worker's")
	require.NotContains(t, res.Content+res.Notes, "sk-canary-0451")
	require.Contains(t, res.Content, "[redacted:OPENAI_API_KEY]", "the human sees what was refused, without the secret")
	require.Empty(t, res.Metadata.CommitSHA)
	ws := tb.p.Workspace(req.WorkOrder.WorkOrderID)
	require.Equal(t, req.Snapshot.Metadata.CommitSHA, headOf(t, ws, "azolla/leaky"), "nothing was committed")
	require.Empty(t, strings.TrimSpace(git(t, ws, "status", "--porcelain")), "the workspace is unchanged")
}

func TestExecute_HostilePatchesAreRefusedBeforeAnythingIsWritten(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"parent directory": "diff --git a/../escape.txt b/../escape.txt\nnew file mode 100644\n--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+owned\n",
		"nested parent":    "--- a/src/../../escape.txt\n+++ b/src/../../escape.txt\n@@ -0,0 +1 @@\n+owned\n",
		"absolute path":    "--- /dev/null\n+++ /tmp/azolla-escape.txt\n@@ -0,0 +1 @@\n+owned\n",
		"git hooks":        "diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+touch owned\n",
		"symlink then write through it": "diff --git a/out b/out\nnew file mode 120000\n--- /dev/null\n+++ b/out\n@@ -0,0 +1 @@\n+../outside\n\\ No newline at end of file\n" +
			"diff --git a/out/escape.txt b/out/escape.txt\nnew file mode 100644\n--- /dev/null\n+++ b/out/escape.txt\n@@ -0,0 +1 @@\n+owned\n",
		"write through a tracked symlink": "diff --git a/docs/escape.txt b/docs/escape.txt\nnew file mode 100644\n--- /dev/null\n+++ b/docs/escape.txt\n@@ -0,0 +1 @@\n+owned\n",
		"binary":                          "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 3\nKcmZ?wbN~PW0RR91\n\nliteral 0\nHcmV?d00001\n\n",
	}
	for name, hostile := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t)
			req := tb.request(t, "hostile", hostile)
			hooks := filepath.Join(tb.p.Workspace(req.WorkOrder.WorkOrderID), ".git", "hooks")
			res := execute(t, tb, req)
			require.Equal(t, domain.RunnerApplyFailed, res.RunnerStatus)
			require.Contains(t, res.Notes, "refused before anything was written")
			require.Empty(t, res.Metadata.CommitSHA)
			tb.requireUntouched(t)
			require.NoFileExists(t, "/tmp/azolla-escape.txt")
			require.NoFileExists(t, filepath.Join(tb.root, "escape.txt"))
			require.NoFileExists(t, filepath.Join(tb.gitDir, "workspaces", "escape.txt"))
			require.NoFileExists(t, filepath.Join(hooks, "post-checkout"))
			ws := tb.p.Workspace(req.WorkOrder.WorkOrderID)
			require.Empty(t, strings.TrimSpace(git(t, ws, "status", "--porcelain")), "the workspace is unchanged")
		})
	}
}

func TestExecute_HostileObjectiveIDsAreRefused(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	for _, id := range []string{"../x", "-x", "a..b", "x.lock", "a b", "--upload-pack=touch owned"} {
		req := tb.request(t, "fine", goodPatch)
		req.Objective.ObjectiveID = id
		req.WorkOrder.BranchName = "azolla/" + id
		_, err := tb.p.Execute(context.Background(), req)
		require.ErrorIs(t, err, diazotroph.ErrMisconfigured, id)
		require.ErrorContains(t, err, "/objective_id", id)

		if id != "a..b" && id != "x.lock" { // harmless as the workspace's directory name
			req = tb.request(t, "fine", goodPatch)
			req.WorkOrder.WorkOrderID = id
			_, err = tb.p.Execute(context.Background(), req)
			require.ErrorIs(t, err, diazotroph.ErrMisconfigured, "workorder id %q", id)
		}

		req = tb.request(t, "fine", goodPatch)
		req.WorkOrder.BranchName = "azolla/other"
		_, err = tb.p.Execute(context.Background(), req)
		require.ErrorContains(t, err, "is not the objective's work branch")
	}
	entries, err := os.ReadDir(filepath.Join(tb.gitDir, "workspaces"))
	if err == nil {
		require.Empty(t, entries, "no workspace was made for a hostile id")
	}
	tb.requireUntouched(t)
}

// The budget runs out while the agent works: its processes are killed, no
// patch is delivered, and what it had written is kept on the workorder's
// partial ref, not on the work branch.
func TestExecute_BudgetExpiryKillsTheGeneratorAndKeepsItsWorkApart(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	pidFile := filepath.Join(tb.root, "child.pid")
	tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(patchgen.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}),
		Run:          "sleep 30 & echo $! > " + pidFile + "; echo 'partial' > README.md; sleep 30",
		WorktreeDiff: gitops.Git{}.WorktreeDiff})})
	req := tb.request(t, "slow", "")
	req.Objective.Generator = "command"
	// The budget covers the fetch and the workspace too: it leaves them
	// time even on a loaded machine, so that it runs out in the generator.
	req.Budget = 5 * time.Second
	start := time.Now()
	res := execute(t, tb, req)
	require.Less(t, time.Since(start), 20*time.Second, "the run ends soon after its budget, not after the generator's 30s")
	require.Equal(t, domain.RunnerBudgetExhausted, res.RunnerStatus)
	require.Empty(t, res.Content)
	require.Contains(t, res.Notes, "budget of 5s ran out")
	require.Contains(t, res.Notes, "generating the patch with the command generator")
	require.Empty(t, res.Metadata.CommitSHA)
	p := res.Metadata.Partial
	require.NotNil(t, p, res.Notes)
	require.Equal(t, "refs/azolla/slow/partial/"+req.WorkOrder.WorkOrderID, p.Ref)
	require.Equal(t, []string{"README.md"}, p.Files)
	require.Equal(t, 1, p.FilesChanged)
	require.Contains(t, res.Notes, "Partial work kept: 1 file(s)")
	ws := tb.p.Workspace(req.WorkOrder.WorkOrderID)
	require.Equal(t, p.CommitSHA, strings.TrimSpace(git(t, ws, "rev-parse", p.Ref)))
	require.Equal(t, "partial\n", git(t, ws, "show", p.Ref+":README.md"))
	require.Equal(t, req.Snapshot.Metadata.CommitSHA, headOf(t, ws, req.WorkOrder.BranchName), "the work branch has not moved")

	raw, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}, 5*time.Second, 20*time.Millisecond, "the generator's background child is killed")
}

func TestExecute_CommandGeneratorEditsTheWorkspace(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(patchgen.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}),
		Run:          `test -f "$AZOLLA_INPUT_FILE" && printf 'echo "hello, $1"\n' >> src/greet.sh && echo 'notes' > NOTES.md`,
		WorktreeDiff: gitops.Git{}.WorktreeDiff})})
	req := tb.request(t, "agent", "")
	req.Objective.Generator = "command"
	res := execute(t, tb, req)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)
	require.Contains(t, res.Content, "+echo \"hello, $1\"")
	require.Contains(t, res.Content, "diff --git a/NOTES.md b/NOTES.md")
	require.Contains(t, res.Notes, "- NOTES.md (added, +1 -0)")
}

// untidyKeeper claims to keep the worktree, then writes into it.
type untidyKeeper struct{ patch string }

func (untidyKeeper) Name() string        { return "openai" }
func (untidyKeeper) KeepsWorktree() bool { return true }
func (u untidyKeeper) Generate(_ context.Context, in patchgen.Input) (patchgen.Output, error) {
	err := os.WriteFile(filepath.Join(in.Worktree, "stray.txt"), []byte("not in the patch\n"), 0o644)
	return patchgen.Output{Patch: u.patch}, err
}

func TestExecute_CommitsThePatchAndNothingElseInTheWorktree(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	// Under a name objectives may choose; the schema knows no other.
	tb.p = tb.newPatch(map[string]patchgen.Generator{"openai": untidyKeeper{patch: goodPatch}})
	req := tb.request(t, "untidy", "")
	req.Objective.Generator = "openai"
	res := execute(t, tb, req)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)

	ws := tb.p.Workspace(req.WorkOrder.WorkOrderID)
	require.Equal(t, "README.md\nsrc/greet.sh\n",
		git(t, ws, "diff", "--name-only", req.Snapshot.Metadata.CommitSHA, res.Metadata.CommitSHA))
	require.NotContains(t, res.Content, "stray.txt")
	require.Contains(t, res.Notes, "2 file(s) changed, +3 -1")
}

func TestExecute_MisconfiguredGeneratorsAreErrors(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	cases := map[string]func(*diazotroph.Request){
		"static without a patch":  func(r *diazotroph.Request) { r.Objective.Patch = "" },
		"unconfigured generator":  func(r *diazotroph.Request) { r.Objective.Generator = "openai" },
		"no repository":           func(r *diazotroph.Request) { r.Objective.Repository = "" },
		"snapshot without commit": func(r *diazotroph.Request) { r.Snapshot.Metadata.CommitSHA = "" },
	}
	for name, edit := range cases {
		req := tb.request(t, "conf", goodPatch)
		edit(&req)
		_, err := tb.p.Execute(context.Background(), req)
		require.ErrorIs(t, err, diazotroph.ErrMisconfigured, name)
	}
	req := tb.request(t, "conf", goodPatch)
	req.Objective.Generator = "openai"
	_, err := tb.p.Execute(context.Background(), req)
	require.ErrorContains(t, err, "set patch.openai.model", "the error says what to configure")
}

func TestExecute_CancelledContextIsAnError(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tb.p.Execute(ctx, tb.request(t, "gone", goodPatch))
	require.ErrorIs(t, err, context.Canceled)
}

func TestExecute_PushesTheBranchWhenConfiguredAndForcesItOnRetry(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	remote := filepath.Join(tb.root, "remote.git")
	git(t, tb.root, "init", "-q", "--bare", remote)
	tb.settings.PushRemote = remote

	first := execute(t, tb, tb.request(t, "pushed", goodPatch))
	require.Contains(t, first.Notes, "Pushed azolla/pushed to "+remote)
	require.Equal(t, first.Metadata.CommitSHA, strings.TrimSpace(git(t, remote, "rev-parse", "refs/heads/azolla/pushed")))

	// A retry is a new workorder whose branch starts again from the base.
	retry := tb.request(t, "pushed", strings.Replace(goodPatch, "world", "there", 1))
	retry.WorkOrder.WorkOrderID = "wo-pushed-4"
	second := execute(t, tb, retry)
	require.NotEqual(t, first.Metadata.CommitSHA, second.Metadata.CommitSHA)
	require.Equal(t, second.Metadata.CommitSHA, strings.TrimSpace(git(t, remote, "rev-parse", "refs/heads/azolla/pushed")),
		"the remote branch was reset to the retry's commit")
	require.Equal(t, "1\n", git(t, remote, "rev-list", "--count", retry.Snapshot.Metadata.CommitSHA+"..azolla/pushed"))
}

func TestExecute_PushIsOffByDefault(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	res := execute(t, tb, tb.request(t, "local", goodPatch))
	require.NotContains(t, res.Notes, "Pushed azolla/")
	require.NotContains(t, res.Notes, "Push of azolla/")
	tb.requireUntouched(t)
}

// Partial work is checked as a patch is: a symbolic link or a secret is
// refused and nothing is kept; a write into .git is never part of it.
func TestExecute_PartialWorkIsRefusedAsAPatchWouldBe(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-partial-value"
	for name, run := range map[string]string{
		"symlink": "echo x > README.md; ln -s /etc/passwd leak",
		"secret":  "echo token=" + secret + " > README.md",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t)
			tb.secrets = redact.New(redact.Secret{Name: "FORGE_TOKEN", Value: secret})
			tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(patchgen.CommandOptions{
				Executor:     sandboxtest.Unconfined(t, sandbox.Policy{}),
				Run:          run + `; touch .git/hooks/pre-commit; touch "` + tb.root + `/$AZOLLA_WORK_ORDER_ID.asleep"; sleep 120`,
				WorktreeDiff: gitops.Git{}.WorktreeDiff})})
			req := tb.request(t, "hostile", "")
			req.Objective.Generator = "command"
			req.Budget = time.Minute
			res, err := tb.untilAsleep(t, req, testStop)
			require.NoError(t, err)
			requireValidBundle(t, req, res)
			require.Equal(t, domain.RunnerStopped, res.RunnerStatus)
			require.Nil(t, res.Metadata.Partial, res.Notes)
			require.Contains(t, res.Notes, "The work left in the workspace was not kept")
			require.NotContains(t, res.Notes, secret)
			ws := tb.p.Workspace(req.WorkOrder.WorkOrderID)
			require.Empty(t, strings.TrimSpace(git(t, ws, "for-each-ref", "refs/azolla/")), "no ref was written")
		})
	}
}
