package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workers"
	"github.com/azolla/azolla/workflows"
)

// sampleRepo makes a repository with one commit on main.
func sampleRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	gitIn(t, dir, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644))
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Upstream", "-c", "user.email=up@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

const helloPatch = `--- a/hello.txt
+++ b/hello.txt
@@ -1 +1,2 @@
 hello
+hello again
`

// patchObjective targets repo with the static helloPatch.
func patchObjective(repo string) func(*domain.Objective) {
	return func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator, o.Patch = repo, "main", config.GeneratorStatic, helloPatch
	}
}

// requirePatchRun checks one workorder's patch run end to end: its branch
// has one commit on the snapshot's commit, and the bundle's content is that
// commit's diff as git prints it.
func (b *bundle) requirePatchRun(t *testing.T, w *domain.WorkOrder) *domain.OutputBundle {
	t.Helper()
	ctx := context.Background()
	require.Equal(t, diazotroph.PatchType, w.DiazotrophType)
	snap, err := b.store.GetContextSnapshot(ctx, w.ContextSnapshotID)
	require.NoError(t, err)
	out, err := b.store.GetOutputBundle(ctx, w.WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, domain.RunnerOK, out.RunnerStatus, out.Notes)
	ws := filepath.Join(b.cfg.GitDir(), "workspaces", w.WorkOrderID)
	require.Equal(t, out.Metadata.CommitSHA, gitIn(t, ws, "rev-parse", "--verify", "refs/heads/"+w.BranchName))
	require.Equal(t, "1", gitIn(t, ws, "rev-list", "--count", snap.Metadata.CommitSHA+".."+w.BranchName))
	direct := exec.Command("git", gitops.DiffArgs(snap.Metadata.CommitSHA, w.BranchName)...)
	direct.Dir = ws
	diff, err := direct.Output()
	require.NoError(t, err)
	require.Equal(t, string(diff), out.Content, "the content is the repository diff")
	return out
}

func TestPatch_ApprovedObjectiveYieldsABranchCommitAndDiff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := sampleRepo(t)
	base := gitIn(t, repo, "rev-parse", "main")
	b := setup(t, setupOptions{patch: func(p *config.PatchConfig) {
		p.Repositories = []config.RepositoryConfig{{Repository: repo, GateCommands: []string{"grep -q again hello.txt"}}}
	}})
	id := uniqueID("patch")
	b.create(t, id, patchObjective(repo))
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	b.waitStep(t, id, workflows.StepDone)

	wos, err := b.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	require.Len(t, wos, 1)
	snap, err := b.store.GetContextSnapshot(ctx, wos[0].ContextSnapshotID)
	require.NoError(t, err)
	require.Equal(t, base, snap.Metadata.CommitSHA)
	require.Equal(t, "main", snap.Metadata.BaseBranch)
	require.Contains(t, snap.FullPromptText, "hello.txt")
	out := b.requirePatchRun(t, wos[0])
	require.Contains(t, out.Content, "+hello again")
	require.Equal(t, "azolla/"+id, out.Metadata.BranchName)

	rr, err := b.store.GetRunRecord(ctx, wos[0].WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, domain.GatePass, rr.GateResult)
	require.Equal(t, out.Metadata.CommitSHA, rr.CommitSHA)
	require.Contains(t, rr.GateReason, `gate commands passed: "grep -q again hello.txt"`)
	pauses, err := b.store.ListPauseStates(ctx, id)
	require.NoError(t, err)
	last := pauses[len(pauses)-1]
	require.Equal(t, domain.PauseRunComplete, last.Reason)
	require.Equal(t, []string{"Review PR on azolla/" + id,
		"Push or fetch azolla/" + id + " within 7 days: it was not pushed and lives only in the runner's workspace, which is pruned then",
		"Confirm completion"}, last.PrioritizedActions, "no push remote: the human is told the branch will go with its workspace")
	require.Equal(t, []string{pause.ReviewBranch, pause.KeepBranch, pause.ConfirmCompletion}, last.ActionKinds)
	require.Equal(t, base, gitIn(t, repo, "rev-parse", "main"), "the user's repository is not changed")

	// Running the EXECUTED workorder again changes nothing.
	ex, err := workers.NewExecutors(b.cfg, sandboxtest.Host(t), nil)
	require.NoError(t, err)
	set, err := workers.NewActivities(b.cfg, b.store, "rerun", ex)
	require.NoError(t, err)
	res, err := set.Steps.Run(ctx, activities.RunInput{WorkOrderID: wos[0].WorkOrderID})
	require.NoError(t, err)
	require.True(t, res.AlreadyExecuted)
	b.requirePatchRun(t, wos[0])
	b.requireAuditClean(t)
}

func TestPatch_GateFailureThenRetryResetsTheBranchOnANewWorkOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := sampleRepo(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, filepath.Dir(remote), "init", "-q", "--bare", remote)
	marker := filepath.Join(t.TempDir(), "tests-fixed")
	gate := "echo checking; test -f " + marker
	b := setup(t, setupOptions{patch: func(p *config.PatchConfig) {
		p.Repositories = []config.RepositoryConfig{{Repository: repo, GateCommands: []string{gate}, PushRemote: remote,
			GateBinds: []config.BindConfig{{Path: filepath.Dir(marker)}}}}
	}})
	id := uniqueID("patch-retry")
	b.create(t, id, patchObjective(repo))
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	b.waitStep(t, id, workflows.StepAwaitingRetry)

	wos, err := b.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	require.Len(t, wos, 1)
	first := b.requirePatchRun(t, wos[0])
	rr, err := b.store.GetRunRecord(ctx, wos[0].WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, domain.GateFail, rr.GateResult)
	require.Contains(t, rr.GateReason, `gate command "`+gate+`" exited with status 1`)
	require.Contains(t, rr.GateReason, "checking", "the reason carries the output's tail")
	require.Equal(t, first.Metadata.CommitSHA, gitIn(t, remote, "rev-parse", "refs/heads/azolla/"+id), "pushed")
	o, err := b.store.GetObjective(ctx, id)
	require.NoError(t, err)
	require.Equal(t, domain.StatusTodo, o.Status)
	pauses, err := b.store.ListPauseStates(ctx, id)
	require.NoError(t, err)
	require.Equal(t, domain.PauseGateFailed, pauses[len(pauses)-1].Reason)

	// Upstream moves on, the human fixes what the gate wanted, and retries.
	require.NoError(t, os.WriteFile(filepath.Join(repo, "other.txt"), []byte("more\n"), 0o644))
	gitIn(t, repo, "add", "other.txt")
	gitIn(t, repo, "commit", "-q", "-m", "more")
	require.NoError(t, os.WriteFile(marker, nil, 0o644))
	_, err = b.starter.Decide(ctx, id, workflows.Retry, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	b.waitStep(t, id, workflows.StepDone)

	wos, err = b.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	require.Len(t, wos, 2, "the retry is a new workorder")
	second := b.requirePatchRun(t, wos[1])
	require.NotEqual(t, first.Metadata.CommitSHA, second.Metadata.CommitSHA)
	snap, err := b.store.GetContextSnapshot(ctx, wos[1].ContextSnapshotID)
	require.NoError(t, err)
	require.Equal(t, gitIn(t, repo, "rev-parse", "main"), snap.Metadata.CommitSHA, "the retry starts from the new head")
	require.Equal(t, second.Metadata.CommitSHA, gitIn(t, remote, "rev-parse", "refs/heads/azolla/"+id),
		"the pushed branch was reset to the retry's commit")
	b.requireAuditClean(t)
}

func TestPatch_MissingBaseBranchBlocksTheObjective(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := sampleRepo(t)
	b := setup(t, setupOptions{})
	id := uniqueID("patch-blocked")
	b.create(t, id, patchObjective(repo), func(o *domain.Objective) { o.BaseBranch = "develop" })
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	b.waitStep(t, id, workflows.StepAwaitingUnblock)
	o, err := b.store.GetObjective(ctx, id)
	require.NoError(t, err)
	require.Equal(t, domain.StatusBlocked, o.Status)
	require.Len(t, o.Blockers, 1)
	require.Contains(t, o.Blockers[0], `has no branch "develop"`)

	gitIn(t, repo, "branch", "develop")
	_, err = b.starter.Decide(ctx, id, workflows.Unblock, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	b.waitStep(t, id, workflows.StepDone)
	b.requireAuditClean(t)
}
