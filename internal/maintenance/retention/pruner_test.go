package retention_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/maintenance/retention"
)

// TestRunOnce_PrunesWhatIsFinishedAndAccountedForAndKeepsTheRest runs one
// pass over a git dir holding a workspace for each case the rule names.
func TestRunOnce_PrunesWhatIsFinishedAndAccountedForAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := context.Background()
	doneAt := t0.Add(time.Hour)

	tb.done(t, "warned", true, doneAt)
	tb.done(t, "unwarned", false, doneAt)
	tb.pushTo = tb.remote
	tb.done(t, "pushed", false, doneAt)
	// Pushed, but the branch moved in the workspace since: that commit
	// was never pushed.
	tb.done(t, "moved", false, doneAt)
	tb.pushTo = ""
	write(t, tb.workspace("wo-moved-1"), "later.txt", "a human's commit\n")
	git(t, tb.workspace("wo-moved-1"), "add", "-A")
	git(t, tb.workspace("wo-moved-1"), "commit", "-q", "-m", "more work")
	tb.done(t, "recent", true, t0.Add(2*24*time.Hour))

	// A gate FAIL (warned, as the gate warns of every unpushed branch),
	// then a retry that is still waiting: the first is superseded, the
	// retry is the newest workorder of a TODO objective.
	tb.objective(t, "retried")
	first := tb.attempt(t, "retried", 1, t0, greetPatch("first"))
	tb.gated(t, first, domain.GateFail, true, t0.Add(time.Minute))
	second := tb.attempt(t, "retried", 2, t0.Add(time.Hour), greetPatch("second"))
	tb.gated(t, second, domain.GateFail, false, t0.Add(2*time.Hour))

	// A patch that did not apply leaves no commit: nothing to warn about.
	tb.objective(t, "refused")
	noCommit := tb.attempt(t, "refused", 1, t0, "diff --git a/nope b/nope\n--- a/nope\n+++ b/nope\n@@ -1 +1 @@\n-x\n+y\n")
	tb.gated(t, noCommit, domain.GateFail, false, t0.Add(time.Minute))
	tb.attempt(t, "refused", 2, t0.Add(time.Hour), greetPatch("again"))

	// The gate's workspace of an unpushed workorder: rebuilt from the
	// bundle, it goes even though the runner's workspace stays.
	write(t, tb.workspace("wo-unwarned-1.gate"), "greet.sh", "rebuilt\n")
	// Candidate workspaces (docs/patches.md#several-candidates): of a done
	// workorder they go; of the newest workorder of a live objective they
	// stay.
	write(t, tb.workspace("wo-warned-1-c2"), "greet.sh", "candidate 2\n")
	write(t, tb.workspace("wo-retried-2-c1"), "greet.sh", "candidate 1\n")
	// An unfinished clone of a done workorder.
	write(t, tb.workspace(".wo-warned-1.tmp-4242"), "HEAD", "ref: refs/heads/main\n")
	// Directories nobody accounts for.
	write(t, tb.workspace("stray"), "notes.txt", "mine\n")
	write(t, tb.workspace(".wo-nobody-9.tmp-1"), "x", "y\n")

	tb.now = t0.Add(8 * 24 * time.Hour)
	rep, err := tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Errors)

	pruned, kept, orphans := byName(rep.Pruned), byName(rep.Kept), byName(rep.Orphans)
	wantPruned := map[string]struct {
		reason retention.Reason
		branch string
	}{
		"wo-warned-1":           {retention.Done, retention.BranchWarned},
		"wo-pushed-1":           {retention.Done, retention.BranchPushed},
		"wo-retried-1":          {retention.Superseded, retention.BranchWarned},
		"wo-refused-1":          {retention.Superseded, retention.BranchNoWork},
		"wo-unwarned-1.gate":    {retention.Done, retention.BranchDerived},
		".wo-warned-1.tmp-4242": {retention.Done, retention.BranchDerived},
		"wo-warned-1-c2":        {retention.Done, retention.BranchDerived},
	}
	require.Len(t, pruned, len(wantPruned), "pruned: %v", rep.Pruned)
	var total int64
	for name, want := range wantPruned {
		e := pruned[name]
		require.Equal(t, want.reason, e.Reason, name)
		require.Equal(t, want.branch, e.Branch, name)
		require.Positive(t, e.Bytes, name)
		total += e.Bytes
		require.NoDirExists(t, tb.workspace(name))
	}
	require.Equal(t, total, rep.BytesFreed)
	_, marked, err := patch.ReadPushed(tb.gitDir, "wo-pushed-1")
	require.NoError(t, err)
	require.False(t, marked, "the push marker goes with its workspace")

	wantKept := map[string]retention.Reason{
		"wo-unwarned-1":   retention.UnpushedNotWarned,
		"wo-moved-1":      retention.UnpushedNotWarned,
		"wo-recent-1":     retention.Retained,
		"wo-retried-2":    retention.Active,
		"wo-refused-2":    retention.Active,
		"wo-retried-2-c1": retention.Active,
	}
	require.Len(t, kept, len(wantKept), "kept: %v", rep.Kept)
	for name, reason := range wantKept {
		require.Equal(t, reason, kept[name].Reason, name)
		require.DirExists(t, tb.workspace(name))
	}
	require.Contains(t, kept["wo-unwarned-1"].Detail, "branch azolla/unwarned at ")
	require.Contains(t, kept["wo-unwarned-1"].Detail, "was not pushed and no pause state of wo-unwarned-1 warned about it")
	require.Equal(t, t0.Add(9*24*time.Hour), *kept["wo-recent-1"].PrunableAt)
	require.Equal(t, map[retention.Reason]int{retention.UnpushedNotWarned: 2, retention.Retained: 1, retention.Active: 3},
		rep.KeptBy())

	require.Len(t, orphans, 2)
	for _, name := range []string{"stray", ".wo-nobody-9.tmp-1"} {
		require.Equal(t, retention.Unknown, orphans[name].Reason, name)
		require.DirExists(t, tb.workspace(name))
	}
	require.FileExists(t, filepath.Join(tb.workspace("stray"), "notes.txt"))

	// The retained one goes once its week has passed since the verdict.
	tb.now = t0.Add(9*24*time.Hour + time.Second)
	rep, err = tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"wo-recent-1"}, names(rep.Pruned))
}

func names(entries []retention.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

func TestRunOnce_NeverFollowsASymlinkOutOfTheWorkspaces(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := context.Background()
	w := tb.done(t, "linked", true, t0.Add(time.Hour))
	tb.done(t, "inner", true, t0.Add(time.Hour))

	// The workspace of a prunable workorder replaced by a link to outside,
	// and a link to outside planted inside another prunable workspace.
	require.NoError(t, os.RemoveAll(tb.workspace(w.WorkOrderID)))
	require.NoError(t, os.Symlink(tb.outside, tb.workspace(w.WorkOrderID)))
	require.NoError(t, os.Symlink(tb.outside, filepath.Join(tb.workspace("wo-inner-1"), "escape")))
	require.NoError(t, os.Symlink(filepath.Join(tb.outside, "precious.txt"), tb.workspace("wo-file-1")))

	tb.now = t0.Add(30 * 24 * time.Hour)
	rep, err := tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Errors)
	require.Equal(t, []string{"wo-inner-1"}, names(rep.Pruned))
	orphans := byName(rep.Orphans)
	require.Equal(t, retention.Symlink, orphans["wo-linked-1"].Reason)
	require.Equal(t, retention.Symlink, orphans["wo-file-1"].Reason)

	require.Equal(t, "keep me\n", read(t, filepath.Join(tb.outside, "precious.txt")), "nothing outside is deleted")
	fi, err := os.Lstat(tb.workspace(w.WorkOrderID))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "the link itself is left alone too")
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestRunOnce_GcsTheMirrorsAndDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := context.Background()
	tb.done(t, "old", true, t0.Add(time.Hour))
	mirrors, err := os.ReadDir(patch.MirrorsDir(tb.gitDir))
	require.NoError(t, err)
	mirror := filepath.Join(patch.MirrorsDir(tb.gitDir), mirrors[0].Name())
	loose := looseObjects(t, mirror)
	require.NotEqual(t, "0", loose, "the test needs loose objects to pack")

	tb.now = t0.Add(30 * 24 * time.Hour)
	tb.pr.DryRun = true
	dry, err := tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.True(t, dry.DryRun)
	require.Equal(t, []string{"wo-old-1"}, names(dry.Pruned))
	require.Positive(t, dry.BytesFreed)
	require.Equal(t, []retention.Mirror{{Dir: mirror}}, dry.Mirrors)
	require.DirExists(t, tb.workspace("wo-old-1"), "a dry run removes nothing")
	require.Equal(t, loose, looseObjects(t, mirror), "a dry run gc's nothing")

	tb.pr.DryRun = false
	rep, err := tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, dry.Pruned, rep.Pruned, "the dry run listed exactly what goes")
	require.NoDirExists(t, tb.workspace("wo-old-1"))
	require.Len(t, rep.Mirrors, 1)
	require.Equal(t, mirror, rep.Mirrors[0].Dir)
	require.Equal(t, "0", looseObjects(t, mirror))
}

func TestRunOnce_AnErrorAboutOneWorkspaceDoesNotStopThePass(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := context.Background()
	tb.done(t, "fine", true, t0.Add(time.Hour))
	broken := tb.done(t, "broken", false, t0.Add(time.Hour))
	// Not a git worktree any more: its branch cannot be read, so whether it
	// was pushed cannot be told.
	require.NoError(t, os.RemoveAll(filepath.Join(tb.workspace(broken.WorkOrderID), ".git")))

	tb.now = t0.Add(30 * 24 * time.Hour)
	rep, err := tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.Len(t, rep.Errors, 1)
	require.Contains(t, rep.Errors[0], "wo-broken-1: read branch azolla/broken")
	require.Equal(t, []string{"wo-fine-1"}, names(rep.Pruned))
	require.Equal(t, retention.Undecided, byName(rep.Kept)["wo-broken-1"].Reason)
	require.DirExists(t, tb.workspace(broken.WorkOrderID))
	require.Len(t, rep.Mirrors, 1, "the mirrors are gc'd all the same")
}

func TestRunOnce_RefusesARelativeGitDir(t *testing.T) {
	t.Parallel()
	pr := &retention.Pruner{Dir: "git", Retention: week}
	_, err := pr.RunOnce(context.Background())
	require.ErrorContains(t, err, `git dir "git" is not an absolute path`)
}

func TestStart_PrunesInTheBackgroundUntilStopped(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.done(t, "bg", true, t0.Add(time.Hour))
	tb.now = t0.Add(30 * 24 * time.Hour)

	tb.pr.Start(context.Background())
	// The first pass runs at once; Interval (an hour) never comes.
	require.Eventually(t, func() bool {
		_, err := os.Lstat(tb.workspace("wo-bg-1"))
		return os.IsNotExist(err)
	}, 30*time.Second, 20*time.Millisecond)
	tb.pr.Stop()
	tb.pr.Stop() // a second Stop is a no-op
}

// An agent's home goes with its objective: kept while the objective is
// open and for the retention after it is DONE, then removed; a home whose
// objective the store does not know is left alone.
func TestPruner_AnAgentsHomeGoesWithItsObjective(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := context.Background()
	tb.objective(t, "open")
	tb.objective(t, "done")
	tb.transition(t, "done", domain.StatusDone, t0)
	for _, id := range []string{"open", "done", "unknown"} {
		write(t, filepath.Join(patch.HomesDir(tb.gitDir), id), ".claude/projects/x/s.jsonl", "session\n")
	}
	tb.now = t0.Add(week - time.Hour)
	rep, err := tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.HomesPruned, "within the retention")

	tb.now = t0.Add(week + time.Hour)
	rep, err = tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"done"}, rep.HomesPruned)
	require.NoDirExists(t, filepath.Join(patch.HomesDir(tb.gitDir), "done"))
	require.DirExists(t, filepath.Join(patch.HomesDir(tb.gitDir), "open"))
	require.DirExists(t, filepath.Join(patch.HomesDir(tb.gitDir), "unknown"))
}
