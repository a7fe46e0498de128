package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// webUI is a client of the Temporal Web UI's own HTTP API, the one its
// pages call: the UI server proxies it to the frontend over gRPC.
type webUI struct {
	base   string
	client *http.Client
}

// startWebUI serves the Web UI server against the package's Temporal
// server, configured as `azolla dev` configures it (deploy/devserver). The
// package's server runs without a UI (TestMain passes UIDisabled), so this
// test starts its own in front of the same frontend.
func startWebUI(t *testing.T) *webUI {
	t.Helper()
	port := freePort()
	srv := uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host: "127.0.0.1", Port: port, TemporalGRPCAddress: server.FrontendAddress(),
		DefaultNamespace: "default", CORS: uiconfig.CORS{CookieInsecure: true}, HideLogs: true, DisableNewsFetch: true,
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Start()
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	ui := &webUI{base: "http://127.0.0.1:" + strconv.Itoa(port), client: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	require.Eventually(t, func() bool {
		resp, err := ui.client.Get(ui.base + "/healthz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "the Web UI server never answered")
	// The page load that gives the browser its _csrf cookie.
	resp, err := ui.client.Get(ui.base + "/api/v1/settings")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.NotEmpty(t, ui.csrfToken(t), "the UI server sets its CSRF cookie")
	return ui
}

func (ui *webUI) csrfToken(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(ui.base)
	require.NoError(t, err)
	for _, c := range ui.client.Jar.Cookies(u) {
		if c.Name == "_csrf" {
			return c.Value
		}
	}
	return ""
}

// do sends a request as the UI's pages do: JSON, with the CSRF cookie's
// value echoed in X-CSRF-Token.
func (ui *webUI) do(t *testing.T, method, path string, body any) []byte {
	t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, ui.base+path, r)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", ui.csrfToken(t))
	resp, err := ui.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: %s", method, path, out)
	return out
}

// signal is the Workflow page's "Send a Signal" with encoding json/plain.
// The page parses what the user typed as JSON and sends it back
// re-serialized (JSON.stringify), base64 in one payload whose metadata says
// json/plain; an empty box sends no payload at all (payloads: null).
// typed is given here already in JSON.stringify's compact form; nil is the
// empty box; anything else is sent as it is, as a client of the API could.
func (ui *webUI) signal(t *testing.T, workflowID, name string, typed []byte) {
	t.Helper()
	// The page knows the run it shows.
	var desc struct {
		WorkflowExecutionInfo struct {
			Execution struct {
				RunID string `json:"runId"`
			} `json:"execution"`
		} `json:"workflowExecutionInfo"`
	}
	path := "/api/v1/namespaces/default/workflows/" + url.PathEscape(workflowID)
	require.NoError(t, json.Unmarshal(ui.do(t, http.MethodGet, path, nil), &desc))
	runID := desc.WorkflowExecutionInfo.Execution.RunID
	require.NotEmpty(t, runID)

	var payloads []map[string]any
	if typed != nil {
		payloads = []map[string]any{{
			"metadata": map[string]string{"encoding": base64.StdEncoding.EncodeToString([]byte("json/plain"))},
			"data":     base64.StdEncoding.EncodeToString(typed),
		}}
	}
	ui.do(t, http.MethodPost, path+"/signal/"+url.PathEscape(name), map[string]any{
		"signalName":        name,
		"workflowExecution": map[string]string{"workflowId": workflowID, "runId": runID},
		"input":             map[string]any{"payloads": payloads},
	})
}

// sdkErrors keeps the error lines the Temporal SDK logs, quiet otherwise.
type sdkErrors struct {
	quietSDKLogger
	mu    sync.Mutex
	lines []string
}

// Error keeps msg with its key-values, which name the workflow.
func (l *sdkErrors) Error(msg string, keyvals ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, msg+" "+fmt.Sprint(keyvals...))
}

func (l *sdkErrors) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// logged reports whether one line holds every one of substrs.
func (l *sdkErrors) logged(substrs ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if !slices.ContainsFunc(substrs, func(s string) bool { return !strings.Contains(line, s) }) {
			return true
		}
	}
	return false
}

// An approve signal sent from the Web UI runs the lifecycle to DONE, and the
// decision's By and Comment are taken, whatever the case of their keys;
// they are recorded on the TICKET_READY event the approval emitted.
func TestWebUI_ApproveSignalRunsToDone(t *testing.T) {
	t.Parallel()
	// The worker's SDK logs through a client of this test's, to show what
	// it says of a body it cannot decode.
	b := setup(t, setupOptions{noWorker: true})
	sdkLog := &sdkErrors{}
	c, err := client.Dial(client.Options{HostPort: server.FrontendAddress(), Namespace: "default", Logger: sdkLog})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	b.client, b.starter.Client = c, c
	b.startWorker(t, "webui")
	ui := startWebUI(t)
	cases := []struct {
		name        string
		sent        [][]byte // signals, in order
		by, comment string
		logged      string // an SDK error line the case must cause
	}{
		{name: "by", sent: [][]byte{[]byte(`{"By":"ana"}`)}, by: "ana"},
		{name: "lower-case keys", sent: [][]byte{[]byte(`{"by":"ana","comment":"ok"}`)}, by: "ana", comment: "ok"},
		{name: "empty body", sent: [][]byte{nil}},
		// The page refuses to send what is not JSON; sent through the API
		// anyway, it cannot be decoded and the worker's SDK drops it (an
		// error in the worker log): the lifecycle still waits, and takes the
		// next approval, not an empty one.
		{name: "malformed body dropped", sent: [][]byte{[]byte(`{"By":`), []byte(`{"By":"bo"}`)}, by: "bo",
			logged: "Corrupted signal received on channel approve"},
		{name: "JSON that is not an object dropped", sent: [][]byte{[]byte(`"ana"`), []byte(`{"Comment":"second"}`)},
			comment: "second", logged: "Corrupted signal received on channel approve"},
	}
	// The group returns once its parallel cases are done, so the audit
	// below sees every lifecycle finished.
	t.Run("cases", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				id := uniqueID("webui")
				b.create(t, id)
				b.waitStep(t, id, workflows.StepAwaitingApproval)
				for _, body := range tc.sent {
					ui.signal(t, workflows.ObjectiveWorkflowID(id), workflows.Approve, body)
				}
				st := b.waitStep(t, id, workflows.StepDone)
				require.Equal(t, domain.StatusDone, st.Status)
				require.Equal(t, domain.GatePass, st.GateResult)

				events, err := b.store.ListEvents(context.Background(), store.ListEventsParams{SubjectID: id})
				require.NoError(t, err)
				require.Len(t, events, 1, "one approval, one TICKET_READY")
				ev := events[0]
				require.Equal(t, domain.EventTicketReady, ev.EventType)
				require.Equal(t, tc.by, ev.DecidedBy, "who approved, from the signal's body")
				require.Equal(t, tc.comment, ev.Comment)
				if tc.logged != "" {
					// Logged when the body was dropped, before the next one was taken.
					require.True(t, sdkLog.logged(tc.logged, workflows.ObjectiveWorkflowID(id)),
						"the worker's SDK says it dropped the signal: %q", sdkLog.all())
				}
			})
		}
	})
	b.requireAuditClean(t)
}
