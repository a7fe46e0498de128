package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/ops"
	"github.com/azolla/azolla/internal/ops/metrics"
	"github.com/azolla/azolla/internal/store/storetest"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	return rec.Code, string(body)
}

func TestHealthz_AliveWhateverTheChecks(t *testing.T) {
	t.Parallel()
	down := ops.Check{Name: "store", Check: func(context.Context) error { return errors.New("down") }}
	code, body := get(t, ops.Handler(prometheus.NewRegistry(), []ops.Check{down}), ops.PathHealth)
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"ok":true}`, body)
}

func TestReadyz(t *testing.T) {
	t.Parallel()
	ok := func(name string) ops.Check {
		return ops.Check{Name: name, Check: func(context.Context) error { return nil }}
	}
	fail := func(name, why string) ops.Check {
		return ops.Check{Name: name, Check: func(context.Context) error { return errors.New(why) }}
	}
	for _, tc := range []struct {
		name   string
		checks []ops.Check
		code   int
		want   ops.Readiness
	}{
		{"all met", []ops.Check{ok("store"), ok("temporal")}, http.StatusOK,
			ops.Readiness{Ready: true, Checks: map[string]string{"store": "ok", "temporal": "ok"}}},
		{"one failing is named", []ops.Check{ok("store"), fail("temporal", "temporal unreachable: refused")},
			http.StatusServiceUnavailable, ops.Readiness{Ready: false,
				Checks: map[string]string{"store": "ok", "temporal": "temporal unreachable: refused"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, body := get(t, ops.Handler(prometheus.NewRegistry(), tc.checks), ops.PathReady)
			require.Equal(t, tc.code, code)
			var got ops.Readiness
			require.NoError(t, json.Unmarshal([]byte(body), &got))
			require.Equal(t, tc.want, got)
		})
	}
}

func TestReadyz_FlagNotStartedThenReadyThenStopping(t *testing.T) {
	t.Parallel()
	f := ops.NewFlag("workers", "workers not started")
	h := ops.Handler(prometheus.NewRegistry(), []ops.Check{f.Check()})
	code, body := get(t, h, ops.PathReady)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, `"workers":"workers not started"`)
	f.Set()
	code, _ = get(t, h, ops.PathReady)
	require.Equal(t, http.StatusOK, code)
	f.Stop()
	code, body = get(t, h, ops.PathReady)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, `"workers":"stopping"`)
}

func TestReadyz_StoreCheckOnARealStore(t *testing.T) {
	t.Parallel()
	s := storetest.NewSQLite(t)
	h := ops.Handler(prometheus.NewRegistry(), []ops.Check{ops.StoreCheck(s)})
	code, _ := get(t, h, ops.PathReady)
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, s.Close())
	code, body := get(t, h, ops.PathReady)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "store unreachable")
}

func TestMetrics_ExposesAzollaSeriesAfterAClaim(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	s := storetest.NewSQLite(t)
	reg.MustRegister(metrics.NewStoreCollector(s.DB(), 0))
	require.NoError(t, s.CreateObjective(context.Background(), storetest.Objective("o-1")))
	m.ObserveAcquire(domain.ResourceWorkOrder, "acquired")
	handler, closer := metrics.TemporalHandler(reg)
	defer closer.Close()
	handler.Counter("temporal_request").Inc(1)
	handler.Timer("temporal_request_latency").Record(30 * time.Millisecond)
	require.NoError(t, closer.Close()) // flushes tally's report to the collectors

	code, body := get(t, ops.Handler(reg, nil), ops.PathMetrics)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `azolla_claim_acquisitions_total{outcome="acquired",resource_type="WORKORDER"} 1`)
	require.Contains(t, body, `azolla_objectives{status="NEW"} 1`)
	require.Contains(t, body, `temporal_request`)
	// Latencies are histograms, which Temporal's dashboards expect and
	// which add up across replicas, not summaries.
	require.Regexp(t, `(?m)^temporal_request_latency_seconds_bucket\{.*le="0\.05".*\} 1$`, body)
	require.NotContains(t, body, `quantile=`)
}
