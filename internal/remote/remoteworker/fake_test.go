package remoteworker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/remoteworker"
)

const (
	testToken  = "tok-5b0c9d3e-very-secret"
	testWorker = "worker-a"
	testLease  = "lease-0f9e8d7c-secret"
	testJobID  = "0b7a5a4e-3f21-4c43-9d2e-6a1f0c2b9e11"
)

// reply is what a fake handler answers: a status and a body (marshalled
// unless it is a []byte).
type reply struct {
	status int
	body   any
}

func ok(body any) reply { return reply{http.StatusOK, body} }

func apiErr(status int, code string) reply {
	return reply{status, controlplane.ErrorResponse{Error: controlplane.ErrorBody{Code: code, Message: "no: " + code}}}
}

// fakeCP is a control plane that records every request and answers with
// the handler set for its path; the n-th request to a path gets n (from 1).
// Requests are decoded strictly into the contract's types, so a field the
// worker sends that the contract lacks fails the test.
type fakeCP struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	bodies   map[string][][]byte
	handlers map[string]func(n int) reply
}

func newFakeCP(t *testing.T) *fakeCP {
	t.Helper()
	f := &fakeCP{t: t, bodies: map[string][][]byte{}, handlers: map[string]func(int) reply{}}
	mux := http.NewServeMux()
	for path, typ := range map[string]func() any{
		controlplane.PathClaim:     func() any { return new(controlplane.ClaimRequest) },
		controlplane.PathHeartbeat: func() any { return new(controlplane.HeartbeatRequest) },
		controlplane.PathComplete:  func() any { return new(controlplane.CompleteRequest) },
		controlplane.PathFail:      func() any { return new(controlplane.FailRequest) },
	} {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) { f.serve(w, r, path, typ()) })
	}
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	// By default there is no work: a claim waits a little, as a long poll
	// would, and answers claimed=false.
	f.handle(controlplane.PathClaim, func(int) reply {
		time.Sleep(20 * time.Millisecond)
		return ok(controlplane.ClaimResponse{})
	})
	f.handle(controlplane.PathHeartbeat, func(int) reply {
		return ok(controlplane.HeartbeatResponse{OK: true, LeaseExpiresAt: time.Now().Add(time.Minute)})
	})
	f.handle(controlplane.PathComplete, func(int) reply { return ok(controlplane.CompleteResponse{OK: true, Ack: true}) })
	f.handle(controlplane.PathFail, func(int) reply {
		return ok(controlplane.FailResponse{OK: true, Ack: true, Requeued: true})
	})
	return f
}

func (f *fakeCP) serve(w http.ResponseWriter, r *http.Request, path string, into any) {
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		writeReply(w, apiErr(http.StatusUnauthorized, controlplane.CodeUnauthenticated))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		f.t.Errorf("%s: request does not decode strictly: %v: %s", path, err, body)
		writeReply(w, apiErr(http.StatusBadRequest, controlplane.CodeInvalid))
		return
	}
	f.mu.Lock()
	f.bodies[path] = append(f.bodies[path], body)
	n, h := len(f.bodies[path]), f.handlers[path]
	f.mu.Unlock()
	writeReply(w, h(n))
}

func writeReply(w http.ResponseWriter, r reply) {
	b, ok := r.body.([]byte)
	if !ok {
		b, _ = json.Marshal(r.body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(r.status)
	_, _ = w.Write(b)
}

// handle sets path's handler.
func (f *fakeCP) handle(path string, h func(n int) reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[path] = h
}

// count is the number of requests path has had.
func (f *fakeCP) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies[path])
}

// requests decodes path's requests into T.
func requests[T any](f *fakeCP, path string) []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []T
	for _, b := range f.bodies[path] {
		var v T
		require.NoError(f.t, json.Unmarshal(b, &v))
		out = append(out, v)
	}
	return out
}

// offerJob makes the first claim get a job with payload; later claims find
// nothing.
func (f *fakeCP) offerJob(payload json.RawMessage, ttlSeconds, intervalSeconds int) {
	f.handle(controlplane.PathClaim, func(n int) reply {
		if n == 1 {
			return ok(claimed(payload, ttlSeconds, intervalSeconds))
		}
		time.Sleep(20 * time.Millisecond)
		return ok(controlplane.ClaimResponse{})
	})
}

func claimed(payload json.RawMessage, ttlSeconds, intervalSeconds int) controlplane.ClaimResponse {
	return controlplane.ClaimResponse{Claimed: true, JobID: testJobID, AttemptID: "attempt-1", LeaseToken: testLease,
		Stream: &controlplane.StreamRef{Name: "command", MessageID: "1700000000000-0"}, Payload: payload,
		LeaseTTLSeconds: ttlSeconds, HeartbeatIntervalSeconds: intervalSeconds}
}

// waitFor waits until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 20*time.Second, 5*time.Millisecond, "waiting for: %s", what)
}

func tokenFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(p, []byte(content), mode))
	require.NoError(t, os.Chmod(p, mode))
	return p
}

// harness is a worker against a fake control plane, its log kept.
type harness struct {
	cp   *fakeCP
	w    *remoteworker.Worker
	log  *proctest.Buffer
	stop context.CancelFunc
	done chan error
}

// start runs a worker with exec (and o's other settings) until the test
// stops it or ends.
func start(t *testing.T, cp *fakeCP, exec remoteworker.Executor, o remoteworker.Options) *harness {
	t.Helper()
	h := &harness{cp: cp, log: &proctest.Buffer{}, done: make(chan error, 1)}
	o.ControlPlaneURL = cp.srv.URL
	if o.TokenFile == "" {
		o.TokenFile = tokenFile(t, testToken+"\n", 0o600)
	}
	if o.WorkerID == "" {
		o.WorkerID = testWorker
	}
	if o.Streams == nil {
		o.Streams = []string{"command", "patch"}
	}
	o.Executor = exec
	o.Logger = slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.Retry = remoteworker.RetryPolicy{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond}
	w, err := remoteworker.New(o)
	require.NoError(t, err)
	h.w = w
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	go func() { h.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.done:
		case <-time.After(20 * time.Second):
			t.Error("worker did not stop")
		}
	})
	return h
}

// wait returns Run's error once it has returned.
func (h *harness) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.done:
		h.done <- err // for Cleanup
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("worker did not return")
		return nil
	}
}

// blockingExec is an executor that reports its start and runs until
// released or its context ends.
type blockingExec struct {
	started chan struct{}
	release chan struct{}
	result  json.RawMessage
	// ended receives the context's cause (nil when released).
	ended chan error
}

func newBlockingExec(result string) *blockingExec {
	return &blockingExec{started: make(chan struct{}), release: make(chan struct{}), result: json.RawMessage(result),
		ended: make(chan error, 1)}
}

func (e *blockingExec) Execute(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	close(e.started)
	select {
	case <-e.release:
		e.ended <- context.Cause(ctx)
		return e.result, nil
	case <-ctx.Done():
		e.ended <- context.Cause(ctx)
		return nil, errors.New("executor stopped: " + context.Cause(ctx).Error())
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("waiting for: %s", what)
		var zero T
		return zero
	}
}
