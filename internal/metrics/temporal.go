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

// TemporalHandler returns the SDK's metrics handler (temporal_* series:
// requests, polls, task latencies, slots, sticky cache) reporting onto reg
// with the SDK's Prometheus naming, the bridge Temporal's samples use.
// Close the returned closer when the client is closed.
func TemporalHandler(reg prometheus.Registerer) (client.MetricsHandler, io.Closer) {
	reporter := tallyprom.NewReporter(tallyprom.Options{Registerer: reg})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{CachedReporter: reporter,
		Separator: tallyprom.DefaultSeparator, SanitizeOptions: &sdktally.PrometheusSanitizeOptions},
		temporalReportInterval)
	return sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)), closer
}
