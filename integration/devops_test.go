package integration

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// azolla dev serves the worker's ops endpoints, with the SDK's latencies as
// histograms, and keeps its info log out of the terminal, in dev.log.
func TestDev_ServesOpsEndpointsAndLogsToItsFile(t *testing.T) {
	t.Parallel()
	d := startDev(t, "AZOLLA_LOG_LEVEL=info")
	base := "http://" + d.ops
	require.Eventually(t, func() bool {
		code, _ := httpGet(t, base+"/readyz")
		return code == http.StatusOK
	}, time.Minute, 100*time.Millisecond, "/readyz never said ready")
	require.Eventually(t, func() bool {
		_, body := httpGet(t, base+"/metrics")
		return strings.Contains(body, "temporal_request_latency_seconds_bucket{") && strings.Contains(body, "azolla_objectives{")
	}, time.Minute, 200*time.Millisecond, "/metrics lacks the SDK's latency histogram or azolla's series")

	log, err := os.ReadFile(filepath.Join(d.dir, "dev.log"))
	require.NoError(t, err)
	require.Contains(t, string(log), "level=INFO")
	require.Contains(t, d.out.String(), "azolla dev is running.")
	require.Contains(t, d.out.String(), "/metrics")
	require.NotContains(t, d.out.String(), "level=INFO", "info lines stay in dev.log")
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
