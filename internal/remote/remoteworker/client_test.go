package remoteworker_test

import (
	"context"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/remoteworker"
)

func newClient(t *testing.T, url string, edit ...func(*remoteworker.ClientOptions)) *remoteworker.Client {
	t.Helper()
	o := remoteworker.ClientOptions{BaseURL: url, Token: testToken,
		Retry: remoteworker.RetryPolicy{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
	for _, e := range edit {
		e(&o)
	}
	c, err := remoteworker.NewClient(o)
	require.NoError(t, err)
	return c
}

func TestClient_4xxIsNeverRetried(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		code   string
	}{
		{http.StatusBadRequest, controlplane.CodeInvalid},
		{http.StatusUnauthorized, controlplane.CodeUnauthenticated},
		{http.StatusForbidden, controlplane.CodeForbidden},
		{http.StatusNotFound, controlplane.CodeNotFound},
		{http.StatusConflict, controlplane.CodeLeaseLost},
		{http.StatusConflict, controlplane.CodeStale},
		{http.StatusConflict, controlplane.CodeCancelled},
		{http.StatusRequestEntityTooLarge, controlplane.CodeTooLarge},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			cp := newFakeCP(t)
			cp.handle(controlplane.PathComplete, func(int) reply { return apiErr(tc.status, tc.code) })
			_, err := newClient(t, cp.srv.URL).Complete(context.Background(), controlplane.CompleteRequest{})
			var ae *remoteworker.APIError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, remoteworker.APIError{Status: tc.status, Code: tc.code, Message: "no: " + tc.code}, *ae)
			require.False(t, ae.Transient())
			require.Equal(t, 1, cp.count(controlplane.PathComplete))
		})
	}
}

func TestClient_TransientFailuresAreRetried(t *testing.T) {
	t.Parallel()
	for name, first := range map[string]reply{
		"503 unavailable":  apiErr(http.StatusServiceUnavailable, controlplane.CodeUnavailable),
		"500 internal":     apiErr(http.StatusInternalServerError, controlplane.CodeInternal),
		"502 from a proxy": {http.StatusBadGateway, []byte("<html>bad gateway</html>")},
		"429":              {http.StatusTooManyRequests, []byte("slow down")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cp := newFakeCP(t)
			cp.handle(controlplane.PathHeartbeat, func(n int) reply {
				if n <= 2 {
					return first
				}
				return ok(controlplane.HeartbeatResponse{OK: true})
			})
			resp, err := newClient(t, cp.srv.URL).Heartbeat(context.Background(), controlplane.HeartbeatRequest{})
			require.NoError(t, err)
			require.True(t, resp.OK)
			require.Equal(t, 3, cp.count(controlplane.PathHeartbeat))
		})
	}
}

func TestClient_ConnectionFailuresAreRetriedUntilTheContextEnds(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: connection refused, every time.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + l.Addr().String()
	require.NoError(t, l.Close())

	c := newClient(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = c.Fail(ctx, controlplane.FailRequest{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "connection refused")

	// A connection the server drops before answering is retried too.
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			require.NoError(t, err)
			_ = conn.Close()
			return
		}
		writeReply(w, ok(controlplane.FailResponse{OK: true, Ack: true}))
	}))
	t.Cleanup(srv.Close)
	resp, err := newClient(t, srv.URL).Fail(context.Background(), controlplane.FailRequest{})
	require.NoError(t, err)
	require.True(t, resp.Ack)
	require.EqualValues(t, 2, n.Load())
}

func TestClient_SendsTheTokenAsBearer(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		writeReply(w, ok(controlplane.ClaimResponse{}))
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, srv.URL).Claim(context.Background(), controlplane.ClaimRequest{MaxWaitMS: 1})
	require.NoError(t, err)
	require.Equal(t, "Bearer "+testToken, got.Load())
}

func TestClient_RefusesWhatTheContractLacks(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"unknown field":          `{"ok":true,"ack":true,"extra":"x"}`,
		"two values":             `{"ok":true,"ack":true}{}`,
		"not JSON":               `ok`,
		"wrong type for a field": `{"ok":"yes","ack":true}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cp := newFakeCP(t)
			cp.handle(controlplane.PathComplete, func(int) reply { return ok([]byte(body)) })
			_, err := newClient(t, cp.srv.URL).Complete(context.Background(), controlplane.CompleteRequest{})
			require.ErrorContains(t, err, "decode response")
			require.Equal(t, 1, cp.count(controlplane.PathComplete), "a response the worker cannot read is not retried")
		})
	}

	// A claimed job without its lease token cannot be worked on.
	cp := newFakeCP(t)
	cp.handle(controlplane.PathClaim, func(int) reply {
		r := claimed(nil, 3, 1)
		r.LeaseToken = ""
		return ok(r)
	})
	_, err := newClient(t, cp.srv.URL).Claim(context.Background(), controlplane.ClaimRequest{})
	require.ErrorContains(t, err, "lease_token")
}

func TestClient_DoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, srv.URL).Complete(context.Background(), controlplane.CompleteRequest{})
	var ae *remoteworker.APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusTemporaryRedirect, ae.Status)
	require.Zero(t, elsewhere.Load())
}

func TestClient_TLSWithCAFile(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeReply(w, ok(controlplane.HeartbeatResponse{OK: true}))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE",
		Bytes: srv.Certificate().Raw}), 0o600))

	resp, err := newClient(t, srv.URL, func(o *remoteworker.ClientOptions) {
		o.CAFile, o.ServerName = ca, "example.com" // httptest's certificate names example.com
	}).Heartbeat(context.Background(), controlplane.HeartbeatRequest{})
	require.NoError(t, err)
	require.True(t, resp.OK)

	// Without the CA the certificate is refused at once, not retried.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = newClient(t, srv.URL).Heartbeat(ctx, controlplane.HeartbeatRequest{})
	require.ErrorContains(t, err, "certificate")
	require.NoError(t, ctx.Err(), "a certificate error is not retried until the context ends")
}

func TestReadTokenFile(t *testing.T) {
	t.Parallel()
	tok, err := remoteworker.ReadTokenFile(tokenFile(t, "\n  "+testToken+" \r\n", 0o600), nil)
	require.NoError(t, err)
	require.Equal(t, testToken, tok)

	_, err = remoteworker.ReadTokenFile(tokenFile(t, "two words", 0o600), nil)
	require.ErrorContains(t, err, "spaces or control characters")
	require.NotContains(t, err.Error(), "two words")

	_, err = remoteworker.ReadTokenFile(t.TempDir(), nil)
	require.ErrorContains(t, err, "not a regular file")
}
