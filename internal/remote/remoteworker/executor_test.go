package remoteworker_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/remoteworker"
)

func commandExecutor(t *testing.T, run string) *remoteworker.Diazotrophs {
	t.Helper()
	return &remoteworker.Diazotrophs{Registry: diazotroph.NewRegistry(diazotroph.NewCommand(diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}),
		Run: run, Dir: filepath.Join(t.TempDir(), "command")}))}
}

func workPayload(t *testing.T, typ string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(controlplane.NewWorkPayload(diazotroph.Request{
		WorkOrder: domain.WorkOrder{WorkOrderID: "wo-obj-1-1", ObjectiveID: "obj-1", DiazotrophType: typ,
			ContextSnapshotID: "snap-1", BranchName: "azolla/obj-1/1", BudgetMS: 20000, Status: domain.WorkOrderCreated},
		Snapshot:  domain.ContextSnapshot{ContextSnapshotID: "snap-1", ObjectiveID: "obj-1", FullPromptText: "the prompt\n"},
		Objective: domain.Objective{ObjectiveID: "obj-1", Title: "Say hello"},
		Budget:    20 * time.Second,
	}))
	require.NoError(t, err)
	return b
}

func TestDiazotrophs_CommandJobEndToEnd(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.offerJob(workPayload(t, diazotroph.CommandType), 30, 10)
	exec := commandExecutor(t, `echo "workorder $AZOLLA_WORK_ORDER_ID on $AZOLLA_BRANCH_NAME"; cat`)
	// No streams given: the registry's.
	h := start(t, cp, exec, remoteworker.Options{Streams: []string{}})
	require.Equal(t, []string{"command"}, h.w.Streams())

	waitFor(t, "the completion", func() bool { return cp.count(controlplane.PathComplete) == 1 })
	c := requests[controlplane.CompleteRequest](cp, controlplane.PathComplete)[0]
	var res controlplane.WorkResult
	dec := json.NewDecoder(strings.NewReader(string(c.Result)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&res))
	require.Equal(t, "workorder wo-obj-1-1 on azolla/obj-1/1\nthe prompt\n", res.Content)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Equal(t, "azolla/obj-1/1", res.Metadata.BranchName)
	require.NotEmpty(t, res.Title)
	require.NotContains(t, res.Title, "\n")
	require.Contains(t, res.Notes, "exited 0")
	require.Zero(t, cp.count(controlplane.PathFail))
	require.Equal(t, []string{"command"}, requests[controlplane.ClaimRequest](cp, controlplane.PathClaim)[0].Streams)
}

func TestDiazotrophs_RefusedHeartbeatKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cp := newFakeCP(t)
	cp.offerJob(workPayload(t, diazotroph.CommandType), 3, 1)
	cp.handle(controlplane.PathHeartbeat, func(int) reply { return apiErr(http.StatusConflict, controlplane.CodeLeaseLost) })
	// A grandchild in the command's process group, which outlives the
	// shell unless the group is killed.
	exec := commandExecutor(t, `sleep 300 & echo $! > `+pidFile+`; wait`)
	start(t, cp, exec, remoteworker.Options{})

	waitFor(t, "the command to start", func() bool { b, err := os.ReadFile(pidFile); return err == nil && len(b) > 0 })
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	waitFor(t, "the next claim", func() bool { return cp.count(controlplane.PathClaim) >= 2 })
	waitFor(t, "the grandchild to be gone", func() bool { return gone(pid) })
	require.Zero(t, cp.count(controlplane.PathComplete)+cp.count(controlplane.PathFail))
}

// gone reports whether pid is no longer a live process (a zombie waiting
// for a reaper that may not be there counts as gone).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestDiazotrophs_FailsWhatItCannotRun(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		payload   json.RawMessage
		run       string
		code      string
		retryable bool
	}{
		"not a payload":   {json.RawMessage(`{"work_order":{},"extra":1}`), "true", remoteworker.CodeInvalidPayload, false},
		"invalid payload": {json.RawMessage(`{"budget_ms":0}`), "true", remoteworker.CodeInvalidPayload, false},
		"type not run here": {workPayload(t, "TRIAGE_DIAZOTROPH"), "true", remoteworker.CodeUnknownDiazotroph,
			false},
		"diazotroph error": {workPayload(t, diazotroph.CommandType), " ", remoteworker.CodeDiazotrophError, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cp := newFakeCP(t)
			cp.offerJob(tc.payload, 30, 10)
			start(t, cp, commandExecutor(t, tc.run), remoteworker.Options{})
			waitFor(t, "the failure", func() bool { return cp.count(controlplane.PathFail) == 1 })
			f := requests[controlplane.FailRequest](cp, controlplane.PathFail)[0]
			require.Equal(t, tc.code, f.Error.Code, f.Error.Message)
			require.Equal(t, tc.retryable, f.Error.Retryable)
			require.Zero(t, cp.count(controlplane.PathComplete))
		})
	}
}
