package sandbox_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/egress/egresstest"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

const modelKey = "canary-model-key-7c1e9a"

// An allowlist run reaches the hosts it lists through azolla's proxy and
// nothing else, not even directly; the model's endpoint gets the key the
// proxy adds, while the run's environment, processes and files never hold
// it; what was refused is named and counted.
func TestBwrap_AllowlistReachesOnlyItsHostsAndNeverHoldsTheKey(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireBwrap(t)
	var mu sync.Mutex
	var keys []string
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		fmt.Fprintf(w, "model answered %s", r.URL.Path)
	}))
	defer model.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "other answered")
	}))
	defer other.Close()
	modelHost, otherHost := strings.TrimPrefix(model.URL, "http://"), strings.TrimPrefix(other.URL, "http://")

	root := t.TempDir()
	var emu sync.Mutex
	refusedSeen := map[string]int{}
	h, err := sandbox.New(sandbox.Options{Mode: sandbox.ModeBwrap, RunsDir: filepath.Join(root, "runs"),
		Relay: egresstest.Relay(t), Environ: []string{"PATH=" + os.Getenv("PATH"), "MODEL_KEY=" + modelKey},
		OnEgress: func(executor, host string, refused bool, _ int64) {
			emu.Lock()
			defer emu.Unlock()
			if refused {
				refusedSeen[executor+" "+host]++
			}
		}})
	require.NoError(t, err)
	defer h.Close()
	e, err := h.Executor(sandbox.Policy{Name: "patch.command", Network: sandbox.NetworkAllowlist,
		Egress: []string{modelHost}, Credentials: []sandbox.Credential{{Host: modelHost, Header: "X-Api-Key",
			SecretEnv: "MODEL_KEY", BaseURLEnv: "MODEL_BASE_URL", BasePath: "/v1", Scheme: "http"}}}, nil)
	require.NoError(t, err)
	run, err := e.Begin()
	require.NoError(t, err)
	work := t.TempDir()
	line := fmt.Sprintf(`
echo "allowed $(curl -sS --noproxy '' -o /dev/null -w '%%{http_code}' http://%[1]s/through)"
echo "other $(curl -sS --noproxy '' -o /dev/null -w '%%{http_code}' http://%[2]s/steal)"
curl -sS --noproxy '*' -m 5 http://%[2]s/direct >/dev/null 2>&1 && echo "direct reached" || echo "direct failed"
echo "credentialed $(curl -sS "$MODEL_BASE_URL/messages")"
echo "key in env: $(env | grep -c %[3]s)"
echo "key in /proc: $(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -c %[3]s)"
echo "placeholder: $MODEL_KEY"
`, modelHost, otherHost, modelKey)
	var out bytes.Buffer
	o, err := run.Exec(t.Context(), sandbox.Command{Line: line, Dir: work, Stdout: &out, Stderr: &out})
	require.NoError(t, err)
	require.Zero(t, o.ExitCode, out.String())
	got := out.String()
	require.Contains(t, got, "allowed 200")
	require.Contains(t, got, "other 403")
	require.Contains(t, got, "direct failed", "the run has no network of its own but the proxy")
	require.Contains(t, got, "credentialed model answered /v1/messages")
	require.Contains(t, got, "key in env: 0")
	require.Contains(t, got, "key in /proc: 0")
	require.NotContains(t, got, modelKey)
	refused, traffic := run.Egress()
	require.Equal(t, []string{otherHost + " (1)"}, refused)
	require.Len(t, traffic, 1)
	require.Equal(t, modelHost, traffic[0].Host)
	require.Equal(t, 2, traffic[0].Requests)
	require.NoError(t, run.End())
	mu.Lock()
	require.Equal(t, []string{"", modelKey}, keys, "the proxied request carried none; the credentialed one the proxy's")
	mu.Unlock()
	emu.Lock()
	require.Equal(t, map[string]int{"patch.command " + otherHost: 1}, refusedSeen)
	emu.Unlock()
	require.Equal(t, "[redacted:MODEL_KEY]", e.Secrets().String(modelKey), "the key is redacted like any secret")
}

func TestPolicy_AKeyTheProxyAddsIsNeverAlsoPassed(t *testing.T) {
	t.Parallel()
	p := sandbox.Policy{Name: "patch.command", Network: sandbox.NetworkAllowlist, PassEnv: []string{"MODEL_KEY"},
		Credentials: []sandbox.Credential{{Host: "api.example.com", Header: "X-Api-Key", SecretEnv: "MODEL_KEY"}}}
	require.ErrorContains(t, p.Check(), "patch.command.credentials[0].secret_env: MODEL_KEY is also passed to the run")
	p = sandbox.Policy{Name: "gate", Network: sandbox.NetworkNone, Egress: []string{"api.example.com"}}
	require.ErrorContains(t, p.Check(), `gate.network: must be "allowlist" for egress and credentials to apply`)
	p = sandbox.Policy{Name: "gate", Network: sandbox.NetworkAllowlist, Egress: []string{"https://api.example.com/v1"}}
	require.ErrorContains(t, p.Check(), "gate.egress[0]: must be a host name")
}
