package metrics

import (
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// temporalReportInterval is how often tally flushes the SDK's metrics to
// the Prometheus collectors.
const temporalReportInterval = time.Second

// latencyBuckets are the SDK latencies' histogram bounds in seconds, from a
// millisecond to the two minutes past a long poll's one.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

// TemporalHandler returns the SDK's metrics handler (temporal_* series:
// requests, polls, task latencies, slots, sticky cache) reporting onto reg
// with the SDK's Prometheus naming, the bridge Temporal's samples use.
// Latencies are histograms (temporal_*_seconds_bucket), which Temporal's
// dashboards query and which, unlike summaries, add up across replicas.
// Close the returned closer when the client is closed.
func TemporalHandler(reg prometheus.Registerer) (client.MetricsHandler, io.Closer) {
	reporter := tallyprom.NewReporter(tallyprom.Options{Registerer: reg,
		DefaultTimerType: tallyprom.HistogramTimerType, DefaultHistogramBuckets: latencyBuckets})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{CachedReporter: reporter,
		Separator: tallyprom.DefaultSeparator, SanitizeOptions: &sdktally.PrometheusSanitizeOptions},
		temporalReportInterval)
	return sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)), closer
}
