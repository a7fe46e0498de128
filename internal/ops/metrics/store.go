package metrics

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/azolla/azolla/internal/domain"
)

// DefaultStoreCacheTTL is how long one count of the store serves scrapes:
// a few Prometheus servers, or a scrape every second, cost one query per
// table per TTL.
const DefaultStoreCacheTTL = 5 * time.Second

// storeQueryTimeout bounds the counts a scrape waits for.
const storeQueryTimeout = 3 * time.Second

// DBer is a store that exposes its pool (both SQL backends do).
type DBer interface{ DB() *sql.DB }

// StoreCollector exposes, computed on scrape, the objectives by status
// (azolla_objectives: the lifecycles) and the control plane's jobs by
// status (azolla_jobs: QUEUED is the queue depth, DEAD_LETTERED the dead
// letters). Each is one COUNT ... GROUP BY status, cached for ttl.
type StoreCollector struct {
	db  *sql.DB
	ttl time.Duration
	now func() time.Time

	objectives, jobs *prometheus.Desc
	errors           prometheus.Counter

	mu     sync.Mutex
	at     time.Time
	counts map[string]map[string]float64 // table -> status -> count
}

// NewStoreCollector returns a collector over db; ttl <= 0 means
// DefaultStoreCacheTTL.
func NewStoreCollector(db *sql.DB, ttl time.Duration) *StoreCollector {
	if ttl <= 0 {
		ttl = DefaultStoreCacheTTL
	}
	return &StoreCollector{db: db, ttl: ttl, now: time.Now,
		objectives: prometheus.NewDesc(NameObjectives, "Objectives (lifecycles) by status.", []string{"status"}, nil),
		jobs: prometheus.NewDesc(NameJobs,
			"Control plane jobs by status: QUEUED is the queue depth, DEAD_LETTERED the dead letters.", []string{"status"}, nil),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: NameStoreScrapeErrors,
			Help: "Scrapes whose store counts failed; their gauges were left out."}),
	}
}

// Describe implements prometheus.Collector.
func (c *StoreCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.objectives
	ch <- c.jobs
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *StoreCollector) Collect(ch chan<- prometheus.Metric) {
	counts, err := c.load()
	if err == nil {
		for status, n := range counts["objectives"] {
			ch <- prometheus.MustNewConstMetric(c.objectives, prometheus.GaugeValue, n, status)
		}
		for status, n := range counts["jobs"] {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, n, status)
		}
	} else {
		c.errors.Inc()
	}
	c.errors.Collect(ch)
}

// load returns the cached counts, counting again once they are ttl old.
func (c *StoreCollector) load() (map[string]map[string]float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts != nil && c.now().Sub(c.at) < c.ttl {
		return c.counts, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeQueryTimeout)
	defer cancel()
	counts := map[string]map[string]float64{}
	for table, statuses := range knownStatuses {
		m, err := countByStatus(ctx, c.db, table)
		if err != nil {
			return nil, err
		}
		// Every known status has its series, 0 when empty, so a dashboard
		// or an alert finds it before the first objective or job.
		for _, st := range statuses {
			m[st] += 0
		}
		counts[table] = m
	}
	c.counts, c.at = counts, c.now()
	return counts, nil
}

// knownStatuses are the statuses each counted table's series always has.
var knownStatuses = map[string][]string{
	"objectives": domain.StatusStrings(domain.Statuses()),
	"jobs":       {domain.JobQueued, domain.JobRunning, domain.JobSucceeded, domain.JobFailed, domain.JobDeadLettered},
}

// countByStatus is one bounded query: a row per status.
func countByStatus(ctx context.Context, db *sql.DB, table string) (map[string]float64, error) {
	// table is one of two constants above, never input.
	rows, err := db.QueryContext(ctx, "SELECT status, COUNT(*) FROM "+table+" GROUP BY status")
	if err != nil {
		return nil, fmt.Errorf("count %s by status: %w", table, err)
	}
	defer rows.Close()
	m := map[string]float64{}
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("count %s by status: %w", table, err)
		}
		m[status] = float64(n)
	}
	return m, rows.Err()
}
