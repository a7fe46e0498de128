package remoteworker_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/remoteworker"
	"github.com/azolla/azolla/internal/strictjson"
)

func TestWorker_ClaimHeartbeatComplete(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.offerJob(json.RawMessage(`{"n":1}`), 3, 1)
	exec := newBlockingExec(`{"out":"done"}`)
	h := start(t, cp, exec, remoteworker.Options{Streams: []string{"patch", "command"}, MaxWait: 1500 * time.Millisecond})

	recv(t, exec.started, "the job to start")
	waitFor(t, "a heartbeat", func() bool { return cp.count(controlplane.PathHeartbeat) >= 1 })
	close(exec.release)
	require.NoError(t, recv(t, exec.ended, "the job to end"), "the job ran to its end uncancelled")
	waitFor(t, "the completion", func() bool { return cp.count(controlplane.PathComplete) == 1 })
	waitFor(t, "the next claim", func() bool { return cp.count(controlplane.PathClaim) >= 2 })

	claims := requests[controlplane.ClaimRequest](cp, controlplane.PathClaim)
	require.Equal(t, controlplane.ClaimRequest{WorkerID: testWorker, Streams: []string{"patch", "command"},
		MaxWaitMS: 1500}, claims[0])
	hb := requests[controlplane.HeartbeatRequest](cp, controlplane.PathHeartbeat)[0]
	require.Equal(t, controlplane.HeartbeatRequest{WorkerID: testWorker, JobID: testJobID, LeaseToken: testLease}, hb)
	c := requests[controlplane.CompleteRequest](cp, controlplane.PathComplete)[0]
	require.Equal(t, controlplane.CompleteRequest{WorkerID: testWorker, JobID: testJobID, AttemptID: "attempt-1",
		LeaseToken: testLease, Stream: "command", MessageID: "1700000000000-0", Result: json.RawMessage(`{"out":"done"}`)}, c)
	require.Zero(t, cp.count(controlplane.PathFail))

	h.stop()
	require.NoError(t, h.wait(t))
	require.NotContains(t, h.log.String(), testToken)
	require.NotContains(t, h.log.String(), testLease)
}

func TestWorker_RefusedHeartbeatCancelsTheJobAndWritesNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		code   string
	}{
		{http.StatusConflict, controlplane.CodeLeaseLost},
		{http.StatusConflict, controlplane.CodeStale},
		{http.StatusConflict, controlplane.CodeCancelled},
		{http.StatusNotFound, controlplane.CodeNotFound},
		{http.StatusForbidden, controlplane.CodeForbidden},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			cp := newFakeCP(t)
			cp.offerJob(json.RawMessage(`{}`), 3, 1)
			cp.handle(controlplane.PathHeartbeat, func(int) reply { return apiErr(tc.status, tc.code) })
			exec := newBlockingExec(`{}`)
			start(t, cp, exec, remoteworker.Options{})

			cause := recv(t, exec.ended, "the job to be cancelled")
			var lost *remoteworker.LeaseLostError
			require.ErrorAs(t, cause, &lost)
			require.Equal(t, tc.code, remoteworker.ErrorCode(cause))
			// Back to claiming: the job is over, and it wrote nothing.
			waitFor(t, "the next claim", func() bool { return cp.count(controlplane.PathClaim) >= 2 })
			require.Zero(t, cp.count(controlplane.PathComplete))
			require.Zero(t, cp.count(controlplane.PathFail))
			require.Equal(t, 1, cp.count(controlplane.PathHeartbeat), "a refusal is not retried")
		})
	}
}

func TestWorker_HeartbeatOKFalseCancelsTheJob(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.offerJob(json.RawMessage(`{}`), 3, 1)
	cp.handle(controlplane.PathHeartbeat, func(int) reply { return ok(controlplane.HeartbeatResponse{}) })
	exec := newBlockingExec(`{}`)
	start(t, cp, exec, remoteworker.Options{})

	var lost *remoteworker.LeaseLostError
	require.ErrorAs(t, recv(t, exec.ended, "the job to be cancelled"), &lost)
	waitFor(t, "the next claim", func() bool { return cp.count(controlplane.PathClaim) >= 2 })
	require.Zero(t, cp.count(controlplane.PathComplete)+cp.count(controlplane.PathFail))
}

func TestWorker_TransientHeartbeatFailuresLoseTheLeaseWhenItWouldExpire(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.offerJob(json.RawMessage(`{}`), 2, 1)
	cp.handle(controlplane.PathHeartbeat, func(int) reply { return apiErr(http.StatusServiceUnavailable, controlplane.CodeUnavailable) })
	exec := newBlockingExec(`{}`)
	start(t, cp, exec, remoteworker.Options{})

	recv(t, exec.started, "the job to start")
	begun := time.Now()
	cause := recv(t, exec.ended, "the job to be cancelled")
	require.ErrorIs(t, cause, remoteworker.ErrLeaseExpired)
	// The lease (2 s from the claim) ran out about a second after the first
	// heartbeat (1 s after the claim); until then the heartbeat was retried.
	require.Greater(t, time.Since(begun), 1500*time.Millisecond)
	require.Greater(t, cp.count(controlplane.PathHeartbeat), 2)
	waitFor(t, "the next claim", func() bool { return cp.count(controlplane.PathClaim) >= 2 })
	require.Zero(t, cp.count(controlplane.PathComplete)+cp.count(controlplane.PathFail))
}

func TestWorker_TransientHeartbeatFailureIsRetriedAndTheJobCompletes(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.offerJob(json.RawMessage(`{}`), 3, 1)
	cp.handle(controlplane.PathHeartbeat, func(n int) reply {
		if n <= 2 {
			return apiErr(http.StatusServiceUnavailable, controlplane.CodeUnavailable)
		}
		return ok(controlplane.HeartbeatResponse{OK: true})
	})
	exec := newBlockingExec(`{"x":1}`)
	start(t, cp, exec, remoteworker.Options{})

	waitFor(t, "a heartbeat to get through", func() bool { return cp.count(controlplane.PathHeartbeat) >= 3 })
	close(exec.release)
	require.NoError(t, recv(t, exec.ended, "the job to end"))
	waitFor(t, "the completion", func() bool { return cp.count(controlplane.PathComplete) == 1 })
	require.Zero(t, cp.count(controlplane.PathFail))
}

func TestWorker_CompleteRetriedAfter503(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.offerJob(json.RawMessage(`{}`), 30, 10)
	cp.handle(controlplane.PathComplete, func(n int) reply {
		if n == 1 {
			return apiErr(http.StatusServiceUnavailable, controlplane.CodeUnavailable)
		}
		return ok(controlplane.CompleteResponse{OK: true, Ack: true})
	})
	exec := newBlockingExec(`{"x":1}`)
	close(exec.release)
	start(t, cp, exec, remoteworker.Options{})

	waitFor(t, "the next claim", func() bool { return cp.count(controlplane.PathClaim) >= 2 })
	cs := requests[controlplane.CompleteRequest](cp, controlplane.PathComplete)
	require.Len(t, cs, 2, "retried once, then settled")
	require.Equal(t, cs[0], cs[1], "the retry is the same request")
	require.Zero(t, cp.count(controlplane.PathFail))
}

func TestWorker_RefusedCompleteIsNotRetried(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.offerJob(json.RawMessage(`{}`), 30, 10)
	cp.handle(controlplane.PathComplete, func(int) reply { return apiErr(http.StatusConflict, controlplane.CodeLeaseLost) })
	exec := newBlockingExec(`{}`)
	close(exec.release)
	h := start(t, cp, exec, remoteworker.Options{})

	waitFor(t, "the next claim", func() bool { return cp.count(controlplane.PathClaim) >= 2 })
	require.Equal(t, 1, cp.count(controlplane.PathComplete))
	require.Zero(t, cp.count(controlplane.PathFail), "a refused completion is not turned into a failure")
	require.Contains(t, h.log.String(), controlplane.CodeLeaseLost)
}

func TestWorker_ExecutorErrorsFailTheJob(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		err       error
		code      string
		retryable bool
	}{
		"plain error is retryable": {errors.New("boom\nsecond line"), remoteworker.CodeExecutorError, true},
		"permanent":                {remoteworker.Permanent("bad_input", errors.New("no")), "bad_input", false},
		"retryable":                {remoteworker.Retryable("flaky", errors.New("later")), "flaky", true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cp := newFakeCP(t)
			cp.offerJob(json.RawMessage(`{}`), 30, 10)
			exec := remoteworker.ExecutorFunc(func(_ context.Context, _ json.RawMessage) (json.RawMessage, error) {
				return nil, tc.err
			})
			start(t, cp, exec, remoteworker.Options{})

			waitFor(t, "the failure", func() bool { return cp.count(controlplane.PathFail) == 1 })
			f := requests[controlplane.FailRequest](cp, controlplane.PathFail)[0]
			require.Equal(t, testJobID, f.JobID)
			require.Equal(t, "attempt-1", f.AttemptID)
			require.Equal(t, testLease, f.LeaseToken)
			require.Equal(t, "command", f.Stream)
			require.Equal(t, "1700000000000-0", f.MessageID)
			require.Equal(t, tc.code, f.Error.Code)
			require.Equal(t, tc.retryable, f.Error.Retryable)
			require.Contains(t, f.Error.Message, tc.err.Error())
			require.Zero(t, cp.count(controlplane.PathComplete))
		})
	}
}

func TestWorker_ShutdownLetsTheJobFinishWithinGraceAndCompletes(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.offerJob(json.RawMessage(`{}`), 30, 10)
	exec := newBlockingExec(`{"x":1}`)
	h := start(t, cp, exec, remoteworker.Options{ShutdownGrace: time.Minute})

	recv(t, exec.started, "the job to start")
	h.stop()
	waitFor(t, "the worker to see the shutdown", func() bool { return strings.Contains(h.log.String(), "shutting down") })
	close(exec.release)
	require.NoError(t, h.wait(t))
	require.NoError(t, recv(t, exec.ended, "the job's end"), "the job ran uncancelled")
	require.Equal(t, 1, cp.count(controlplane.PathComplete))
	require.Zero(t, cp.count(controlplane.PathFail))
	require.Equal(t, 1, cp.count(controlplane.PathClaim), "no claim after the shutdown")
}

func TestWorker_ShutdownPastGraceFailsTheJobRetryable(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.offerJob(json.RawMessage(`{}`), 30, 10)
	exec := newBlockingExec(`{}`)
	h := start(t, cp, exec, remoteworker.Options{ShutdownGrace: 100 * time.Millisecond})

	recv(t, exec.started, "the job to start")
	h.stop()
	require.NoError(t, h.wait(t))
	require.ErrorIs(t, recv(t, exec.ended, "the job's end"), remoteworker.ErrShutdownGrace)
	fs := requests[controlplane.FailRequest](cp, controlplane.PathFail)
	require.Len(t, fs, 1)
	require.Equal(t, domain.JobError{Code: remoteworker.CodeWorkerShutdown, Retryable: true,
		Message: fs[0].Error.Message}, fs[0].Error)
	require.Contains(t, fs[0].Error.Message, "shutdown grace")
	require.Zero(t, cp.count(controlplane.PathComplete))
}

func TestWorker_EmptyClaimsLoop(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	exec := remoteworker.ExecutorFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		t.Error("nothing was claimed, nothing may run")
		return nil, nil
	})
	h := start(t, cp, exec, remoteworker.Options{})
	waitFor(t, "three claims", func() bool { return cp.count(controlplane.PathClaim) >= 3 })
	h.stop()
	require.NoError(t, h.wait(t))
	require.Zero(t, cp.count(controlplane.PathHeartbeat)+cp.count(controlplane.PathComplete)+cp.count(controlplane.PathFail))
}

func TestWorker_RefusedClaimStopsTheWorker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		code   string
	}{
		{http.StatusUnauthorized, controlplane.CodeUnauthenticated},
		{http.StatusForbidden, controlplane.CodeForbidden},
		{http.StatusBadRequest, controlplane.CodeInvalid},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			cp := newFakeCP(t)
			cp.handle(controlplane.PathClaim, func(int) reply { return apiErr(tc.status, tc.code) })
			h := start(t, cp, newBlockingExec(`{}`), remoteworker.Options{})
			err := h.wait(t)
			var ae *remoteworker.APIError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, tc.status, ae.Status)
			require.Equal(t, tc.code, ae.Code)
			require.Equal(t, 1, cp.count(controlplane.PathClaim), "4xx is not retried")
		})
	}
}

func TestWorker_WrongTokenIsRefusedAndNeverLogged(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	wrong := "tok-wrong-0123456789"
	h := start(t, cp, newBlockingExec(`{}`), remoteworker.Options{TokenFile: tokenFile(t, "  "+wrong+"\n", 0o644)})
	err := h.wait(t)
	require.Equal(t, controlplane.CodeUnauthenticated, remoteworker.ErrorCode(err))
	require.NotContains(t, err.Error(), wrong)
	require.NotContains(t, h.log.String(), wrong)
	require.Contains(t, h.log.String(), "chmod 600", "a token file others may read is warned about")
}

func TestWorker_RefusesUnknownResponseFields(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.handle(controlplane.PathClaim, func(int) reply { return ok([]byte(`{"claimed":false,"surprise":1}`)) })
	h := start(t, cp, newBlockingExec(`{}`), remoteworker.Options{})
	err := h.wait(t)
	require.ErrorContains(t, err, `unknown field "surprise"`)
	require.Equal(t, 1, cp.count(controlplane.PathClaim))
}

func TestWorker_RefusesAResponseWithTrailingData(t *testing.T) {
	t.Parallel()
	cp := newFakeCP(t)
	cp.handle(controlplane.PathClaim, func(int) reply { return ok([]byte(`{"claimed":false}}`)) })
	h := start(t, cp, newBlockingExec(`{}`), remoteworker.Options{})
	err := h.wait(t)
	require.ErrorIs(t, err, strictjson.ErrTrailingData)
	require.Equal(t, 1, cp.count(controlplane.PathClaim))
}

func TestNew_ChecksOptions(t *testing.T) {
	t.Parallel()
	tf := tokenFile(t, testToken, 0o600)
	exec := remoteworker.ExecutorFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	base := remoteworker.Options{ControlPlaneURL: "http://127.0.0.1:1", TokenFile: tf, WorkerID: "w", Executor: exec,
		Streams: []string{"patch"}}
	for name, tc := range map[string]struct {
		edit func(*remoteworker.Options)
		want string
	}{
		"no worker id":    {func(o *remoteworker.Options) { o.WorkerID = "" }, "--worker-id or $AZOLLA_WORKER_ID"},
		"control in id":   {func(o *remoteworker.Options) { o.WorkerID = "w\x1b[2J" }, "worker id"},
		"no streams":      {func(o *remoteworker.Options) { o.Streams = nil }, "no streams"},
		"bad stream":      {func(o *remoteworker.Options) { o.Streams = []string{"PATCH_DIAZOTROPH"} }, "invalid stream"},
		"stream twice":    {func(o *remoteworker.Options) { o.Streams = []string{"patch", "patch"} }, "twice"},
		"no token file":   {func(o *remoteworker.Options) { o.ControlPlaneURL, o.TokenFile = "http://10.0.0.1:7350", "" }, "no token"},
		"no token, https": {func(o *remoteworker.Options) { o.ControlPlaneURL, o.TokenFile = "https://127.0.0.1:7350", "" }, "no token"},
		"empty token":     {func(o *remoteworker.Options) { o.TokenFile = tokenFile(t, " \n\t\n", 0o600) }, "is empty"},
		"missing token":   {func(o *remoteworker.Options) { o.TokenFile = tf + ".missing" }, "token file"},
		"not http":        {func(o *remoteworker.Options) { o.ControlPlaneURL = "ftp://x" }, "want http"},
		"no host":         {func(o *remoteworker.Options) { o.ControlPlaneURL = "127.0.0.1:7350" }, "control plane URL"},
		"CA without TLS":  {func(o *remoteworker.Options) { o.CAFile = tf }, "needs https"},
		"CA file not PEM": {func(o *remoteworker.Options) { o.ControlPlaneURL, o.CAFile = "https://h", tf }, "no PEM"},
		"no executor":     {func(o *remoteworker.Options) { o.Executor = nil }, "no executor"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := base
			tc.edit(&o)
			_, err := remoteworker.New(o)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), testToken)
		})
	}
	w, err := remoteworker.New(base)
	require.NoError(t, err)
	require.Equal(t, "w", w.ID())
	// azolla dev's control plane, on loopback over http, takes no token.
	dev := base
	dev.TokenFile = ""
	_, err = remoteworker.New(dev)
	require.NoError(t, err)
	require.Equal(t, []string{"patch"}, w.Streams())
}
