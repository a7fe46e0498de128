package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/remote/controlplane"
)

const remoteToken = "tok-cli-3c1d-secret"

// remoteControlPlane serves one COMMAND_DIAZOTROPH job, records its
// completion, then refuses the worker (401) so that the command returns.
func remoteControlPlane(t *testing.T) (*httptest.Server, func() []controlplane.CompleteRequest) {
	t.Helper()
	payload, err := json.Marshal(controlplane.NewWorkPayload(diazotroph.Request{
		WorkOrder: domain.WorkOrder{WorkOrderID: "wo-obj-1-1", ObjectiveID: "obj-1", DiazotrophType: diazotroph.CommandType,
			ContextSnapshotID: "snap-1", BranchName: "azolla/obj-1/1", BudgetMS: 20000},
		Snapshot:  domain.ContextSnapshot{ContextSnapshotID: "snap-1", ObjectiveID: "obj-1", FullPromptText: "prompt"},
		Objective: domain.Objective{ObjectiveID: "obj-1"},
		Budget:    20 * time.Second,
	}))
	require.NoError(t, err)
	var mu sync.Mutex
	claims := 0
	var completes []controlplane.CompleteRequest
	reply := func(w http.ResponseWriter, status int, v any) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+controlplane.PathClaim, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		claims++
		n := claims
		mu.Unlock()
		if n > 1 || r.Header.Get("Authorization") != "Bearer "+remoteToken {
			reply(w, http.StatusUnauthorized, controlplane.ErrorResponse{Error: controlplane.ErrorBody{
				Code: controlplane.CodeUnauthenticated, Message: "token revoked"}})
			return
		}
		reply(w, http.StatusOK, controlplane.ClaimResponse{Claimed: true, JobID: "job-1", AttemptID: "attempt-1",
			LeaseToken: "lease-1", Stream: &controlplane.StreamRef{Name: "command", MessageID: "1-0"},
			Payload: payload, LeaseTTLSeconds: 60, HeartbeatIntervalSeconds: 20})
	})
	mux.HandleFunc("POST "+controlplane.PathComplete, func(w http.ResponseWriter, r *http.Request) {
		var c controlplane.CompleteRequest
		require.NoError(t, json.NewDecoder(r.Body).Decode(&c))
		mu.Lock()
		completes = append(completes, c)
		mu.Unlock()
		reply(w, http.StatusOK, controlplane.CompleteResponse{OK: true, Ack: true})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, func() []controlplane.CompleteRequest {
		mu.Lock()
		defer mu.Unlock()
		return completes
	}
}

func TestRemoteWorker_RunsAJobWithTheConfiguredCommand(t *testing.T) {
	t.Parallel()
	srv, completes := remoteControlPlane(t)
	dir := t.TempDir()
	tf := writeFile(t, dir, "token", remoteToken+"\n")
	r := azolla(t, map[string]string{"AZOLLA_WORKER_ID": "w1"}, "remote-worker", "--data-dir", dir,
		"--control-plane", srv.URL, "--token-file", tf, "--max-wait", "1s")

	require.Equal(t, exitFailure, r.code, r.stderr)
	require.Equal(t, "remote worker w1: control plane "+srv.URL+", streams command,manifest,patch,triage\n", r.stdout)
	require.Contains(t, r.stderr, controlplane.CodeUnauthenticated)
	require.NotContains(t, r.stderr, remoteToken)
	cs := completes()
	require.Len(t, cs, 1)
	var res controlplane.WorkResult
	require.NoError(t, json.Unmarshal(cs[0].Result, &res))
	// config.DefaultCommand names the workorder, then echoes the prompt.
	require.Equal(t, "azolla: objective obj-1, workorder wo-obj-1-1\nprompt", res.Content)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
}

func TestRemoteWorker_RefusesWhatItCannotRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tf := writeFile(t, dir, "token", remoteToken)
	base := []string{"remote-worker", "--data-dir", dir, "--control-plane", "http://127.0.0.1:1", "--token-file", tf}
	for name, tc := range map[string]struct {
		args []string
		env  map[string]string
		want string
	}{
		"no worker id":      {nil, nil, "--worker-id or $AZOLLA_WORKER_ID"},
		"stream not run":    {[]string{"--worker-id", "w", "--streams", "patch,review"}, nil, `runs no REVIEW_DIAZOTROPH for stream "review"`},
		"invalid stream":    {[]string{"--worker-id", "w", "--streams", "Patch"}, nil, "invalid stream name"},
		"max wait too long": {[]string{"--worker-id", "w", "--max-wait", "31s"}, nil, "--max-wait 31s"},
		"empty token":       {[]string{"--worker-id", "w", "--token-file", writeFile(t, dir, "empty", "\n")}, nil, "is empty"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := azolla(t, tc.env, append(append([]string{}, base...), tc.args...)...)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
			require.Empty(t, r.stdout)
		})
	}
	r := azolla(t, nil, "remote-worker", "--worker-id", "w")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "--control-plane is required")
	// Only azolla dev's control plane (http on loopback) takes no token.
	for _, url := range []string{"http://10.1.2.3:7350", "https://127.0.0.1:7350", "http://cp.example:7350"} {
		r = azolla(t, nil, "remote-worker", "--data-dir", dir, "--worker-id", "w", "--control-plane", url)
		require.Equal(t, exitUsage, r.code, url)
		require.Contains(t, r.stderr, "--token-file is required", url)
	}
}

func TestRemoteWorker_PrunesItsGitDirByThePatchSettings(t *testing.T) {
	t.Parallel()
	cfg := config.DefaultFor(func(string) string { return "" })
	cfg.Patch.GitDir, cfg.Patch.Retention, cfg.Patch.GCInterval = "git", 48*time.Hour, 2*time.Hour
	p, err := remotePruner(cfg, nil)
	require.NoError(t, err)
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(wd, "git"), p.Workspaces.Dir, "an absolute git dir")
	require.Equal(t, 48*time.Hour, p.Retention)
	require.Equal(t, 2*time.Hour, p.Interval)
}
