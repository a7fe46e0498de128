package workers_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/ops"
	"github.com/azolla/azolla/internal/ops/metrics"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers"
)

func TestRunControlPlane_ServesReadyzAndMetricsBesideTheWorkerAPI(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	st := storetest.NewSQLite(t)
	tr, err := workers.OpenTransport(context.Background(), cfg.ControlPlane, st)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	reg.MustRegister(metrics.NewStoreCollector(st.DB(), 0))
	temporalDown := ops.Check{Name: "temporal", Check: func(context.Context) error {
		return errors.New("temporal unreachable: connection refused")
	}}
	log := slog.New(slog.DiscardHandler)
	svc := workers.NewObservedControlPlane(cfg, st, tr, nil, log, "test", m)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- workers.RunControlPlane(ctx, workers.ControlPlaneOptions{Config: cfg, Store: st, Listener: ln,
			Service: svc, Log: log, Metrics: reg, Ready: []ops.Check{ops.StoreCheck(st), temporalDown}})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	base := "http://" + ln.Addr().String()
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	code, _ := get(controlplane.PathHealth)
	require.Equal(t, http.StatusOK, code)
	code, body := get(ops.PathReady)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.JSONEq(t, `{"ready":false,"checks":{"store":"ok","temporal":"temporal unreachable: connection refused"}}`, body)

	// The reaper's first pass took its leadership claim: counted.
	require.Eventually(t, func() bool {
		_, body = get(ops.PathMetrics)
		return strings.Contains(body, `azolla_claim_acquisitions_total{outcome="acquired",resource_type="CONTROL_PLANE_REAPER"} 1`)
	}, 5*time.Second, 100*time.Millisecond)
	require.Contains(t, body, `azolla_jobs{status="QUEUED"} 0`)

	// The worker API is still routed, and still wants a token.
	resp, err := http.Post(base+controlplane.PathClaim, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}
