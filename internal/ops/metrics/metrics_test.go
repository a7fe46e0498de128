package metrics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/ops/metrics"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store/storetest"
)

type testBundle struct {
	reg *prometheus.Registry
	m   *metrics.Metrics
}

func setup(t *testing.T) testBundle {
	t.Helper()
	reg := prometheus.NewRegistry()
	return testBundle{reg: reg, m: metrics.New(reg)}
}

func TestClaimAcquisitions_CountAcquiredRefusedAndTakeover(t *testing.T) {
	t.Parallel()
	for _, be := range storetest.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			tb := setup(t)
			s := be.Open(t)
			ctx := context.Background()
			now := time.Now()
			a := claim.NewBridge(s, claim.WithObserver(tb.m), claim.WithClock(func() time.Time { return now }))
			ahead := claim.NewBridge(s, claim.WithObserver(tb.m),
				claim.WithClock(func() time.Time { return now.Add(time.Hour) }))

			_, ok, err := a.Acquire(ctx, domain.ResourceEvent, "ev-1", "w1", time.Minute)
			require.NoError(t, err)
			require.True(t, ok)
			_, ok, err = a.Acquire(ctx, domain.ResourceEvent, "ev-1", "w2", time.Minute)
			require.NoError(t, err)
			require.False(t, ok)
			// w1's lease lapsed without a release: w3 takes it over.
			_, ok, err = ahead.Acquire(ctx, domain.ResourceEvent, "ev-1", "w3", time.Minute)
			require.NoError(t, err)
			require.True(t, ok)
			// A second lapsed lease, so takeovers and plain acquisitions
			// count differently whichever way they were mixed up.
			_, ok, err = a.Acquire(ctx, domain.ResourceEvent, "ev-3", "w1", time.Minute)
			require.NoError(t, err)
			require.True(t, ok)
			_, ok, err = ahead.Acquire(ctx, domain.ResourceEvent, "ev-3", "w3", time.Minute)
			require.NoError(t, err)
			require.True(t, ok)
			// A released claim taken again is a plain acquisition.
			l2, ok, err := a.Acquire(ctx, domain.ResourceEvent, "ev-2", "w1", time.Minute)
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, l2.Release(ctx))
			_, ok, err = a.Acquire(ctx, domain.ResourceEvent, "ev-2", "w2", time.Minute)
			require.NoError(t, err)
			require.True(t, ok)

			want := `
# HELP azolla_claim_acquisitions_total Claim acquisitions by resource type and outcome: acquired (a free or released claim), takeover (a lapsed lease taken from its holder), refused (another owner holds a live lease).
# TYPE azolla_claim_acquisitions_total counter
azolla_claim_acquisitions_total{outcome="acquired",resource_type="EVENT"} 4
azolla_claim_acquisitions_total{outcome="refused",resource_type="EVENT"} 1
azolla_claim_acquisitions_total{outcome="takeover",resource_type="EVENT"} 2
`
			require.NoError(t, testutil.GatherAndCompare(tb.reg, strings.NewReader(want), metrics.NameClaimAcquisitions))
		})
	}
}

func TestStoreCollector_CountsObjectivesAndJobsByStatusCached(t *testing.T) {
	t.Parallel()
	for _, be := range storetest.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			tb := setup(t)
			s := be.Open(t)
			ctx := context.Background()
			for _, id := range []string{"o-1", "o-2"} {
				require.NoError(t, s.CreateObjective(ctx, storetest.Objective(id)))
			}
			tb.reg.MustRegister(metrics.NewStoreCollector(s.DB(), time.Hour))
			want := `
# HELP azolla_objectives Objectives (lifecycles) by status.
# TYPE azolla_objectives gauge
azolla_objectives{status="BLOCKED"} 0
azolla_objectives{status="DONE"} 0
azolla_objectives{status="IN_PROGRESS"} 0
azolla_objectives{status="NEW"} 2
azolla_objectives{status="TODO"} 0
`
			require.NoError(t, testutil.GatherAndCompare(tb.reg, strings.NewReader(want), metrics.NameObjectives))
			// Within the TTL a scrape reads the cache, not the store.
			require.NoError(t, s.CreateObjective(ctx, storetest.Objective("o-3")))
			require.NoError(t, testutil.GatherAndCompare(tb.reg, strings.NewReader(want), metrics.NameObjectives))
		})
	}
}

func TestStoreCollector_StoreDownLeavesGaugesOutAndCountsTheError(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	s := storetest.NewSQLite(t)
	c := metrics.NewStoreCollector(s.DB(), time.Nanosecond)
	tb.reg.MustRegister(c)
	require.NoError(t, s.Close())
	n, err := testutil.GatherAndCount(tb.reg, metrics.NameObjectives, metrics.NameJobs)
	require.NoError(t, err)
	require.Zero(t, n)
	// Two scrapes so far (the count above, this one), both failed.
	require.NoError(t, testutil.GatherAndCompare(tb.reg, strings.NewReader(`
# HELP azolla_store_scrape_errors_total Scrapes whose store counts failed; their gauges were left out.
# TYPE azolla_store_scrape_errors_total counter
azolla_store_scrape_errors_total 2
`), metrics.NameStoreScrapeErrors))
}

func TestCounters_ExecutedGateDeadLettersReaper(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.m.WorkOrderExecuted("local")
	tb.m.GateVerdict("workorder", domain.GatePass)
	tb.m.GateVerdict("track", domain.GateFail)
	tb.m.JobDeadLettered()
	tb.m.PullRequest("opened")
	tb.m.PullRequest("merged")
	tb.m.PullRequest("merged")
	tb.m.ReaperPass(controlplane.ReaperCounts{Leader: true, Expired: 2, Requeued: 1, DeadLettered: 1})
	tb.m.ReaperPass(controlplane.ReaperCounts{Leader: false, Expired: 5}) // a standby did nothing
	require.Equal(t, 1.0, metricVec(t, tb.reg, metrics.NameWorkOrdersExecuted, "runner", "local"))
	require.Equal(t, 1.0, metricVec(t, tb.reg, metrics.NameGateVerdicts, "result", "PASS"))
	require.Equal(t, 1.0, metricVec(t, tb.reg, metrics.NameGateVerdicts, "result", "FAIL"))
	require.Equal(t, 1.0, metricVec(t, tb.reg, metrics.NameJobsDeadLettered, "", ""))
	require.Equal(t, 2.0, metricVec(t, tb.reg, metrics.NamePullRequests, "event", "merged"))
	require.Equal(t, 1.0, metricVec(t, tb.reg, metrics.NamePullRequests, "event", "opened"))
	require.Equal(t, 2.0, metricVec(t, tb.reg, metrics.NameReaperActions, "action", "expired"))
	require.Equal(t, 1.0, metricVec(t, tb.reg, metrics.NameReaperActions, "action", "requeued"))

	var nilMetrics *metrics.Metrics
	nilMetrics.JobDeadLettered() // a nil *Metrics records nothing, and does not panic
}

// metricVec sums the samples of name whose label has value ("" matches all).
func metricVec(t *testing.T, g prometheus.Gatherer, name, label, value string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			ok := label == ""
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					ok = true
				}
			}
			if ok {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum
}
