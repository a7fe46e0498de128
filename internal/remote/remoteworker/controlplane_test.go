package remoteworker_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/controlplane/dbqueue"
	"github.com/azolla/azolla/internal/remote/remoteworker"
	"github.com/azolla/azolla/internal/store/dial"
)

// realCP is the control plane itself (Service and Router, token
// authentication) over a SQLite store and the database transport.
type realCP struct {
	st  controlplane.Store
	svc *controlplane.Service
	url string
}

func newRealCP(t *testing.T, workerID string) (*realCP, string) {
	t.Helper()
	ctx := t.Context()
	s, err := dial.Open(ctx, dial.Config{Driver: dial.SQLite, SQLitePath: filepath.Join(t.TempDir(), "azolla.db")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = s.Migrate(ctx)
	require.NoError(t, err)
	st, ok := s.(controlplane.Store)
	require.True(t, ok, "the store is a control plane's store")

	cfg := controlplane.Config{LeaseTTL: 3 * time.Second, HeartbeatInterval: time.Second, MaxWait: time.Second,
		Log: slog.New(slog.DiscardHandler)}
	tr, err := dbqueue.New(st, dbqueue.Options{LeaseTTL: cfg.LeaseTTL, PollInterval: 20 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Close() })
	svc := controlplane.New(st, tr, nil, nil, cfg)

	token, hash, err := controlplane.GenerateWorkerToken()
	require.NoError(t, err)
	require.NoError(t, st.CreateWorkerToken(ctx, &domain.WorkerToken{WorkerID: workerID, TokenHash: hash,
		CreatedAt: time.Now().UTC()}))
	srv := httptest.NewServer(svc.Router(controlplane.TokenAuthenticator{Tokens: st}))
	t.Cleanup(srv.Close)
	return &realCP{st: st, svc: svc, url: srv.URL}, tokenFile(t, token+"\n", 0o600)
}

func (cp *realCP) enqueue(t *testing.T, payload json.RawMessage) *domain.Job {
	t.Helper()
	j, err := cp.svc.Enqueue(t.Context(), controlplane.EnqueueParams{JobType: diazotroph.CommandType,
		Stream: controlplane.StreamFor(diazotroph.CommandType), Payload: payload, WorkOrderID: "wo-obj-1-1"})
	require.NoError(t, err)
	return j
}

func (cp *realCP) job(t *testing.T, id string) *domain.Job {
	t.Helper()
	j, err := cp.st.GetJob(context.Background(), id)
	require.NoError(t, err)
	return j
}

// runWorker runs a worker until the test ends; the function it returns
// waits for Run to return by itself and gives its error.
func runWorker(t *testing.T, o remoteworker.Options) func() error {
	t.Helper()
	w, err := remoteworker.New(o)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return func() error {
		recv(t, done, "the worker to stop")
		return runErr
	}
}

func TestAgainstTheControlPlane_CommandJobSucceeds(t *testing.T) {
	t.Parallel()
	cp, tf := newRealCP(t, "remote-1")
	j := cp.enqueue(t, workPayload(t, diazotroph.CommandType))
	runWorker(t, remoteworker.Options{ControlPlaneURL: cp.url, TokenFile: tf, WorkerID: "remote-1",
		Executor: commandExecutor(t, `echo "ran $AZOLLA_WORK_ORDER_ID"`), MaxWait: time.Second})

	waitFor(t, "the job to succeed", func() bool { return cp.job(t, j.JobID).Status == domain.JobSucceeded })
	var res controlplane.WorkResult
	require.NoError(t, json.Unmarshal(cp.job(t, j.JobID).Result, &res))
	require.Equal(t, "ran wo-obj-1-1\n", res.Content)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
}

func TestAgainstTheControlPlane_FailureIsRequeued(t *testing.T) {
	t.Parallel()
	cp, tf := newRealCP(t, "remote-1")
	j := cp.enqueue(t, workPayload(t, diazotroph.CommandType))
	// An empty command: the diazotroph produces no result, retryably.
	runWorker(t, remoteworker.Options{ControlPlaneURL: cp.url, TokenFile: tf, WorkerID: "remote-1",
		Executor: commandExecutor(t, " "), MaxWait: time.Second})

	waitFor(t, "the failed attempt", func() bool {
		got := cp.job(t, j.JobID)
		return got.AttemptCount == 1 && got.Status == domain.JobQueued && got.Error != nil
	})
	got := cp.job(t, j.JobID)
	require.Equal(t, remoteworker.CodeDiazotrophError, got.Error.Code)
	require.True(t, got.Error.Retryable)
}

func TestAgainstTheControlPlane_AnotherWorkersNameIsRefused(t *testing.T) {
	t.Parallel()
	cp, tf := newRealCP(t, "remote-1")
	wait := runWorker(t, remoteworker.Options{ControlPlaneURL: cp.url, TokenFile: tf, WorkerID: "remote-2",
		Executor: commandExecutor(t, "true"), MaxWait: time.Second})
	err := wait()
	require.Equal(t, controlplane.CodeForbidden, remoteworker.ErrorCode(err))
}
