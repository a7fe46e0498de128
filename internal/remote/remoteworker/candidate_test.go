package remoteworker_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/remoteworker"
	"github.com/azolla/azolla/internal/strictjson"
)

// fakeCandidates runs a candidate as told, recording what it was asked.
type fakeCandidates struct {
	dir string
	out patch.Candidate
	err error

	mu     sync.Mutex
	asked  []int
	req    diazotroph.Request
	inUse  bool
	during func()
}

func (f *fakeCandidates) RunCandidate(_ context.Context, req diazotroph.Request, k int) (patch.Candidate, error) {
	f.mu.Lock()
	f.asked, f.req = append(f.asked, k), req
	f.mu.Unlock()
	if f.during != nil {
		f.during()
	}
	return f.out, f.err
}

func (f *fakeCandidates) CandidateWorkspace(workOrderID string, k int) string {
	return filepath.Join(patch.WorkspacesDir(f.dir), workOrderID+"-c"+string(rune('0'+k)))
}

// candidatePayload is candidate k of a PATCH_DIAZOTROPH workorder of an
// objective with attempts.
func candidatePayload(t *testing.T, typ string, attempts, k int) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(controlplane.NewCandidatePayload(diazotroph.Request{
		WorkOrder: domain.WorkOrder{WorkOrderID: "wo-obj-1-1", ObjectiveID: "obj-1", DiazotrophType: typ,
			ContextSnapshotID: "snap-1", BranchName: "azolla/obj-1", BudgetMS: 20000, Status: domain.WorkOrderCreated},
		Snapshot: domain.ContextSnapshot{ContextSnapshotID: "snap-1", ObjectiveID: "obj-1", FullPromptText: "the prompt\n",
			Metadata: domain.SnapshotMetadata{CommitSHA: "0123456789abcdef0123456789abcdef01234567"}},
		Objective: domain.Objective{ObjectiveID: "obj-1", Title: "Say hello", Attempts: &attempts},
		Budget:    20 * time.Second,
	}, k))
	require.NoError(t, err)
	return b
}

func TestDiazotrophs_CandidateJobReturnsTheCandidatesFigures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cost := 0.5
	f := &fakeCandidates{dir: dir, out: patch.Candidate{Attempt: 2, Generator: "command", RunnerStatus: domain.RunnerOK,
		Patch: "diff --git a/x b/x\n+hunter2-secret\n", DiffLines: 1, CommandsPassed: 1,
		Gate:   []patch.GateResult{{Command: "make test", Passed: true}, {Command: "make lint", Detail: "said hunter2-secret"}},
		Report: &domain.RunReport{CostUSD: &cost, Summary: "used hunter2-secret"},
		Notes:  "notes", Branch: "azolla/obj-1/c2", Workspace: "/somewhere", CommitSHA: "abc",
		FinishedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))}}
	ws := &remoteworker.Workspaces{Dir: dir}
	f.during = func() {
		rec, err := os.ReadFile(filepath.Join(dir, "remote-worker", "wo-obj-1-1-c2.json"))
		f.mu.Lock()
		defer f.mu.Unlock()
		f.inUse = err == nil && strings.Contains(string(rec), `"candidate":2`)
	}
	exec := &remoteworker.Diazotrophs{Registry: diazotroph.NewRegistry(), Candidates: f, Workspaces: ws,
		Redact: redact.New(redact.Secret{Name: "API key", Value: "hunter2-secret"})}

	out, err := exec.Execute(context.Background(), candidatePayload(t, diazotroph.PatchType, 3, 2))
	require.NoError(t, err)
	var res controlplane.CandidateWorkResult
	require.NoError(t, strictjson.Decode(strings.NewReader(string(out)), &res))
	require.NoError(t, res.Validate(2))
	require.Equal(t, []int{2}, f.asked)
	require.Equal(t, "wo-obj-1-1", f.req.WorkOrder.WorkOrderID)
	require.Equal(t, 20*time.Second, f.req.Budget)
	require.True(t, f.inUse, "the candidate's workspace is recorded, as the candidate's, while it runs")
	require.Equal(t, "command", res.Generator)
	require.Equal(t, time.Date(2026, 1, 2, 2, 4, 5, 0, time.UTC), res.FinishedAt)
	require.Len(t, res.Gate, 2)
	require.True(t, res.Gate[0].Passed)
	require.NotContains(t, string(out), "hunter2-secret", "the worker's secrets are redacted everywhere")
	require.Contains(t, res.Patch, redact.Mark("API key"))
	require.NotContains(t, string(out), "/somewhere", "the workspace stays on the worker")
}

func TestDiazotrophs_CandidateJobsItCannotRunFail(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		payload    json.RawMessage
		candidates bool
		runErr     error
		code       string
		retryable  bool
	}{
		"a negative candidate":    {json.RawMessage(`{"candidate":-1}`), true, nil, remoteworker.CodeInvalidPayload, false},
		"candidate 4 of 3":        {candidatePayload(t, diazotroph.PatchType, 3, 4), true, nil, remoteworker.CodeInvalidPayload, false},
		"one attempt":             {candidatePayload(t, diazotroph.PatchType, 1, 1), true, nil, remoteworker.CodeInvalidPayload, false},
		"not a patch workorder":   {candidatePayload(t, diazotroph.CommandType, 3, 1), true, nil, remoteworker.CodeUnknownDiazotroph, false},
		"no candidates here":      {candidatePayload(t, diazotroph.PatchType, 3, 1), false, nil, remoteworker.CodeUnknownDiazotroph, false},
		"the run could not start": {candidatePayload(t, diazotroph.PatchType, 3, 1), true, errors.New("no generator"), remoteworker.CodeDiazotrophError, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := &fakeCandidates{dir: t.TempDir(), err: tc.runErr, out: patch.Candidate{Generator: "command",
				RunnerStatus: domain.RunnerOK, FinishedAt: time.Now()}}
			exec := &remoteworker.Diazotrophs{Registry: diazotroph.NewRegistry()}
			if tc.candidates {
				exec.Candidates = f
			}
			_, err := exec.Execute(context.Background(), tc.payload)
			var fl *remoteworker.Failure
			require.ErrorAs(t, err, &fl)
			require.Equal(t, tc.code, fl.Code, "%v", err)
			require.Equal(t, tc.retryable, fl.Retryable)
			if tc.runErr == nil {
				require.Empty(t, f.asked, "nothing ran")
			}
		})
	}
}

// A candidate's branch is never pushed: its workspace is pruned after the
// retention all the same, the patch having gone with the job's result.
func TestPruner_RemovesAnOldCandidatesWorkspaceWithItsUnpushedBranch(t *testing.T) {
	t.Parallel()
	pb := setupPrune(t)
	ctx := context.Background()
	ws := pb.workspace("wo-1-c2")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, pb.git.Init(ctx, ws, "azolla/obj-1/c2"))
	author := gitops.Author{Name: "azolla", Email: "azolla@example.invalid"}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README"), []byte("base\n"), 0o644))
	base, err := pb.git.Commit(ctx, ws, author, "base")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README"), []byte("work\n"), 0o644))
	_, err = pb.git.Commit(ctx, ws, author, "work")
	require.NoError(t, err)
	pb.ws.BeginCandidate("wo-1-c2", "azolla/obj-1/c2", base, 2)()
	pb.run(t, "wo-1", branch, true) // the workorder's own unpushed work is kept

	require.Equal(t, remoteworker.PruneCounts{Retained: 2}, pb.runOnce(t))
	pb.advance(retention)
	c := pb.runOnce(t)
	require.Equal(t, 1, c.Pruned)
	require.Equal(t, 1, c.Unpushed)
	require.NoDirExists(t, ws)
	require.DirExists(t, pb.workspace("wo-1"))
}
