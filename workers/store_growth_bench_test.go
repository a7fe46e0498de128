package workers_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers"
)

// BenchmarkStoreGrowth (G1) measures what a DONE objective leaves in the
// store, on SQLite and PostgreSQL: N lifecycles (AZOLLA_BENCH_G1_LIFECYCLES,
// default 1,000) run through the worker's own lifecycle activities (the
// objective as `objective create` stores it, approval, schedule, a
// COMMAND_DIAZOTROPH run of `printf ok`, gate), then the store's bytes
// over those of the freshly migrated store, per objective, before and after
// store retention (PruneFinished with every lifecycle past its cutoff).
// `azolla verify`'s audit must be clean on both sides. The bytes are the
// database's own after compaction: SQLite's pages after VACUUM, and
// PostgreSQL's pg_total_relation_size of every table after VACUUM FULL.
func BenchmarkStoreGrowth(b *testing.B) {
	n := 1000
	if v := os.Getenv("AZOLLA_BENCH_G1_LIFECYCLES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("AZOLLA_BENCH_G1_LIFECYCLES=%q: want a positive number", v)
		}
	}
	for range b.N {
		for _, be := range storetest.Backends() {
			g := measureGrowth(b, be, n)
			b.ReportMetric(g.perBefore, be.Name+"-bytes-per-done")
			b.ReportMetric(g.perAfter, be.Name+"-bytes-per-done-pruned")
			b.ReportMetric(g.perAfter/g.perBefore, "g1-"+be.Name+"-ratio")
			b.ReportMetric(float64(g.claimsBefore)/float64(n), be.Name+"-claims-per-done")
			b.ReportMetric(float64(g.claimsAfter)/float64(n), be.Name+"-claims-per-done-pruned")
			b.Logf("%s: %d lifecycles, %.0f bytes per DONE objective before retention, %.0f after (%d rows pruned); bytes per objective by table, before: %s; after: %s",
				be.Name, n, g.perBefore, g.perAfter, g.pruned, g.tablesBefore, g.tablesAfter)
		}
	}
}

type growth struct {
	perBefore, perAfter       float64
	claimsBefore, claimsAfter int
	pruned                    int
	// tablesBefore and tablesAfter are the largest tables' bytes per
	// objective, indexes included, over the empty store's.
	tablesBefore, tablesAfter string
}

// perObjective lists the tables that grew most, by bytes per objective.
func perObjective(sizes, empty map[string]int64, n int) string {
	names := make([]string, 0, len(sizes))
	for k := range sizes {
		if sizes[k] > empty[k] {
			names = append(names, k)
		}
	}
	grew := func(k string) int64 { return sizes[k] - empty[k] }
	slices.SortFunc(names, func(x, y string) int { return int(grew(y) - grew(x)) })
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, float64(grew(k))/float64(n)))
	}
	return strings.Join(parts, ", ")
}

func measureGrowth(b *testing.B, be storetest.Backend, n int) growth {
	ctx := context.Background()
	s := be.Open(b)
	home := b.TempDir()
	cfg := config.DefaultFor(func(k string) string { return map[string]string{"HOME": home}[k] })
	cfg.Diazotroph.Command.Run = "printf ok"
	ex, err := workers.NewExecutors(cfg, sandboxtest.Host(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	set, err := workers.NewActivities(cfg, s, "", ex)
	if err != nil {
		b.Fatal(err)
	}
	empty, emptyTables := storeBytes(b, s)
	identity := activities.DefaultIdentity()
	for i := range n {
		lifecycle(b, ctx, s, set.Steps, identity, fmt.Sprintf("g1-%05d", i))
	}
	now := time.Now()
	verifyClean(b, s, now.Add(2*time.Hour))
	before, beforeTables := storeBytes(b, s)
	claimsBefore := countRows(b, s, "claims")
	counts, err := s.PruneFinished(ctx, store.PruneFinishedParams{Before: now.Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	verifyClean(b, s, now.Add(2*time.Hour))
	after, afterTables := storeBytes(b, s)
	return growth{perBefore: float64(before-empty) / float64(n), perAfter: float64(after-empty) / float64(n),
		claimsBefore: claimsBefore, claimsAfter: countRows(b, s, "claims"), pruned: counts.Total(),
		tablesBefore: perObjective(beforeTables, emptyTables, n), tablesAfter: perObjective(afterTables, emptyTables, n)}
}

// lifecycle takes one objective from creation to DONE the way a worker
// does, step by step. Outside Temporal a claim's owner is the identity
// alone, so each step gets the owner id an activity attempt would have
// (identity:workflow/activity/attempt): the claim rows are the size a
// worker's are.
func lifecycle(b *testing.B, ctx context.Context, s store.Store, l *activities.Steps, identity, id string) {
	owner := func(step int) string { return fmt.Sprintf("%s:objective-%s/%d/1", identity, id, step) }
	now := time.Now()
	o := &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "Handle empty input in the parser " + id,
		AcceptanceCriteria: []string{"the build is green", "an empty input is an error, not a panic"},
		Status:             domain.StatusNew, Urgency: "NORMAL", CreatedAt: now, UpdatedAt: now}
	must(b, s.CreateObjective(ctx, o))
	must(b, s.MarkHandedOver(ctx, store.MarkHandedOverParams{ObjectiveID: id}))
	l.Identity = owner(1)
	ev, err := l.Ready(ctx, activities.ReadyInput{ObjectiveID: id, Mode: activities.ReadyApprove, By: "bench"})
	must(b, err)
	l.Identity = owner(2)
	sc, err := l.Schedule(ctx, activities.ScheduleInput{EventID: ev.EventID})
	must(b, err)
	if sc.WorkOrder == nil {
		b.Fatalf("%s: scheduled %s, no workorder", id, sc.Reason)
	}
	l.Identity = owner(3)
	_, err = l.Run(ctx, activities.RunInput{WorkOrderID: sc.WorkOrder.WorkOrderID})
	must(b, err)
	l.Identity = owner(4)
	g, err := l.Gate(ctx, activities.GateInput{WorkOrderID: sc.WorkOrder.WorkOrderID})
	must(b, err)
	if g.Status != domain.StatusDone {
		b.Fatalf("%s: gate %s (%s), objective %s, not DONE", id, g.GateResult, g.GateReason, g.Status)
	}
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

func verifyClean(b *testing.B, s store.Store, now time.Time) {
	b.Helper()
	rep, err := audit.Run(context.Background(), s, now, audit.WithMessages(audit.StoreMessages{Store: s}))
	must(b, err)
	if len(rep.Violations) > 0 {
		b.Fatalf("verify: %d violations, first %+v", len(rep.Violations), rep.Violations[0])
	}
}

func countRows(b *testing.B, s store.Store, table string) int {
	b.Helper()
	var n int
	must(b, s.(*sqlstore.Store).DB().QueryRow(`SELECT COUNT(*) FROM `+table).Scan(&n))
	return n
}

// storeBytes compacts the store and returns its size in bytes and each
// table's (indexes counted with their table; SQLite's only where it has
// dbstat).
func storeBytes(b *testing.B, s store.Store) (int64, map[string]int64) {
	b.Helper()
	db := s.(*sqlstore.Store).DB()
	sizes := map[string]int64{}
	var total int64
	switch s.Dialect() {
	case "sqlite":
		_, err := db.Exec(`VACUUM`)
		must(b, err)
		var pages, size int64
		must(b, db.QueryRow(`PRAGMA page_count`).Scan(&pages))
		must(b, db.QueryRow(`PRAGMA page_size`).Scan(&size))
		total = pages * size
		// Per table, where SQLite has dbstat; the total does not need it.
		rows, err := db.Query(`SELECT COALESCE(m.tbl_name, d.name), SUM(d.pgsize) FROM dbstat d
			LEFT JOIN sqlite_schema m ON m.name = d.name GROUP BY 1`)
		if err == nil {
			scanSizes(b, rows, sizes)
		}
	default:
		tables := tableNames(b, db)
		for _, t := range tables {
			_, err := db.Exec(`VACUUM FULL ` + t)
			must(b, err)
		}
		rows, err := db.Query(`SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
			WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace`)
		must(b, err)
		scanSizes(b, rows, sizes)
		for _, v := range sizes {
			total += v
		}
	}
	return total, sizes
}

func scanSizes(b *testing.B, rows *sql.Rows, into map[string]int64) {
	b.Helper()
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		must(b, rows.Scan(&name, &n))
		into[name] += n
	}
	must(b, rows.Err())
}

func tableNames(b *testing.B, db *sql.DB) []string {
	b.Helper()
	rows, err := db.Query(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
	must(b, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		must(b, rows.Scan(&t))
		out = append(out, t)
	}
	must(b, rows.Err())
	return out
}
