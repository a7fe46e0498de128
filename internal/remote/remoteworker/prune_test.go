package remoteworker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/remote/remoteworker"
)

const (
	retention = 7 * 24 * time.Hour
	branch    = "azolla/obj-1"
)

// pruneBundle is a remote worker's git dir, its workspace records and
// pruner, on a settable clock.
type pruneBundle struct {
	dir    string
	git    gitops.Git
	mu     sync.Mutex
	now    time.Time
	ws     *remoteworker.Workspaces
	pruner *remoteworker.Pruner
}

func setupPrune(t *testing.T) *pruneBundle {
	t.Helper()
	pb := &pruneBundle{dir: t.TempDir(), now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	pb.ws = &remoteworker.Workspaces{Dir: pb.dir, Now: pb.clock}
	pb.pruner = &remoteworker.Pruner{Workspaces: pb.ws, Git: pb.git, Retention: retention}
	return pb
}

func (pb *pruneBundle) clock() time.Time {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	return pb.now
}

func (pb *pruneBundle) advance(d time.Duration) {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	pb.now = pb.now.Add(d)
}

func (pb *pruneBundle) workspace(wo string) string {
	return filepath.Join(patch.WorkspacesDir(pb.dir), wo)
}

// run makes wo's workspace as a run leaves it: a repository on branchName
// with the snapshot's commit and, when work, one more commit; it is
// recorded as PATCH_DIAZOTROPH's runs are. It returns the snapshot's
// commit and the branch's head.
func (pb *pruneBundle) run(t *testing.T, wo, branchName string, work bool) (base, head string) {
	t.Helper()
	ctx := context.Background()
	end := pb.ws.Begin(wo, branch, "")
	ws := pb.workspace(wo)
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, pb.git.Init(ctx, ws, branchName))
	author := gitops.Author{Name: "azolla", Email: "azolla@example.invalid"}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README"), []byte("base\n"), 0o644))
	base, err := pb.git.Commit(ctx, ws, author, "base")
	require.NoError(t, err)
	head = base
	if work {
		require.NoError(t, os.WriteFile(filepath.Join(ws, "README"), []byte("work\n"), 0o644))
		head, err = pb.git.Commit(ctx, ws, author, "work")
		require.NoError(t, err)
	}
	end()
	// Recorded again, now that the base is known, as Diazotrophs records it.
	pb.ws.Begin(wo, branch, base)()
	return base, head
}

// pushed writes wo's push marker for commit, as PATCH_DIAZOTROPH does
// after a push.
func (pb *pruneBundle) pushed(t *testing.T, wo, commit string) {
	t.Helper()
	b, err := json.Marshal(patch.Pushed{WorkOrderID: wo, BranchName: branch, CommitSHA: commit, PushedAt: pb.clock()})
	require.NoError(t, err)
	path := patch.PushMarker(pb.dir, wo)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func (pb *pruneBundle) runOnce(t *testing.T) remoteworker.PruneCounts {
	t.Helper()
	c, err := pb.pruner.RunOnce(context.Background())
	require.NoError(t, err)
	return c
}

func TestPruner_RemovesOldFinishedWorkspacesWithNothingToLose(t *testing.T) {
	t.Parallel()
	pb := setupPrune(t)
	_, head := pb.run(t, "wo-pushed", branch, true)
	pb.pushed(t, "wo-pushed", head)
	pb.run(t, "wo-unpushed", branch, true)
	_, stale := pb.run(t, "wo-pushed-then-moved", branch, true)
	pb.pushed(t, "wo-pushed-then-moved", stale+"0") // names another commit than the branch's
	pb.run(t, "wo-no-work", branch, false)
	pb.run(t, "wo-no-branch", "main", true)
	// Not this worker's: no record.
	require.NoError(t, os.MkdirAll(pb.workspace("wo-other"), 0o755))
	// An unfinished clone of a workspace that goes, and one of one that stays.
	require.NoError(t, os.MkdirAll(filepath.Join(patch.WorkspacesDir(pb.dir), ".wo-pushed.tmp-123"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(patch.WorkspacesDir(pb.dir), ".wo-unpushed.tmp-456"), 0o755))

	c := pb.runOnce(t)
	require.Equal(t, remoteworker.PruneCounts{Retained: 5}, c, "nothing goes before the retention")

	pb.advance(retention)
	c = pb.runOnce(t)
	require.Equal(t, 3, c.Pruned)
	require.Equal(t, 2, c.Unpushed)
	require.Zero(t, c.Errors)
	require.Positive(t, c.BytesFreed)
	for _, gone := range []string{"wo-pushed", "wo-no-work", "wo-no-branch", ".wo-pushed.tmp-123"} {
		require.NoDirExists(t, pb.workspace(gone))
	}
	for _, kept := range []string{"wo-unpushed", "wo-pushed-then-moved", "wo-other", ".wo-unpushed.tmp-456"} {
		require.DirExists(t, pb.workspace(kept))
	}
	_, ok, err := patch.ReadPushed(pb.dir, "wo-pushed")
	require.NoError(t, err)
	require.False(t, ok, "the marker goes with its workspace")

	// Kept however old; the pruned are not counted again.
	pb.advance(10 * retention)
	c = pb.runOnce(t)
	require.Equal(t, remoteworker.PruneCounts{Unpushed: 2}, c)
}

func TestPruner_NeverRemovesAWorkspaceInUse(t *testing.T) {
	t.Parallel()
	pb := setupPrune(t)
	_, head := pb.run(t, "wo-1", branch, true)
	pb.pushed(t, "wo-1", head)
	pb.advance(retention)

	end := pb.ws.Begin("wo-1", branch, "") // a retry runs in it again
	pb.advance(retention)
	require.Equal(t, remoteworker.PruneCounts{InUse: 1}, pb.runOnce(t))
	end()
	require.Equal(t, remoteworker.PruneCounts{Retained: 1}, pb.runOnce(t), "retention counts from the end of the retry")
	pb.advance(retention)
	require.Equal(t, 1, pb.runOnce(t).Pruned)
	require.NoDirExists(t, pb.workspace("wo-1"))
}

func TestPruner_AgesAnInterruptedRunFromItsStart(t *testing.T) {
	t.Parallel()
	pb := setupPrune(t)
	base, _ := pb.run(t, "wo-1", branch, false)
	pb.advance(retention)
	pb.ws.Begin("wo-1", branch, base) // a retry, and the worker dies during it
	restarted := &remoteworker.Workspaces{Dir: pb.dir, Now: pb.clock}
	pb.pruner = &remoteworker.Pruner{Workspaces: restarted, Git: pb.git, Retention: retention}

	require.Equal(t, remoteworker.PruneCounts{Retained: 1}, pb.runOnce(t))
	pb.advance(retention)
	require.Equal(t, 1, pb.runOnce(t).Pruned)
}

func TestPruner_ForgetsRecordsOfWorkspacesAlreadyGone(t *testing.T) {
	t.Parallel()
	pb := setupPrune(t)
	pb.run(t, "wo-1", branch, true)
	require.NoError(t, os.RemoveAll(pb.workspace("wo-1")))
	pb.advance(retention)
	require.Equal(t, remoteworker.PruneCounts{Forgotten: 1}, pb.runOnce(t))
	require.Equal(t, remoteworker.PruneCounts{}, pb.runOnce(t))
}

func TestPruner_RefusesAPassWithoutAbsoluteDirOrRetention(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]*remoteworker.Pruner{
		"relative dir": {Workspaces: &remoteworker.Workspaces{Dir: "git"}, Retention: retention},
		"no retention": {Workspaces: &remoteworker.Workspaces{Dir: t.TempDir()}},
	} {
		_, err := p.RunOnce(context.Background())
		require.Error(t, err, name)
	}
}

func TestPruner_StartPassesUntilStopped(t *testing.T) {
	t.Parallel()
	pb := setupPrune(t)
	_, head := pb.run(t, "wo-1", branch, true)
	pb.pushed(t, "wo-1", head)
	pb.advance(retention)
	pb.pruner.Interval = 10 * time.Millisecond
	pb.pruner.Start(context.Background())
	defer pb.pruner.Stop()
	waitFor(t, "the workspace pruned", func() bool {
		_, err := os.Stat(pb.workspace("wo-1"))
		return os.IsNotExist(err)
	})
}

// patchStub stands for PATCH_DIAZOTROPH: while it runs, it has the
// pruner make a pass and reports the workorder it ran and the pass.
type patchStub struct {
	pruner *remoteworker.Pruner
	seen   chan stubRun
}

type stubRun struct {
	workOrderID string
	during      remoteworker.PruneCounts
}

func (patchStub) Type() string { return diazotroph.PatchType }

func (s patchStub) Execute(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
	c, err := s.pruner.RunOnce(ctx)
	if err != nil {
		return diazotroph.Result{}, err
	}
	s.seen <- stubRun{workOrderID: req.WorkOrder.WorkOrderID, during: c}
	return diazotroph.Result{Title: "t", Content: "c", RunnerStatus: "OK"}, nil
}

func TestDiazotrophs_RecordsThePatchWorkspaceItRunsAndKeepsItInUse(t *testing.T) {
	t.Parallel()
	pb := setupPrune(t)
	stub := patchStub{pruner: pb.pruner, seen: make(chan stubRun, 1)}
	exec := &remoteworker.Diazotrophs{Registry: diazotroph.NewRegistry(stub), Workspaces: pb.ws}
	_, err := exec.Execute(context.Background(), workPayload(t, diazotroph.PatchType))
	require.NoError(t, err)
	got := recv(t, stub.seen, "the run")
	require.Equal(t, "wo-obj-1-1", got.workOrderID)
	require.Equal(t, remoteworker.PruneCounts{InUse: 1}, got.during)

	// Recorded: the workspace of the run, once old and with no branch, goes.
	require.NoError(t, os.MkdirAll(pb.workspace("wo-obj-1-1"), 0o755))
	require.NoError(t, pb.git.Init(context.Background(), pb.workspace("wo-obj-1-1"), "main"))
	require.Equal(t, remoteworker.PruneCounts{Retained: 1}, pb.runOnce(t))
	pb.advance(retention)
	require.Equal(t, 1, pb.runOnce(t).Pruned)
}
