package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/maintenance/retention"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlite"
)

// gcFixture is a data dir whose store and git dir hold, a month after their
// objectives were DONE: a warned workspace, an unpushed one nobody was
// warned about and a directory nobody accounts for.
type gcFixture struct {
	env                      map[string]string
	warned, unwarned, orphan string // workspace paths
}

func newGCFixture(t *testing.T) gcFixture {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"AZOLLA_DATA_DIR": dir}
	res := azolla(t, env, "migrate")
	require.Equal(t, 0, res.code, res.stderr)
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, "azolla.db"))
	require.NoError(t, err)
	defer s.Close()

	workspaces := filepath.Join(dir, "git", "workspaces")
	f := gcFixture{env: env, warned: filepath.Join(workspaces, "wo-gcw-1"),
		unwarned: filepath.Join(workspaces, "wo-gcu-1"), orphan: filepath.Join(workspaces, "stray")}
	doneAt := time.Now().UTC().Add(-30 * 24 * time.Hour).Truncate(time.Microsecond)
	gcDone(t, s, "gcw", true, doneAt)
	gcDone(t, s, "gcu", false, doneAt)
	for _, ws := range []struct{ dir, branch string }{{f.warned, "azolla/gcw"}, {f.unwarned, "azolla/gcu"}} {
		gitRun(t, "", "init", "-q", "-b", ws.branch, ws.dir)
		require.NoError(t, os.WriteFile(filepath.Join(ws.dir, "work.txt"), []byte("the patch\n"), 0o644))
		gitRun(t, ws.dir, "add", "-A")
		gitRun(t, ws.dir, "commit", "-q", "-m", "work")
	}
	writeFile(t, f.orphan, "notes.txt", "not azolla's\n")
	return f
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// gcDone writes objective id DONE at at, with one PATCH_DIAZOTROPH
// workorder whose pause state warns of its unpushed branch when warned.
func gcDone(t *testing.T, s store.Store, id string, warned bool, at time.Time) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.CreateObjective(ctx, &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET",
		Title: "Fix " + id, AcceptanceCriteria: []string{"it works"}, Status: domain.StatusNew, Urgency: "NORMAL",
		Repository: "/srv/" + id, CreatedAt: at, UpdatedAt: at}))
	ev, _, err := s.EmitEvent(ctx, &domain.Event{EventID: "ev-" + id, EventType: domain.EventTicketReady, SubjectID: id,
		TransitionSeq: 1, CreatedAt: at})
	require.NoError(t, err)
	require.NoError(t, s.CreateContextSnapshot(ctx, &domain.ContextSnapshot{ContextSnapshotID: "cs-" + id,
		ObjectiveID: id, FullPromptText: "Fix it", CreatedAt: at}))
	w, _, err := s.CreateWorkOrder(ctx, &domain.WorkOrder{WorkOrderID: "wo-" + id + "-1", EventID: ev.EventID,
		ObjectiveID: id, DiazotrophType: diazotroph.PatchType, ContextSnapshotID: "cs-" + id,
		BranchName: "azolla/" + id, BudgetMS: 60000, Status: domain.WorkOrderCreated, CreatedAt: at})
	require.NoError(t, err)
	_, err = s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: id, To: domain.StatusDone, Now: at})
	require.NoError(t, err)
	var keep *pause.Action
	if warned {
		keep = pause.KeepBranchAction(w.BranchName, 7*24*time.Hour)
	}
	ps := pause.RunComplete(id, 9, w.WorkOrderID, w.BranchName, keep, at)
	require.NoError(t, s.CreatePauseState(ctx, &ps))
}

func TestGC_DryRunListsWhatWouldGoAndChangesNothing(t *testing.T) {
	t.Parallel()
	f := newGCFixture(t)

	res := azolla(t, f.env, "gc", "--dry-run")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "would prune  wo-gcw-1  DONE, branch warned, ")
	require.Contains(t, res.stdout, "kept         wo-gcu-1  UNPUSHED_NOT_WARNED: branch azolla/gcu at ")
	require.Contains(t, res.stdout, "orphan       stray  NOT_A_WORKORDER: ")
	require.Contains(t, res.stdout, "gc: would prune 1 workspace (")
	require.Contains(t, res.stdout, "kept 1 (1 UNPUSHED_NOT_WARNED), 1 orphan left alone, 0 mirrors to gc, 0 errors\n")
	require.Contains(t, res.stdout, "gc: dry run, nothing was changed\n")
	for _, dir := range []string{f.warned, f.unwarned, f.orphan} {
		require.DirExists(t, dir)
	}

	res = azolla(t, f.env, "gc", "--dry-run", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var rep retention.Report
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep))
	require.True(t, rep.DryRun)
	require.Len(t, rep.Pruned, 1)
	require.Equal(t, "wo-gcw-1", rep.Pruned[0].Name)
	require.Positive(t, rep.BytesFreed)
	require.DirExists(t, f.warned)
}

func TestGC_PrunesAndReportsWhatItFreed(t *testing.T) {
	t.Parallel()
	f := newGCFixture(t)

	res := azolla(t, f.env, "gc")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "pruned       wo-gcw-1  DONE, branch warned, ")
	require.Contains(t, res.stdout, "gc: pruned 1 workspace (")
	require.NotContains(t, res.stdout, "dry run")
	require.NoDirExists(t, f.warned)
	require.DirExists(t, f.unwarned, "an unpushed branch nobody was warned about stays")
	require.FileExists(t, filepath.Join(f.orphan, "notes.txt"))

	res = azolla(t, f.env, "gc", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var rep retention.Report
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep))
	require.False(t, rep.DryRun)
	require.Empty(t, rep.Pruned, "nothing is left to prune")
	require.Equal(t, map[retention.Reason]int{retention.UnpushedNotWarned: 1}, rep.KeptBy())
	require.Len(t, rep.Orphans, 1)
}

func TestGC_AnEntryItCannotHandleExitsOne(t *testing.T) {
	t.Parallel()
	f := newGCFixture(t)
	require.NoError(t, os.RemoveAll(filepath.Join(f.unwarned, ".git")))

	res := azolla(t, f.env, "gc")
	require.Equal(t, 1, res.code, res.stdout)
	require.Contains(t, res.stdout, "error        wo-gcu-1: read branch azolla/gcu")
	require.Contains(t, res.stderr, "azolla: gc: 1 error; what they concern was left as it was")
	require.NoDirExists(t, f.warned, "the rest of the pass went on")
	require.DirExists(t, f.unwarned)

	res = azolla(t, f.env, "gc", "--output", "yaml")
	require.Equal(t, 2, res.code)
}
