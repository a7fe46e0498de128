package starter_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/starter"
)

// A plaintext dial's early EOF is a misconfiguration only when the address
// completes a TLS handshake; a server that does not is left to the wait.
func TestPlaintextToTLS_OnlyWhenTheServerSpeaksTLS(t *testing.T) {
	t.Parallel()
	preface := errors.New(`connection error: desc = "error reading server preface: EOF"`)
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	addr := func(s *httptest.Server) string {
		return strings.TrimPrefix(strings.TrimPrefix(s.URL, "https://"), "http://")
	}
	ctx := context.Background()

	require.True(t, starter.PlaintextToTLS(ctx, config.TemporalConfig{Address: addr(tlsSrv)}, preface))
	require.False(t, starter.PlaintextToTLS(ctx, config.TemporalConfig{Address: addr(plain)}, preface), "no TLS there")
	require.False(t, starter.PlaintextToTLS(ctx, config.TemporalConfig{Address: addr(tlsSrv)},
		errors.New("connection refused")), "another failure")
	withTLS := config.TemporalConfig{Address: addr(tlsSrv)}
	withTLS.TLS.Enabled = true
	require.False(t, starter.PlaintextToTLS(ctx, withTLS, preface), "a TLS client's failure is another matter")
}
