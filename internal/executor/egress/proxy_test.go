package egress_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/egress"
)

func TestAllowed(t *testing.T) {
	t.Parallel()
	allow := []string{"api.anthropic.com", "127.0.0.1:8080", "*.example.com"}
	for host, want := range map[string]bool{
		"api.anthropic.com:443":  true,
		"API.Anthropic.com":      true,
		"api.anthropic.com.:443": true,
		"anthropic.com:443":      false,
		"evil.com:443":           false,
		"127.0.0.1:8080":         true,
		"127.0.0.1:8081":         false,
		"a.example.com:443":      true,
		"example.com:443":        false,
		"a.example.com.evil.com": false,
	} {
		require.Equal(t, want, egress.Allowed(allow, host), host)
	}
}

type testBundle struct {
	proxy  *egress.Proxy
	client *http.Client
	socket string
	// seen is what the upstream got, by request.
	mu   sync.Mutex
	seen []*http.Request
}

// setup starts an upstream that records requests, a proxy allowing it and
// crediting it as cred (when cred is set), and a client that goes through
// the proxy's socket.
func setup(t *testing.T, allowUpstream bool, withCredential bool) (*testBundle, *httptest.Server, *httptest.Server) {
	t.Helper()
	b := &testBundle{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.seen = append(b.seen, r.Clone(context.Background()))
		b.mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "upstream got %s %s %q", r.Method, r.URL.Path, body)
	}))
	t.Cleanup(up.Close)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "other answered")
	}))
	t.Cleanup(other.Close)
	upHost := strings.TrimPrefix(up.URL, "http://")
	b.proxy = &egress.Proxy{}
	if allowUpstream {
		b.proxy.Allow = []string{upHost}
	}
	if withCredential {
		b.proxy.Credentials = []egress.Credential{{Host: upHost, Header: "x-api-key", Value: "canary-key-123456", Scheme: "http"}}
	}
	b.socket = filepath.Join(t.TempDir(), "egress.sock")
	l, err := egress.Listen(context.Background(), b.socket)
	require.NoError(t, err)
	b.proxy.Start(l)
	t.Cleanup(func() { _ = b.proxy.Close() })
	dialSocket := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", b.socket)
	}
	proxyURL, _ := url.Parse("http://egress.invalid")
	b.client = &http.Client{Transport: &http.Transport{DialContext: dialSocket, Proxy: http.ProxyURL(proxyURL)}}
	return b, up, other
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestProxy_ForwardsToAllowedHostsAndRefusesTheRest(t *testing.T) {
	t.Parallel()
	b, up, other := setup(t, true, false)
	code, body := get(t, b.client, up.URL+"/v1/messages")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, `upstream got GET /v1/messages ""`, body)

	code, body = get(t, b.client, other.URL+"/steal")
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, "not in the run's allowlist")
	require.Equal(t, []string{strings.TrimPrefix(other.URL, "http://") + " (1)"}, b.proxy.Refused())
	traffic := b.proxy.Traffic()
	require.Len(t, traffic, 1)
	require.Equal(t, 1, traffic[0].Requests)
	require.Positive(t, traffic[0].Bytes)
}

func TestProxy_TunnelsConnectOnlyToAllowedHosts(t *testing.T) {
	t.Parallel()
	b, up, other := setup(t, true, false)
	connect := func(host string) string {
		c, err := net.Dial("unix", b.socket)
		require.NoError(t, err)
		defer c.Close()
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
		r := bufio.NewReader(c)
		status, err := r.ReadString('\n')
		require.NoError(t, err)
		if !strings.Contains(status, " 200 ") {
			return status
		}
		_, _ = r.ReadString('\n') // the blank line
		fmt.Fprintf(c, "GET /through HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host)
		rest, _ := io.ReadAll(r)
		return status + string(rest)
	}
	require.Contains(t, connect(strings.TrimPrefix(up.URL, "http://")), `upstream got GET /through`)
	require.Contains(t, connect(strings.TrimPrefix(other.URL, "http://")), "403")
}

func TestProxy_AddsTheCredentialTheRunNeverHolds(t *testing.T) {
	t.Parallel()
	b, up, _ := setup(t, false, true)
	host := strings.TrimPrefix(up.URL, "http://")
	req, err := http.NewRequest(http.MethodPost, "http://unused"+egress.PathPrefix+host+"/v1/messages?beta=1",
		strings.NewReader(`{"model":"m"}`))
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", "placeholder-the-run-has")
	// Straight to the proxy, as an agent whose base URL points at the relay.
	direct := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", b.socket)
	}}}
	resp, err := direct.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Equal(t, `upstream got POST /v1/messages "{\"model\":\"m\"}"`, string(body))
	b.mu.Lock()
	defer b.mu.Unlock()
	require.Len(t, b.seen, 1)
	require.Equal(t, "canary-key-123456", b.seen[0].Header.Get("X-Api-Key"), "the proxy's key, not the run's")
	require.Equal(t, "beta=1", b.seen[0].URL.RawQuery)

	code, _ := get(t, b.client, up.URL+"/not-through-the-credential")
	require.Equal(t, http.StatusForbidden, code, "a credentialed host is reached through its path, not as a proxy")
}
