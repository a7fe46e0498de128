package ops_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/ops"
)

func TestWithProfiles_ServesTheRuntimesProfilesBesideTheOpsEndpoints(t *testing.T) {
	h := ops.WithProfiles(ops.Handler(prometheus.NewRegistry(), nil))
	code, body := get(t, h, ops.PathProfiles+"heap?debug=1")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "heap profile")
	code, body = get(t, h, ops.PathProfiles+"goroutine?debug=1")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "goroutine profile")
	code, _ = get(t, h, ops.PathProfiles+"cmdline")
	require.Equal(t, http.StatusNotFound, code, "how the process was started is not served")
	code, _ = get(t, h, ops.PathHealth)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, ops.DefaultLimits.Write+ops.MaxProfileSeconds*time.Second, ops.ProfileLimits.Write,
		"a CPU profile of the longest allowed length can be written")
}
