package retention_test

import (
	"context"
	"fmt"
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
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/maintenance/retention"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// TestMain keeps the user's git configuration out of every git run.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "azolla-retention-home-")
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

const week = 7 * 24 * time.Hour

// t0 is when every objective of a test was created.
var t0 = storetest.T0

// testBundle is an upstream repository, a bare remote, PATCH_DIAZOTROPH on
// a git dir, a SQLite store and a Pruner on them with a settable clock.
type testBundle struct {
	root, repo, remote, gitDir string
	// outside is a directory beside the git dir that must survive.
	outside string
	// pushTo is the push remote of runs made while it is set.
	pushTo string
	st     store.Store
	p      *patch.Patch
	now    time.Time
	pr     *retention.Pruner
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	root := t.TempDir()
	tb := &testBundle{root: root, repo: filepath.Join(root, "upstream"), remote: filepath.Join(root, "remote.git"),
		gitDir: filepath.Join(root, "git"), outside: filepath.Join(root, "outside"), st: storetest.NewSQLite(t),
		now: t0}
	require.NoError(t, os.MkdirAll(tb.repo, 0o755))
	git(t, tb.repo, "init", "-q", "-b", "main")
	write(t, tb.repo, "greet.sh", "#!/bin/sh\necho hello\n")
	git(t, tb.repo, "add", "-A")
	git(t, tb.repo, "commit", "-q", "-m", "initial")
	git(t, root, "init", "-q", "--bare", tb.remote)
	write(t, tb.outside, "precious.txt", "keep me\n")

	tb.p = patch.New(patch.Options{Dir: tb.gitDir, Default: "static",
		Generators: map[string]patchgen.Generator{"static": patchgen.NewStatic()},
		Author:     gitops.Author{Name: "Azolla Test", Email: "azolla-test@example.com"},
		Policy:     gitops.PatchPolicy{MaxBytes: 1 << 20},
		Settings:   func(string) patch.Settings { return patch.Settings{PushRemote: tb.pushTo} }})
	tb.pr = &retention.Pruner{Store: tb.st, Dir: tb.gitDir, Retention: week, Interval: time.Hour,
		Now: func() time.Time { return tb.now }}
	return tb
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

// greetPatch changes greet.sh to say word.
func greetPatch(word string) string {
	return fmt.Sprintf(`diff --git a/greet.sh b/greet.sh
--- a/greet.sh
+++ b/greet.sh
@@ -1,2 +1,2 @@
 #!/bin/sh
-echo hello
+echo %s
`, word)
}

// objective writes objective id, TODO, on the upstream repository.
func (tb *testBundle) objective(t *testing.T, id string) {
	t.Helper()
	o := storetest.Objective(id)
	o.Repository, o.BaseBranch, o.Generator = tb.repo, "main", "static"
	require.NoError(t, tb.st.CreateObjective(context.Background(), o))
	tb.transition(t, id, domain.StatusTodo, t0)
}

func (tb *testBundle) transition(t *testing.T, id string, to domain.Status, at time.Time) {
	t.Helper()
	_, err := tb.st.TransitionObjective(context.Background(), store.TransitionObjectiveParams{ObjectiveID: id, To: to,
		Now: at})
	require.NoError(t, err)
}

// attempt writes workorder n of objective id, created at created, and runs
// it through PATCH_DIAZOTROPH with patchText: a real workspace, a commit
// when the patch applies, a push when tb.pushTo is set.
func (tb *testBundle) attempt(t *testing.T, id string, n int, created time.Time, patchText string) *domain.WorkOrder {
	t.Helper()
	ctx := context.Background()
	wo := fmt.Sprintf("wo-%s-%d", id, n)
	ev, _, err := tb.st.EmitEvent(ctx, storetest.Event("ev-"+wo, id, int64(10+n), created))
	require.NoError(t, err)
	target, err := tb.p.Resolve(ctx, tb.repo, "main")
	require.NoError(t, err)
	snap := &domain.ContextSnapshot{ContextSnapshotID: "cs-" + wo, ObjectiveID: id, FullPromptText: "Greet",
		Metadata: domain.SnapshotMetadata{CommitSHA: target.CommitSHA, BaseBranch: "main"}, CreatedAt: created}
	require.NoError(t, tb.st.CreateContextSnapshot(ctx, snap))
	w, _, err := tb.st.CreateWorkOrder(ctx, &domain.WorkOrder{WorkOrderID: wo, EventID: ev.EventID, ObjectiveID: id,
		DiazotrophType: diazotroph.PatchType, ContextSnapshotID: snap.ContextSnapshotID, BranchName: "azolla/" + id,
		BudgetMS: 60000, Status: domain.WorkOrderCreated, CreatedAt: created})
	require.NoError(t, err)

	o, err := tb.st.GetObjective(ctx, id)
	require.NoError(t, err)
	o.Patch = patchText
	_, err = tb.p.Execute(ctx, diazotroph.Request{Objective: *o, WorkOrder: *w, Snapshot: *snap, Budget: time.Minute})
	require.NoError(t, err)
	require.DirExists(t, tb.workspace(wo))
	return w
}

// gated writes w's verdict at at and its pause state, warning of the
// unpushed branch when warned (as the gate does for an Unpushed verdict).
func (tb *testBundle) gated(t *testing.T, w *domain.WorkOrder, result string, warned bool, at time.Time) {
	t.Helper()
	ctx := context.Background()
	_, err := tb.st.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: w.WorkOrderID, ObjectiveID: w.ObjectiveID,
		GateResult: result, GateReason: "checked", CreatedAt: at, UpdatedAt: at})
	require.NoError(t, err)
	var keep *pause.Action
	if warned {
		keep = pause.KeepBranchAction(w.BranchName, week)
	}
	earlier, err := tb.st.ListPauseStates(ctx, w.ObjectiveID)
	require.NoError(t, err)
	seq := int64(100 + len(earlier)) // one pause state per verdict
	ps := pause.GateFailed(w.ObjectiveID, seq, w.WorkOrderID, "gate command failed", keep, nil, at)
	if result == domain.GatePass {
		ps = pause.RunComplete(w.ObjectiveID, seq, w.WorkOrderID, w.BranchName, keep, at)
	}
	require.NoError(t, tb.st.CreatePauseState(ctx, &ps))
}

// done runs objective id to DONE at at with one passing workorder.
func (tb *testBundle) done(t *testing.T, id string, warned bool, at time.Time) *domain.WorkOrder {
	t.Helper()
	tb.objective(t, id)
	w := tb.attempt(t, id, 1, t0, greetPatch("hello, "+id))
	tb.gated(t, w, domain.GatePass, warned, at)
	tb.transition(t, id, domain.StatusDone, at)
	return w
}

func (tb *testBundle) workspace(name string) string {
	return filepath.Join(patch.WorkspacesDir(tb.gitDir), name)
}

// looseObjects is the number of objects outside packs in repository dir.
func looseObjects(t *testing.T, dir string) string {
	t.Helper()
	for line := range strings.Lines(git(t, dir, "count-objects", "-v")) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "count: "); ok {
			return v
		}
	}
	t.Fatalf("count-objects in %s printed no count", dir)
	return ""
}

// byName indexes report entries by their name.
func byName(entries []retention.Entry) map[string]retention.Entry {
	out := map[string]retention.Entry{}
	for _, e := range entries {
		out[e.Name] = e
	}
	return out
}
