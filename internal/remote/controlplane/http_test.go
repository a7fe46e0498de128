package controlplane

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/schemas"
)

// httpBundle is a control plane served over HTTP with a token for each of
// workers A and B.
type httpBundle struct {
	*testBundle
	srv            *httptest.Server
	tokenA, tokenB string
}

func setupHTTP(t *testing.T, tb *testBundle) *httpBundle {
	t.Helper()
	hb := &httpBundle{testBundle: tb}
	for _, w := range []struct {
		id    string
		token *string
	}{{workerA, &hb.tokenA}, {workerB, &hb.tokenB}} {
		token, hash, err := GenerateWorkerToken()
		require.NoError(t, err)
		require.NoError(t, tb.st.CreateWorkerToken(tb.ctx, &domain.WorkerToken{WorkerID: w.id, TokenHash: hash,
			CreatedAt: tb.clock.Now()}))
		*w.token = token
	}
	hb.srv = httptest.NewServer(tb.svc.Router(TokenAuthenticator{Tokens: tb.st}))
	t.Cleanup(hb.srv.Close)
	return hb
}

// post sends body to path with token and returns the status and body; an
// error answer is checked against its schema.
func (hb *httpBundle) post(t *testing.T, path, token string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, hb.srv.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hb.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK {
		require.NoError(t, schemas.ValidateJSON(schemas.WorkerErrorResponse, out), string(out))
	}
	return resp.StatusCode, out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestHTTP_ClaimHeartbeatComplete(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		hb := setupHTTP(t, tb)
		j := tb.enqueue(t, "wo-1")

		status, body := hb.post(t, PathClaim, hb.tokenA, mustJSON(t, ClaimRequest{WorkerID: workerA, Streams: []string{testStream}}))
		require.Equal(t, http.StatusOK, status, string(body))
		var c ClaimResponse
		require.NoError(t, json.Unmarshal(body, &c))
		require.True(t, c.Claimed)
		require.Equal(t, j.JobID, c.JobID)
		require.Len(t, c.LeaseToken, 43)
		require.JSONEq(t, `{"work_order_id":"wo-1"}`, string(c.Payload))
		require.Equal(t, 60, c.LeaseTTLSeconds)
		require.Equal(t, 20, c.HeartbeatIntervalSeconds)

		status, body = hb.post(t, PathHeartbeat, hb.tokenA, mustJSON(t, HeartbeatRequest{WorkerID: workerA, JobID: c.JobID, LeaseToken: c.LeaseToken}))
		require.Equal(t, http.StatusOK, status, string(body))

		status, body = hb.post(t, PathComplete, hb.tokenA, mustJSON(t, completeOf(c, workerA, `{"n":1}`)))
		require.Equal(t, http.StatusOK, status, string(body))
		require.JSONEq(t, `{"ok":true,"ack":true}`, string(body))

		status, body = hb.post(t, PathClaim, hb.tokenA, mustJSON(t, ClaimRequest{WorkerID: workerA, Streams: []string{testStream}}))
		require.Equal(t, http.StatusOK, status, string(body))
		require.JSONEq(t, `{"claimed":false}`, string(body))
	})
}

func TestHTTP_HostileInputIsRefusedAndWritesNothing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		hb := setupHTTP(t, tb)
		j := tb.enqueue(t, "wo-1")
		c := tb.mustClaim(t, workerA)
		good := mustJSON(t, completeOf(c, workerA, `{"n":1}`))
		var asMap map[string]any
		require.NoError(t, json.Unmarshal(good, &asMap))
		with := func(k string, v any) []byte {
			m := map[string]any{}
			for key, val := range asMap {
				m[key] = val
			}
			m[k] = v
			return mustJSON(t, m)
		}
		huge := append([]byte(`{"worker_id":"worker-a","result":{"pad":"`), bytes.Repeat([]byte("x"), 10<<20)...)
		huge = append(huge, `"}}`...)

		cases := []struct {
			name   string
			token  string
			body   []byte
			status int
			code   string
		}{
			{"no token", "", good, 401, CodeUnauthenticated},
			{"unknown token", "azw_" + strings.Repeat("A", 43), good, 401, CodeUnauthenticated},
			{"not a bearer token", c.LeaseToken, good, 401, CodeUnauthenticated},
			{"malformed JSON", hb.tokenA, []byte(`{"worker_id":`), 400, CodeInvalid},
			{"two values", hb.tokenA, append(append([]byte{}, good...), good...), 400, CodeInvalid},
			{"unknown field", hb.tokenA, with("status", "SUCCEEDED"), 400, CodeInvalid},
			{"result not an object", hb.tokenA, with("result", "done"), 400, CodeInvalid},
			{"bad job id", hb.tokenA, with("job_id", "../../etc"), 400, CodeInvalid},
			{"10 MB body", hb.tokenA, huge, 413, CodeTooLarge},
			{"worker_id of another token", hb.tokenB, good, 403, CodeForbidden},
			{"another worker's job", hb.tokenB, with("worker_id", workerB), 403, CodeForbidden},
			{"unknown job", hb.tokenA, with("job_id", newUUID()), 404, CodeNotFound},
			{"wrong lease token", hb.tokenA, with("lease_token", newLeaseToken()), 409, CodeLeaseLost},
		}
		for _, tc := range cases {
			status, body := hb.post(t, PathComplete, tc.token, tc.body)
			require.Equal(t, tc.status, status, "%s: %s", tc.name, body)
			var er ErrorResponse
			require.NoError(t, json.Unmarshal(body, &er), tc.name)
			require.Equal(t, tc.code, er.Error.Code, tc.name)
			require.NotContains(t, string(body), c.LeaseToken, tc.name)
			require.NotContains(t, string(body), hb.tokenA, tc.name)
		}

		// Heartbeat and fail refuse the same way.
		status, _ := hb.post(t, PathHeartbeat, hb.tokenB, mustJSON(t, HeartbeatRequest{WorkerID: workerB, JobID: c.JobID, LeaseToken: c.LeaseToken}))
		require.Equal(t, 403, status)
		status, _ = hb.post(t, PathFail, "", mustJSON(t, failOf(c, workerA, false)))
		require.Equal(t, 401, status)

		// Nothing was written.
		got := tb.job(t, j.JobID)
		require.Equal(t, domain.JobRunning, got.Status)
		require.Nil(t, got.Result)
		as := tb.attempts(t, j.JobID)
		require.Len(t, as, 1)
		require.Equal(t, domain.AttemptRunning, as[0].Status)
		require.Empty(t, tb.tr.ackedIDs())
		require.Zero(t, tb.hooks.renewed)
		require.Empty(t, tb.hooks.succeeded)
	})
}

func TestHTTP_ProtocolRefusals(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		hb := setupHTTP(t, tb)
		claim := mustJSON(t, ClaimRequest{WorkerID: workerA, Streams: []string{testStream}})

		req, err := http.NewRequest(http.MethodPost, hb.srv.URL+PathClaim, bytes.NewReader(claim))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+hb.tokenA)
		req.Header.Set("Content-Type", "text/plain")
		resp, err := hb.srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)

		resp, err = hb.srv.Client().Get(hb.srv.URL + PathClaim)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

		resp, err = hb.srv.Client().Get(hb.srv.URL + PathHealth)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)

		// A revoked token is refused.
		require.NoError(t, tb.st.RevokeWorkerToken(tb.ctx, workerA, tb.clock.Now()))
		status, _ := hb.post(t, PathClaim, hb.tokenA, claim)
		require.Equal(t, http.StatusUnauthorized, status)
	})
}

func TestHTTP_UnauthenticatedModeAcceptsAnyWorker(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		srv := httptest.NewServer(tb.svc.Router(AllowUnauthenticated))
		defer srv.Close()
		tb.enqueue(t, "wo-1")
		resp, err := srv.Client().Post(srv.URL+PathClaim, "application/json",
			bytes.NewReader(mustJSON(t, ClaimRequest{WorkerID: "anyone", Streams: []string{testStream}})))
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var c ClaimResponse
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
		require.True(t, c.Claimed)
	})
}
