package metrics

import "github.com/prometheus/client_golang/prometheus"

// Names of the egress series.
const (
	NameEgressRefused  = "azolla_executor_egress_refused_total"
	NameEgressRequests = "azolla_executor_egress_requests_total"
	NameEgressBytes    = "azolla_executor_egress_bytes_total"
)

// egressSeries count what allowlist runs sent through their egress proxy.
// A refused host is a run's choice, so it is not a label: refusals are
// counted by executor; allowed hosts come from configuration and label
// the traffic.
type egressSeries struct {
	refused  *prometheus.CounterVec
	requests *prometheus.CounterVec
	bytes    *prometheus.CounterVec
}

func newEgressSeries() *egressSeries {
	return &egressSeries{
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameEgressRefused,
			Help: "Requests of allowlist runs their egress proxy refused (the host is not in the run's egress), by executor; the run's notes name the hosts."},
			[]string{"executor"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameEgressRequests,
			Help: "Requests of allowlist runs their egress proxy let through, by executor and host."},
			[]string{"executor", "host"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameEgressBytes,
			Help: "Bytes allowlist runs sent and received through their egress proxy, by executor and host."},
			[]string{"executor", "host"}),
	}
}

// Egress counts one request an allowlist run made through its proxy
// (sandbox.Options.OnEgress).
func (m *Metrics) Egress(executor, host string, refused bool, bytes int64) {
	if m == nil {
		return
	}
	if refused {
		m.egress.refused.WithLabelValues(executor).Inc()
		return
	}
	m.egress.requests.WithLabelValues(executor, host).Inc()
	m.egress.bytes.WithLabelValues(executor, host).Add(float64(bytes))
}
