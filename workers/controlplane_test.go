package workers_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/remoteworker"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/internal/tlsfiles/testca"
	"github.com/azolla/azolla/workers"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir and
// returns their paths and a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "control plane"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cp.pem"), filepath.Join(dir, "cp-key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// startControlPlane runs workers.RunControlPlane on a loopback port until
// the test ends and returns its address; tune changes its options.
func startControlPlane(t *testing.T, cfg config.Config, tune ...func(*workers.ControlPlaneOptions)) string {
	t.Helper()
	st := storetest.NewSQLite(t)
	tr, err := workers.OpenTransport(context.Background(), cfg.ControlPlane, st)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	o := workers.ControlPlaneOptions{Config: cfg, Store: st, Listener: ln,
		Service: workers.NewControlPlane(cfg, st, tr, nil, slog.New(slog.DiscardHandler), "test"), Log: slog.New(slog.DiscardHandler)}
	for _, f := range tune {
		f(&o)
	}
	go func() { done <- workers.RunControlPlane(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return ln.Addr().String()
}

func TestRunControlPlane_ServesHTTPSWithTheConfiguredCertificate(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	cfg.ControlPlane.CertFile, cfg.ControlPlane.KeyFile = certFile, keyFile
	addr := startControlPlane(t, cfg)

	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + addr + controlplane.PathHealth)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotNil(t, resp.TLS)

	// Plain http to the TLS port gets no answer from the API.
	resp, err = http.Post("http://"+addr+controlplane.PathClaim, "application/json", nil)
	if err == nil {
		_ = resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "Go's TLS server answers plain http with 400")
	}
}

func TestRunControlPlane_WithTokensRefusesARequestWithoutOne(t *testing.T) {
	t.Parallel()
	addr := startControlPlane(t, config.Default())
	resp, err := http.Post("http://"+addr+controlplane.PathClaim, "application/json",
		strings.NewReader(`{"worker_id":"w","streams":["patch"],"max_wait_ms":0}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

func TestRunControlPlane_WithoutTokensOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.ControlPlane.Address = "0.0.0.0:0"
	err := workers.RunControlPlane(context.Background(), workers.ControlPlaneOptions{Config: cfg,
		Unauthenticated: true, Log: slog.New(slog.DiscardHandler)})
	require.ErrorContains(t, err, "loopback only")

	// A listener handed over is judged by the address it listens on.
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	defer ln.Close()
	err = workers.RunControlPlane(context.Background(), workers.ControlPlaneOptions{Config: config.Default(),
		Unauthenticated: true, Listener: ln, Log: slog.New(slog.DiscardHandler)})
	require.ErrorContains(t, err, "loopback only")
}

// With control_plane.client_ca_file the control plane serves only clients
// whose certificate its CA signed: a remote worker showing one gets as far
// as its token (unknown here, so 401); one showing none, or one from
// another CA, is refused at the handshake with an error naming the flags
// that fix it, at once rather than retried.
func TestRunControlPlane_MTLSServesOnlyClientsWithATrustedCertificate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, other := testca.New(t, dir, "control-plane"), testca.New(t, dir, "other")
	cfg := config.Default()
	cfg.ControlPlane.CertFile, cfg.ControlPlane.KeyFile = ca.Issue(t, "server", "127.0.0.1")
	cfg.ControlPlane.ClientCAFile = ca.File
	addr := startControlPlane(t, cfg)
	workerCert, workerKey := ca.Issue(t, "worker")
	strangerCert, strangerKey := other.Issue(t, "stranger")

	heartbeat := func(certFile, keyFile string) error {
		c, err := remoteworker.NewClient(remoteworker.ClientOptions{BaseURL: "https://" + addr, Token: "unknown-token",
			CAFile: ca.File, CertFile: certFile, KeyFile: keyFile})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err = c.Heartbeat(ctx, controlplane.HeartbeatRequest{WorkerID: "w", JobID: "j", LeaseToken: "t"})
		require.NoError(t, ctx.Err(), "a refused certificate is not retried until the context ends")
		return err
	}

	var apiErr *remoteworker.APIError
	require.ErrorAs(t, heartbeat(workerCert, workerKey), &apiErr)
	require.Equal(t, http.StatusUnauthorized, apiErr.Status, "past TLS, the token decides")
	for name, pair := range map[string][2]string{"no certificate": {}, "another CA's": {strangerCert, strangerKey}} {
		err := heartbeat(pair[0], pair[1])
		require.ErrorContains(t, err, "requires a client certificate signed by a CA it trusts (mTLS)", name)
		require.ErrorContains(t, err, "--control-plane-cert and --control-plane-key", name)
	}
}
