package topology

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/dial"
	"github.com/azolla/azolla/internal/tlsfiles/testca"
)

// apiKey is the key the server's API-key check (TEMPORALSERVER_API_KEY)
// accepts.
const apiKey = "azolla-test-key"

// acceptedKey is the line the server prints the first time a call of
// method carries the API key.
func acceptedKey(method string) string {
	return "temporalserver: API key accepted: /temporal.api.workflowservice.v1.WorkflowService/" + method
}

// tlsSetup is the certificates of the TLS test: one CA signs the
// frontend's, the control plane's and the clients' certificates; another
// CA's certificate is the stranger's.
type tlsSetup struct {
	ca, other                   *testca.CA
	serverCert, serverKey       string // frontend and control plane: names temporal and 127.0.0.1
	clientCert, clientKey       string
	strangerCert, strangerKey   string
	frontendTLS, frontendMutual map[string]string // the temporal service's TLS variables
	azollaTLS, azollaMutual     map[string]string // an azolla process's temporal.tls.* and API key
	azollaPlainKey              map[string]string
	tlsConn, mutualConn         client.ConnectionOptions
}

func newTLSSetup(t *testing.T) *tlsSetup {
	t.Helper()
	dir := t.TempDir()
	s := &tlsSetup{ca: testca.New(t, dir, "azolla-test"), other: testca.New(t, dir, "stranger")}
	s.serverCert, s.serverKey = s.ca.Issue(t, "temporal", "temporal", "127.0.0.1")
	s.clientCert, s.clientKey = s.ca.Issue(t, "azolla-client")
	s.strangerCert, s.strangerKey = s.other.Issue(t, "stranger-client")
	s.frontendTLS = map[string]string{
		"TEMPORAL_TLS_FRONTEND_CERT":        s.serverCert,
		"TEMPORAL_TLS_FRONTEND_KEY":         s.serverKey,
		"TEMPORAL_TLS_SERVER_CA_CERT":       s.ca.File,
		"TEMPORAL_TLS_FRONTEND_SERVER_NAME": "temporal",
		"TEMPORALSERVER_API_KEY":            apiKey,
	}
	s.frontendMutual = with(s.frontendTLS, map[string]string{
		"TEMPORAL_TLS_REQUIRE_CLIENT_AUTH": "true",
		"TEMPORAL_TLS_CLIENT1_CA_CERT":     s.ca.File,
	})
	s.azollaTLS = map[string]string{
		"AZOLLA_TEMPORAL_TLS_CA_FILE":     s.ca.File,
		"AZOLLA_TEMPORAL_TLS_SERVER_NAME": "temporal",
		"AZOLLA_TEMPORAL_API_KEY":         apiKey,
	}
	s.azollaMutual = with(s.azollaTLS, map[string]string{
		"AZOLLA_TEMPORAL_TLS_CERT_FILE": s.clientCert,
		"AZOLLA_TEMPORAL_TLS_KEY_FILE":  s.clientKey,
	})
	s.azollaPlainKey = map[string]string{"AZOLLA_TEMPORAL_API_KEY": apiKey, "AZOLLA_TEMPORAL_TLS_DISABLED": "true"}
	s.tlsConn = client.ConnectionOptions{TLS: &tls.Config{RootCAs: s.ca.Pool(), ServerName: "temporal"}}
	pair, err := tls.LoadX509KeyPair(s.clientCert, s.clientKey)
	require.NoError(t, err)
	s.mutualConn = client.ConnectionOptions{TLS: &tls.Config{RootCAs: s.ca.Pool(), ServerName: "temporal",
		Certificates: []tls.Certificate{pair}}}
	return s
}

// with is a copy of base with more added.
func with(base map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// TLS to Temporal, as production runs it: the server on PostgreSQL with
// its frontend on TLS, then on mTLS, then plaintext, each time behind an
// API-key check. azolla temporal setup, the worker, the control plane and
// the client commands connect with temporal.tls.* and the API key, and an
// objective reaches DONE on each secured server, through a remote worker
// that reaches the control plane over mTLS; the server sees the key on the
// worker's and the client's calls. Every wrong setting is refused with an
// error naming the setting that fixes it: a CA that did not sign the
// server's certificate, plaintext to a TLS server, a wrong key, no client
// certificate or one from another CA, an API key to a plaintext server
// without temporal.tls.disabled; and the remote worker without a client
// certificate the control plane trusts.
func TestTLS_TemporalAndControlPlaneConnectionsWithTLSMTLSAndAnAPIKey(t *testing.T) {
	enabled(t)
	begin := time.Now()
	s := newTLSSetup(t)
	c := startClusterWith(t, "COMMAND_DIAZOTROPH", s.frontendTLS, s.tlsConn, client.NewAPIKeyStaticCredentials(apiKey))
	t.Logf("schema and a TLS Temporal server up in %s", c.started.Round(time.Millisecond))
	dir := t.TempDir()
	n := 0
	env := func(service string, extra map[string]string) []string {
		n++
		d := filepath.Join(dir, fmt.Sprintf("%s-%d", service, n))
		require.NoError(t, os.MkdirAll(d, 0o750))
		return c.local.env(t, service, d, with(extra, map[string]string{"AZOLLA_LOG_LEVEL": "warn",
			"AZOLLA_LIFECYCLE_POLL_INTERVAL": "200ms"}))
	}
	st, err := dial.Open(context.Background(), dial.Config{Driver: config.DriverPostgres,
		DSN: envValue(env("control-plane", nil), "AZOLLA_STORE_DSN")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })

	// TLS: the one-shots, the control plane (with its own mTLS), a worker
	// and a remote worker; one objective to DONE.
	run(t, c.azolla, env("temporal-setup", s.azollaTLS), "temporal", "setup")
	run(t, c.azolla, env("migrate", nil), "migrate")
	token := strings.TrimSpace(run(t, c.azolla, env("control-plane", nil), "worker-token", "create", "remote-tls"))
	tokenFile := filepath.Join(dir, "remote-tls.token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	// The control plane serves HTTPS and requires client certificates.
	startControlPlane := func(temporal map[string]string) *proc {
		e := env("control-plane", with(temporal, map[string]string{
			"AZOLLA_CONTROL_PLANE_CERT_FILE":      s.serverCert,
			"AZOLLA_CONTROL_PLANE_KEY_FILE":       s.serverKey,
			"AZOLLA_CONTROL_PLANE_CLIENT_CA_FILE": s.ca.File,
		}))
		p := startProc(t, "control-plane", c.azolla, e, "control-plane", "--identity", "control-plane")
		// Its /readyz is on its own, mTLS, address.
		waitFor(t, time.Minute, "the control plane's /readyz answers 200 over mTLS", func() bool {
			resp, err := s.httpsClient(t).Get("https://" + c.local.controlPlane + "/readyz")
			if err != nil {
				return false
			}
			_ = resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, p)
		return p
	}
	controlPlane := startControlPlane(s.azollaTLS)
	// A remote worker knows only the control plane's URL, its CA, its
	// token and, here, its client certificate.
	remoteEnv := withoutKeys(env("worker", nil), "AZOLLA_STORE_", "PGPASSWORD", "AZOLLA_TEMPORAL_", "AZOLLA_CONTROL_PLANE_REDIS_URL")
	remoteEnv = append(remoteEnv, `AZOLLA_DIAZOTROPH_COMMAND_RUN=echo "ran $AZOLLA_WORK_ORDER_ID"`)
	remoteArgs := func(cert, key string) []string {
		args := []string{"remote-worker", "--control-plane", "https://" + c.local.controlPlane, "--token-file", tokenFile,
			"--worker-id", "remote-tls", "--max-wait", "2s", "--control-plane-ca", s.ca.File}
		if cert != "" {
			args = append(args, "--control-plane-cert", cert, "--control-plane-key", key)
		}
		return args
	}
	// Without a client certificate, or with one from another CA, it stops
	// at once, naming the flags.
	for _, pair := range [][2]string{{}, {s.strangerCert, s.strangerKey}} {
		out := runFailing(t, c.azolla, remoteEnv, remoteArgs(pair[0], pair[1])...)
		require.Contains(t, out, "the control plane requires a client certificate signed by a CA it trusts (mTLS)")
		require.Contains(t, out, "--control-plane-cert and --control-plane-key")
	}
	remote := startProc(t, "remote-tls", c.azolla, remoteEnv, remoteArgs(s.clientCert, s.clientKey)...)

	workerEnv := env("worker", s.azollaTLS)
	worker := startProc(t, "worker-tls", c.azolla, workerEnv, "worker", "--identity", "worker-tls")
	waitReady(t, envValue(workerEnv, opsAddress), worker)
	toDone(t, c, st, env("control-plane", s.azollaTLS), "over-tls", c.server, controlPlane, remote, worker)
	requireKeySeen(t, c.server, "PollWorkflowTaskQueue", "SignalWithStartWorkflowExecution")

	// TLS: each wrong setting, on a client command and on the worker.
	for _, tc := range []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{"another CA", with(s.azollaTLS, map[string]string{"AZOLLA_TEMPORAL_TLS_CA_FILE": s.other.File}),
			"not signed by the CA in temporal.tls.ca_file"},
		{"a name the certificate does not hold", with(s.azollaTLS, map[string]string{"AZOLLA_TEMPORAL_TLS_SERVER_NAME": "elsewhere"}),
			"set temporal.tls.server_name"},
		{"plaintext", nil, "set temporal.tls.enabled=true"},
		{"the API key in plaintext", s.azollaPlainKey, "unset temporal.tls.disabled"},
		{"a wrong API key", with(s.azollaTLS, map[string]string{"AZOLLA_TEMPORAL_API_KEY": "wrong-key"}),
			"the server refused the credentials: check temporal.api_key"},
	} {
		out := runFailing(t, c.azolla, env("temporal-setup", tc.extra), "temporal", "setup")
		require.Contains(t, out, tc.want, tc.name)
	}
	out := runFailing(t, c.azolla, env("worker", with(s.azollaTLS, map[string]string{"AZOLLA_TEMPORAL_TLS_CA_FILE": s.other.File})),
		"worker", "--identity", "worker-wrong-ca")
	require.Contains(t, out, "not signed by the CA in temporal.tls.ca_file", "the worker refuses to start")

	// mTLS: the server restarted to require client certificates; the
	// worker and control plane restarted with theirs.
	worker.stop()
	controlPlane.stop()
	c.startServer(t, s.frontendMutual, s.mutualConn, client.NewAPIKeyStaticCredentials(apiKey))
	for _, tc := range []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{"no client certificate", s.azollaTLS, "the server requires a client certificate (mTLS): set temporal.tls.cert_file and temporal.tls.key_file"},
		{"another CA's client certificate", with(s.azollaTLS, map[string]string{
			"AZOLLA_TEMPORAL_TLS_CERT_FILE": s.strangerCert, "AZOLLA_TEMPORAL_TLS_KEY_FILE": s.strangerKey}),
			"temporal.tls.cert_file (" + s.strangerCert + ") is not one"},
	} {
		out := runFailing(t, c.azolla, env("temporal-setup", tc.extra), "temporal", "setup")
		require.Contains(t, out, tc.want, tc.name)
	}
	run(t, c.azolla, env("temporal-setup", s.azollaMutual), "temporal", "setup")
	controlPlane = startControlPlane(s.azollaMutual)
	workerEnv = env("worker", s.azollaMutual)
	worker = startProc(t, "worker-mtls", c.azolla, workerEnv, "worker", "--identity", "worker-mtls")
	waitReady(t, envValue(workerEnv, opsAddress), worker)
	toDone(t, c, st, env("control-plane", s.azollaMutual), "over-mtls", c.server, controlPlane, remote, worker)
	requireKeySeen(t, c.server, "PollWorkflowTaskQueue", "SignalWithStartWorkflowExecution")

	// Plaintext behind the same key check: the key goes only where
	// temporal.tls.disabled says so.
	worker.stop()
	controlPlane.stop()
	c.startServer(t, map[string]string{"TEMPORALSERVER_API_KEY": apiKey}, client.ConnectionOptions{TLSDisabled: true},
		client.NewAPIKeyStaticCredentials(apiKey))
	out = runFailing(t, c.azolla, env("temporal-setup", map[string]string{"AZOLLA_TEMPORAL_API_KEY": apiKey}), "temporal", "setup")
	require.Contains(t, out, "an API key turns TLS on: use a TLS endpoint, or set temporal.tls.disabled=true")
	require.NotContains(t, c.server.out.String(), acceptedKey("DescribeNamespace"), "nothing has sent this server the key yet")
	run(t, c.azolla, env("temporal-setup", s.azollaPlainKey), "temporal", "setup")
	requireKeySeen(t, c.server, "DescribeNamespace")

	t.Logf("TLS, mTLS and plaintext with an API key, with their refusals: %s", time.Since(begin).Round(time.Millisecond))
}

// toDone creates objective id (a command, which runs on the remote worker)
// and approves it through the client commands with env, and waits until
// the store holds it DONE.
func toDone(t *testing.T, c *cluster, st store.Store, env []string, id string, procs ...*proc) {
	t.Helper()
	run(t, c.azolla, env, "objective", "create", "--id", id, "--title", "Secured "+id,
		"--criteria", "its command runs on the remote worker")
	run(t, c.azolla, env, "objective", "approve", id, "--by", "tls-test")
	waitFor(t, 2*time.Minute, id+" DONE", func() bool { return done(st, []string{id}) == 1 }, procs...)
}

// requireKeySeen checks that the server saw the API key on calls of each
// method.
func requireKeySeen(t *testing.T, server *proc, methods ...string) {
	t.Helper()
	for _, m := range methods {
		require.Contains(t, server.out.String(), acceptedKey(m), "the server saw the API key on %s", m)
	}
}

// runFailing runs bin args with env, requires that it fails within a
// minute, and returns its output.
func runFailing(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "%s %s did not end within a minute:\n%s", filepath.Base(bin), strings.Join(args, " "), out)
	require.Error(t, err, "%s %s succeeded:\n%s", filepath.Base(bin), strings.Join(args, " "), out)
	t.Logf("refused: azolla %s\n%s", args[0], lastLine(string(out)))
	return string(out)
}

// lastLine is the last non-empty line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// httpsClient is an HTTPS client showing the client certificate.
func (s *tlsSetup) httpsClient(t *testing.T) *http.Client {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(s.clientCert, s.clientKey)
	require.NoError(t, err)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: s.ca.Pool(), Certificates: []tls.Certificate{pair}}}}
}
