package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/azolla/azolla/internal/domain"
)

// spendSeries counts what the executors' runs cost, as their run reports
// tell, once per run: a gated workorder's, or each candidate's of a
// best-of-N workorder as it finishes (its bundle then repeats the winner's
// report and is not counted again).
type spendSeries struct {
	cost   *prometheus.CounterVec
	tokens *prometheus.CounterVec
	runs   *prometheus.CounterVec

	// models are the model labels given so far. A report is the
	// executor's word, so the labels it may mint are bounded: past
	// maxModels, a new model is counted as otherModel.
	mu     sync.Mutex
	models map[string]bool
}

// Model labels besides the reports' own.
const (
	unknownModel = "unknown"
	otherModel   = "other"
	maxModels    = 50
)

// label is the model label of a report's model.
func (s *spendSeries) label(model string) string {
	if model == "" {
		return unknownModel
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.models[model] {
		if len(s.models) >= maxModels {
			return otherModel
		}
		s.models[model] = true
	}
	return model
}

func newSpendSeries() *spendSeries {
	return &spendSeries{models: map[string]bool{},
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameExecutorCost,
			Help: "Dollars the executors' runs reported spending, by model; runs of unknown cost add nothing here (see " + NameExecutorRuns + ")."},
			[]string{"model"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameExecutorTokens,
			Help: "Tokens the executors' runs reported, by kind (input, output, cache_read, cache_write) and model."},
			[]string{"kind", "model"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: NameExecutorRuns,
			Help: "Gated runs of an agent or model, by whether their cost is known (cost=known, unknown)."},
			[]string{"cost"}),
	}
}

// RunSpent counts one run (a gated workorder's, or a candidate's) by its
// bundle's metadata; a run that ran no agent or model (static generator,
// built-in rules) counts nothing.
func (m *Metrics) RunSpent(meta domain.BundleMetadata) {
	if m == nil {
		return
	}
	var s domain.Spend
	s.Add(meta)
	if s.Runs == 0 {
		return
	}
	var model string
	if meta.RunReport != nil {
		model = meta.RunReport.Model
	}
	model = m.spend.label(model)
	if s.Unknown > 0 {
		m.spend.runs.WithLabelValues("unknown").Inc()
	} else {
		m.spend.runs.WithLabelValues("known").Inc()
		m.spend.cost.WithLabelValues(model).Add(s.USD)
	}
	for kind, n := range map[string]int64{"input": s.Tokens.Input, "output": s.Tokens.Output,
		"cache_read": s.Tokens.CacheRead, "cache_write": s.Tokens.CacheWrite} {
		if n > 0 {
			m.spend.tokens.WithLabelValues(kind, model).Add(float64(n))
		}
	}
}
