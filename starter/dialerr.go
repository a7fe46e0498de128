package starter

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/azolla/azolla/internal/config"
)

// dialError says what failed when connecting to the frontend of cfg and,
// for a failure a setting fixes, which setting. gRPC reports handshake
// failures as text inside an Unavailable status, so the cases are told
// apart by the text Go's TLS stack and HTTP/2 put there.
func dialError(cfg config.TemporalConfig, err error) error {
	where := fmt.Sprintf("connect to Temporal at %s (namespace %s)", cfg.Address, cfg.Namespace)
	if hint := dialHint(cfg, err); hint != "" {
		return fmt.Errorf("%s: %s: %w", where, hint, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}

func dialHint(cfg config.TemporalConfig, err error) string {
	msg := err.Error()
	has := func(parts ...string) bool {
		for _, p := range parts {
			if strings.Contains(msg, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has(untrustedServer...):
		if cfg.TLS.CAFile != "" {
			return "the server's certificate is not signed by the CA in temporal.tls.ca_file (" + cfg.TLS.CAFile + ")"
		}
		return "the server's certificate is not signed by a CA this host trusts: set temporal.tls.ca_file to the CA that signed it"
	case has(wrongName...):
		return "the server's certificate does not name the address dialled: set temporal.tls.server_name to a name it holds"
	case has(clientRefused...):
		// Go's client sends no certificate the server's CA list rules out,
		// so a certificate from another CA shows as none at all.
		return mtlsHint(cfg)
	case cfg.UsesTLS() && has("broken pipe", "connection reset by peer"):
		// The same refusal when the server's alert loses the race with the
		// client's first write.
		return "the server closed the connection after the TLS handshake, as one that refuses a client certificate does; " + mtlsHint(cfg)
	case has(notTLS...):
		if cfg.APIKey != "" && !cfg.TLS.On() {
			return "the server does not speak TLS, and an API key turns TLS on: use a TLS endpoint, or set temporal.tls.disabled=true if the key may travel in plaintext"
		}
		return "the server does not speak TLS: unset temporal.tls.* or use its TLS endpoint"
	case !cfg.UsesTLS() && has("server preface", "http2: frame too large", "connection reset by peer"):
		if cfg.TLS.Disabled {
			return "the server did not answer plaintext gRPC; if it requires TLS, unset temporal.tls.disabled"
		}
		return "the server did not answer plaintext gRPC; if it requires TLS, set temporal.tls.enabled=true (and temporal.tls.ca_file for a private CA)"
	case status.Code(err) == codes.Unauthenticated, status.Code(err) == codes.PermissionDenied:
		if cfg.APIKey != "" {
			return "the server refused the credentials: check temporal.api_key"
		}
		return "the server refused an unauthenticated client: set temporal.api_key or a client certificate"
	}
	return ""
}

func mtlsHint(cfg config.TemporalConfig) string {
	if cfg.TLS.CertFile == "" {
		return "the server requires a client certificate (mTLS): set temporal.tls.cert_file and temporal.tls.key_file"
	}
	return "the server requires a client certificate (mTLS) signed by a CA it trusts, and temporal.tls.cert_file (" +
		cfg.TLS.CertFile + ") is not one"
}

// Misconfigured reports whether err, from Dial, is a TLS handshake that
// failed on a certificate or on TLS itself: the server's certificate is
// not trusted or does not name the address, a client certificate is
// required or refused, or one side does not speak TLS. A cluster still
// starting never answers so; only a setting fixes it.
func Misconfigured(err error) bool {
	msg := err.Error()
	for _, group := range [][]string{untrustedServer, wrongName, clientRefused, notTLS} {
		for _, p := range group {
			if strings.Contains(msg, p) {
				return true
			}
		}
	}
	return false
}

// What Go's TLS stack says of a handshake that failed on a certificate or
// on TLS itself, as gRPC passes it on in its text.
var (
	untrustedServer = []string{"certificate signed by unknown authority"}
	wrongName       = []string{"certificate is valid for", "certificate is not valid for"}
	// Go's client sends no certificate the server's CA list rules out, so
	// a certificate from another CA shows as none at all.
	clientRefused = []string{"tls: certificate required", "tls: unknown certificate authority", "tls: bad certificate",
		"tls: certificate unknown"}
	notTLS = []string{"first record does not look like a TLS handshake"}
)

// PlaintextToTLS reports whether err, from a plaintext Dial, came from a
// server that speaks TLS: gRPC sees only an early EOF, which a proxy in
// front of a cluster still starting also gives, so the address is asked
// for a TLS handshake (certificates unchecked: nothing is sent over it)
// and only a completed one counts.
func PlaintextToTLS(ctx context.Context, cfg config.TemporalConfig, err error) bool {
	if cfg.UsesTLS() || !strings.Contains(err.Error(), "server preface") {
		return false
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 2 * time.Second},
		Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // a protocol probe: no data is sent
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, derr := d.DialContext(hctx, "tcp", cfg.Address)
	if derr != nil {
		return false
	}
	_ = conn.Close()
	return true
}
