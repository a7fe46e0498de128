package starter

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/tlsfiles/testca"
)

func TestClientOptions_APIKeyTurnsTLSOnUnlessDisabled(t *testing.T) {
	t.Parallel()
	ca := testca.New(t, t.TempDir(), "temporal")
	for _, tc := range []struct {
		name        string
		cfg         config.TemporalConfig
		tls         bool
		tlsDisabled bool
		rootsFromCA bool
		withAPIKey  bool
		serverName  string
		clientCerts int
	}{
		{name: "nothing set: plaintext", cfg: config.TemporalConfig{}},
		{name: "an API key alone: TLS with the system roots", cfg: config.TemporalConfig{APIKey: "k"}, tls: true, withAPIKey: true},
		{name: "an API key and disabled: plaintext, said to the SDK", cfg: config.TemporalConfig{APIKey: "k",
			TLS: config.TLSConfig{Disabled: true}}, tlsDisabled: true, withAPIKey: true},
		{name: "enabled: TLS", cfg: config.TemporalConfig{TLS: config.TLSConfig{Enabled: true}}, tls: true},
		{name: "a CA: TLS verified by it", cfg: config.TemporalConfig{TLS: config.TLSConfig{CAFile: ca.File}},
			tls: true, rootsFromCA: true},
		{name: "a server name alone: TLS", cfg: config.TemporalConfig{TLS: config.TLSConfig{ServerName: "temporal"}},
			tls: true, serverName: "temporal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts, err := ClientOptions(tc.cfg, nil)
			require.NoError(t, err)
			require.Equal(t, tc.tls, opts.ConnectionOptions.TLS != nil)
			require.Equal(t, tc.tlsDisabled, opts.ConnectionOptions.TLSDisabled)
			require.Equal(t, tc.withAPIKey, opts.Credentials != nil)
			if tc.tls {
				require.Equal(t, uint16(tls.VersionTLS12), opts.ConnectionOptions.TLS.MinVersion)
				require.Equal(t, tc.serverName, opts.ConnectionOptions.TLS.ServerName)
				require.Equal(t, tc.rootsFromCA, opts.ConnectionOptions.TLS.RootCAs != nil)
			}
		})
	}
}

// frontend is a gRPC server standing for a Temporal frontend at the
// transport level: it answers GetSystemInfo (all Dial asks) and records
// the authorization header it was sent.
type frontend struct {
	workflowservice.UnimplementedWorkflowServiceServer
	addr string
	mu   sync.Mutex
	auth []string
}

func (f *frontend) GetSystemInfo(ctx context.Context, _ *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.auth = append(f.auth, md.Get("authorization")...)
	f.mu.Unlock()
	if got := md.Get("authorization"); len(got) > 0 && got[0] != "Bearer right-key" {
		return nil, status.Error(codes.Unauthenticated, "API key not accepted")
	}
	return &workflowservice.GetSystemInfoResponse{}, nil
}

func (f *frontend) authorization() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auth...)
}

// startFrontend serves a frontend on loopback with creds (nil: plaintext).
func startFrontend(t *testing.T, creds credentials.TransportCredentials) *frontend {
	t.Helper()
	var opts []grpc.ServerOption
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	srv := grpc.NewServer(opts...)
	f := &frontend{}
	workflowservice.RegisterWorkflowServiceServer(srv, f)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f.addr = l.Addr().String()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return f
}

// Each way a connection's security can be wrong is refused at Dial, and
// the error names the setting that fixes it; the right settings connect,
// and the API key reaches the server.
func TestDial_SecurityMismatchesNameTheSettingThatFixesThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, other := testca.New(t, dir, "server"), testca.New(t, dir, "other")
	serverCert, serverKey := ca.Issue(t, "frontend", "temporal", "127.0.0.1")
	clientCert, clientKey := ca.Issue(t, "client")
	strangerCert, strangerKey := other.Issue(t, "stranger")
	pair, err := tls.LoadX509KeyPair(serverCert, serverKey)
	require.NoError(t, err)

	plain := startFrontend(t, nil)
	serverTLS := startFrontend(t, credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair}}))
	mutual := startFrontend(t, credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}))

	for _, tc := range []struct {
		name    string
		server  *frontend
		cfg     config.TemporalConfig
		wantErr string // "" connects
	}{
		{name: "plaintext", server: plain},
		{name: "TLS verified by the CA", server: serverTLS, cfg: config.TemporalConfig{TLS: config.TLSConfig{CAFile: ca.File}}},
		{name: "TLS verified under a name of the certificate", server: serverTLS,
			cfg: config.TemporalConfig{TLS: config.TLSConfig{CAFile: ca.File, ServerName: "temporal"}}},
		{name: "mTLS", server: mutual,
			cfg: config.TemporalConfig{TLS: config.TLSConfig{CAFile: ca.File, CertFile: clientCert, KeyFile: clientKey}}},
		{name: "an API key over TLS", server: serverTLS,
			cfg: config.TemporalConfig{APIKey: "right-key", TLS: config.TLSConfig{CAFile: ca.File}}},
		{name: "an API key in plaintext, TLS disabled", server: plain,
			cfg: config.TemporalConfig{APIKey: "right-key", TLS: config.TLSConfig{Disabled: true}}},

		{name: "a CA that did not sign the server's certificate", server: serverTLS,
			cfg:     config.TemporalConfig{TLS: config.TLSConfig{CAFile: other.File}},
			wantErr: "not signed by the CA in temporal.tls.ca_file"},
		{name: "no CA for a private CA's certificate", server: serverTLS,
			cfg:     config.TemporalConfig{TLS: config.TLSConfig{Enabled: true}},
			wantErr: "set temporal.tls.ca_file"},
		{name: "a server name the certificate does not hold", server: serverTLS,
			cfg:     config.TemporalConfig{TLS: config.TLSConfig{CAFile: ca.File, ServerName: "elsewhere"}},
			wantErr: "set temporal.tls.server_name"},
		{name: "plaintext to a TLS server", server: serverTLS,
			wantErr: "set temporal.tls.enabled=true"},
		{name: "an API key in plaintext to a TLS server", server: serverTLS,
			cfg:     config.TemporalConfig{APIKey: "right-key", TLS: config.TLSConfig{Disabled: true}},
			wantErr: "unset temporal.tls.disabled"},
		{name: "TLS to a plaintext server", server: plain,
			cfg:     config.TemporalConfig{TLS: config.TLSConfig{Enabled: true}},
			wantErr: "the server does not speak TLS"},
		{name: "an API key to a plaintext server, TLS not disabled", server: plain,
			cfg:     config.TemporalConfig{APIKey: "right-key"},
			wantErr: "set temporal.tls.disabled=true"},
		{name: "no client certificate for mTLS", server: mutual,
			cfg:     config.TemporalConfig{TLS: config.TLSConfig{CAFile: ca.File}},
			wantErr: "(mTLS): set temporal.tls.cert_file and temporal.tls.key_file"},
		{name: "a client certificate from another CA", server: mutual,
			cfg:     config.TemporalConfig{TLS: config.TLSConfig{CAFile: ca.File, CertFile: strangerCert, KeyFile: strangerKey}},
			wantErr: "temporal.tls.cert_file (" + strangerCert + ")"},
		{name: "a wrong API key", server: serverTLS,
			cfg:     config.TemporalConfig{APIKey: "wrong-key", TLS: config.TLSConfig{CAFile: ca.File}},
			wantErr: "check temporal.api_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg
			cfg.Address, cfg.Namespace = tc.server.addr, "default"
			c, err := Dial(context.Background(), cfg, nil)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.ErrorContains(t, err, "connect to Temporal at "+tc.server.addr)
				return
			}
			require.NoError(t, err)
			c.Close()
			if cfg.APIKey != "" {
				require.Contains(t, tc.server.authorization(), "Bearer "+cfg.APIKey)
			}
		})
	}
}
