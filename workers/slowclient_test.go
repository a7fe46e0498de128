package workers_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/ops"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/workers"
)

// testLimits are ops.DefaultLimits scaled down, so the test waits seconds
// for what a server in production cuts off within a minute.
var testLimits = ops.Limits{ReadHeader: time.Second, Read: 2 * time.Second, Write: 5 * time.Second,
	Idle: time.Second, MaxHeaderBytes: 4 << 10}

// startLimitedControlPlane serves azolla dev's control plane (no tokens, on
// loopback) within testLimits until the test ends.
func startLimitedControlPlane(t *testing.T) string {
	t.Helper()
	return startControlPlane(t, config.Default(), func(o *workers.ControlPlaneOptions) {
		o.Unauthenticated, o.Limits = true, &testLimits
	})
}

// postClaim posts a valid claim that waits briefly, and returns its status.
func postClaim(t *testing.T, addr string) int {
	t.Helper()
	body := fmt.Sprintf(`{"worker_id":"w-1","streams":["command"],"max_wait_ms":%d}`, 50)
	resp, err := http.Post("http://"+addr+controlplane.PathClaim, "application/json", bytes.NewBufferString(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// closedByServer reports whether the server has closed c: a read returns
// EOF or a reset (a 408 it wrote first is read and skipped).
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	buf := make([]byte, 4096)
	for {
		_, err := c.Read(buf)
		var ne net.Error
		switch {
		case err == nil:
			continue
		case errors.As(err, &ne) && ne.Timeout():
			return false
		default:
			return true
		}
	}
}

func TestControlPlane_ABodyTrickledByteByByteIsCutOff(t *testing.T) {
	t.Parallel()
	addr := startLimitedControlPlane(t)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
		controlplane.PathClaim, addr)
	require.NoError(t, err)

	// One byte every 200 ms would take 200 s; the server's read limit
	// (2 s here, 20 s in production) ends it within the first 100.
	sent := 0
	closed := false
	for ; sent < 100 && !closed; sent++ {
		if _, err := c.Write([]byte("{")); err != nil {
			closed = true
			break
		}
		closed = closedByServer(c)
		time.Sleep(200 * time.Millisecond)
	}
	require.True(t, closed, "the trickle was not cut off within %d bytes", sent)
	require.Equal(t, http.StatusOK, postClaim(t, addr), "a valid claim still answers")
}

func TestControlPlane_IdleConnectionsAreClosedAndClaimsStillAnswer(t *testing.T) {
	t.Parallel()
	addr := startLimitedControlPlane(t)
	const n = 500
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	// A kept-alive connection that asked once and then says nothing.
	kept, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer kept.Close()
	_, err = fmt.Fprintf(kept, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	require.NoError(t, err)

	require.Equal(t, http.StatusOK, postClaim(t, addr), "a valid claim answers beside %d silent connections", n)

	// Each read ends when the server closes its connection.
	var closed atomic.Int64
	for _, c := range append(conns, kept) {
		go func() {
			_, _ = io.Copy(io.Discard, c)
			closed.Add(1)
		}()
	}
	require.Eventually(t, func() bool { return closed.Load() == n+1 }, time.Minute, 50*time.Millisecond,
		"silent connections are closed by the server")
}
