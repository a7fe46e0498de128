// Package metrics is azolla's Prometheus exposition: its own counters, the
// store's gauges computed on scrape, and the Temporal SDK's metrics bridged
// through tally. Everything registers on a registry the caller passes in,
// so parallel tests each get their own and no global state is shared.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/remote/controlplane"
)

// Metric names, documented in README (Operations).
const (
	NameClaimAcquisitions  = "azolla_claim_acquisitions_total"
	NameWorkOrdersExecuted = "azolla_workorders_executed_total"
	NameGateVerdicts       = "azolla_gate_verdicts_total"
	NamePullRequests       = "azolla_pull_requests_total"
	NameJobsDeadLettered   = "azolla_jobs_dead_lettered_total"
	NameReaperActions      = "azolla_reaper_actions_total"
	NameExecutorCost       = "azolla_executor_cost_usd_total"
	NameExecutorTokens     = "azolla_executor_tokens_total"
	NameExecutorRuns       = "azolla_executor_runs_total"
	NameObjectives         = "azolla_objectives"
	NameJobs               = "azolla_jobs"
	NameStoreScrapeErrors  = "azolla_store_scrape_errors_total"
)

// Metrics holds azolla's own series. A nil *Metrics records nothing, so
// code paths built without metrics (tests, scripts) need no check.
type Metrics struct {
	reg         prometheus.Registerer
	claims      *prometheus.CounterVec
	executed    *prometheus.CounterVec
	gate        *prometheus.CounterVec
	prs         *prometheus.CounterVec
	deadLetters prometheus.Counter
	reaper      *prometheus.CounterVec
	spend       *spendSeries
	egress      *egressSeries
	intake      *intakeSeries
}

// New registers azolla's counters on reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{reg: reg,
		claims: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameClaimAcquisitions,
			Help: "Claim acquisitions by resource type and outcome: acquired (a free or released claim), takeover (a lapsed lease taken from its holder), refused (another owner holds a live lease)."},
			[]string{"resource_type", "outcome"}),
		executed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameWorkOrdersExecuted,
			Help: "Workorders marked EXECUTED with their output bundle, by where they ran (local, remote)."},
			[]string{"runner"}),
		gate: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameGateVerdicts,
			Help: "Gate verdicts written, by gate (workorder, track) and result (PASS, FAIL)."},
			[]string{"gate", "result"}),
		prs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NamePullRequests,
			Help: "Objectives' pull requests by event: opened, adopted (open before azolla asked), revised (a round started from review or checks), merged, closed (without merge)."},
			[]string{"event"}),
		deadLetters: prometheus.NewCounter(prometheus.CounterOpts{Name: NameJobsDeadLettered,
			Help: "Control plane jobs dead-lettered, by a worker's fail or the reaper."}),
		reaper: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameReaperActions,
			Help: "What the control plane's reaper did, by action."},
			[]string{"action"}),
	}
	m.spend, m.egress, m.intake = newSpendSeries(), newEgressSeries(), newIntakeSeries()
	reg.MustRegister(m.claims, m.executed, m.gate, m.prs, m.deadLetters, m.reaper, m.spend.cost, m.spend.tokens,
		m.spend.runs, m.egress.refused, m.egress.requests, m.egress.bytes, m.intake.items, m.intake.commands)
	return m
}

// ObserveAcquire implements claim.Observer.
func (m *Metrics) ObserveAcquire(resourceType string, outcome claim.Outcome) {
	if m == nil {
		return
	}
	m.claims.WithLabelValues(resourceType, string(outcome)).Inc()
}

// WorkOrderExecuted counts a workorder newly marked EXECUTED; runner is
// "local" or "remote".
func (m *Metrics) WorkOrderExecuted(runner string) {
	if m == nil {
		return
	}
	m.executed.WithLabelValues(runner).Inc()
}

// GateVerdict counts a verdict written by a gate ("workorder", "track").
func (m *Metrics) GateVerdict(gate, result string) {
	if m == nil {
		return
	}
	m.gate.WithLabelValues(gate, result).Inc()
}

// PullRequest counts an event of an objective's pull request.
func (m *Metrics) PullRequest(event string) {
	if m == nil {
		return
	}
	m.prs.WithLabelValues(event).Inc()
}

// JobDeadLettered implements controlplane.Observer.
func (m *Metrics) JobDeadLettered() {
	if m == nil {
		return
	}
	m.deadLetters.Inc()
}

// ReaperPass implements controlplane.Observer: it adds one pass's repairs.
// Dead letters are counted by JobDeadLettered, which the reaper calls too.
func (m *Metrics) ReaperPass(c controlplane.ReaperCounts) {
	if m == nil || !c.Leader {
		return
	}
	for action, n := range map[string]int{"expired": c.Expired, "requeued": c.Requeued,
		"dead_lettered": c.DeadLettered, "republished": c.Republished, "notified": c.Notified,
		"heartbeat": c.Heartbeats, "skipped": c.Skipped, "failed": c.Failed} {
		if n > 0 {
			m.reaper.WithLabelValues(action).Add(float64(n))
		}
	}
}
