package audit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// The fixtures' clock: the lifecycle runs in the minutes after T0 and the
// audit looks at it an hour later.
var (
	T0  = storetest.T0
	now = T0.Add(time.Hour)
)

const owner = "1234@test:azolla/objective/1"

// forEachBackend runs fn on a fresh store of every backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, s *sqlstore.Store)) {
	t.Helper()
	for _, b := range storetest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.Open(t))
		})
	}
}

// audited runs the audit at now.
func audited(t *testing.T, q store.Querier, opts ...audit.Option) *audit.Report {
	t.Helper()
	rep, err := audit.Run(context.Background(), q, now, opts...)
	require.NoError(t, err)
	return rep
}

// requireReported asserts rep holds a violation of rule about resource.
func requireReported(t *testing.T, rep *audit.Report, rule, resource string) {
	t.Helper()
	for _, v := range rep.Violations {
		if v.Rule == rule && v.Resource == resource {
			return
		}
	}
	require.Failf(t, "violation not reported", "want %s on %q; got %+v", rule, resource, rep.Violations)
}

func move(t *testing.T, s store.Querier, id string, from, to domain.Status, at time.Time) {
	t.Helper()
	_, err := s.TransitionObjective(context.Background(), store.TransitionObjectiveParams{ObjectiveID: id,
		From: []domain.Status{from}, To: to, Now: at})
	require.NoError(t, err)
}

// hold acquires a one-minute claim at at.
func hold(t *testing.T, s store.Querier, resourceType, id string, at time.Time) *domain.ClaimRecord {
	t.Helper()
	c, ok, err := s.AcquireClaim(context.Background(), store.AcquireClaimParams{ResourceType: resourceType,
		ResourceID: id, OwnerID: owner, TTL: time.Minute, Now: at})
	require.NoError(t, err)
	require.True(t, ok, "claim on %s %s", resourceType, id)
	return c
}

func release(t *testing.T, s store.Querier, c *domain.ClaimRecord, at time.Time) {
	t.Helper()
	_, err := s.ReleaseClaim(context.Background(), store.ReleaseClaimParams{ResourceType: c.ResourceType,
		ResourceID: c.ResourceID, OwnerID: c.OwnerID, ClaimVersion: c.ClaimVersion, Now: at})
	require.NoError(t, err)
}

// schedule is scheduling (docs/protocol/lifecycle.md#scheduling) for a new objective id: workorder
// wo-<id> CREATED, event ev-<id> processed SCHEDULED, objective IN_PROGRESS.
func schedule(t *testing.T, s store.Querier, id string) *domain.WorkOrder {
	t.Helper()
	ctx, at := context.Background(), T0.Add(time.Minute)
	wo := storetest.Scheduled(t, s, id)
	move(t, s, id, domain.StatusNew, domain.StatusTodo, at)
	c := hold(t, s, domain.ResourceEvent, wo.EventID, at)
	_, created, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	require.True(t, created)
	move(t, s, id, domain.StatusTodo, domain.StatusInProgress, at)
	_, err = s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: wo.EventID, Reason: domain.ReasonScheduled, Now: at})
	require.NoError(t, err)
	release(t, s, c, at)
	return wo
}

// execute is step 10: one bundle, EXECUTED, claim released.
func execute(t *testing.T, s store.Querier, wo *domain.WorkOrder) {
	t.Helper()
	ctx, at := context.Background(), T0.Add(2*time.Minute)
	c := hold(t, s, domain.ResourceWorkOrder, wo.WorkOrderID, at)
	_, _, err := s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Fix",
		Content: "diff --git a/x b/x\n", Notes: "changed x", Metadata: domain.BundleMetadata{BranchName: wo.BranchName},
		RunnerStatus: domain.RunnerOK, CreatedAt: at})
	require.NoError(t, err)
	_, _, err = s.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: wo.WorkOrderID, Now: at})
	require.NoError(t, err)
	release(t, s, c, at)
}

// gate is steps 11-14: the run record, the objective's new status and the
// pause state that hands it back.
func gate(t *testing.T, s store.Querier, wo *domain.WorkOrder, result string) {
	t.Helper()
	ctx, at := context.Background(), T0.Add(3*time.Minute)
	rr := &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: wo.ObjectiveID,
		GateResult: result, GateReason: "checked", CreatedAt: at, UpdatedAt: at}
	if result == domain.GatePass {
		rr.CommitSHA = storetest.SHA1 // the commit a pull request records as its head
	}
	_, err := s.UpsertRunRecord(ctx, rr)
	require.NoError(t, err)
	to, reason := domain.StatusDone, domain.PauseRunComplete
	if result == domain.GateFail {
		to, reason = domain.StatusTodo, domain.PauseGateFailed
	}
	move(t, s, wo.ObjectiveID, domain.StatusInProgress, to, at)
	pause(t, s, wo.ObjectiveID, wo.WorkOrderID, reason)
}

func pause(t *testing.T, s store.Querier, objectiveID, workOrderID, reason string) {
	t.Helper()
	id := "ps-" + objectiveID + "-" + strings.ToLower(reason)
	if workOrderID != "" {
		id = "ps-" + workOrderID + "-" + strings.ToLower(reason)
	}
	require.NoError(t, s.CreatePauseState(context.Background(), &domain.PauseState{PauseStateID: id,
		ObjectiveID: objectiveID, WorkOrderID: workOrderID, Reason: reason,
		PrioritizedActions: []string{"Review"}, CreatedAt: T0.Add(3 * time.Minute)}))
}

// passed runs objective id through the whole lifecycle to a PASS.
func passed(t *testing.T, s store.Querier, id string) *domain.WorkOrder {
	t.Helper()
	wo := schedule(t, s, id)
	execute(t, s, wo)
	gate(t, s, wo, domain.GatePass)
	return wo
}

// emit writes a new unprocessed TICKET_READY event for objective subject.
func emit(t *testing.T, s store.Querier, id, subject string, seq int64) *domain.Event {
	t.Helper()
	e, created, err := s.EmitEvent(context.Background(), storetest.Event(id, subject, seq, T0))
	require.NoError(t, err)
	require.True(t, created)
	return e
}

func markProcessed(t *testing.T, s store.Querier, eventID, reason string) {
	t.Helper()
	_, err := s.MarkEventProcessed(context.Background(), store.MarkEventProcessedParams{EventID: eventID, Reason: reason, Now: T0.Add(time.Minute)})
	require.NoError(t, err)
}

// raw runs query on the store's database the way a writer bypassing the
// store could: no schema validation and no foreign keys (on SQLite they are
// off for the one connection used; on PostgreSQL this test's schema loses
// them for good).
func raw(t *testing.T, s *sqlstore.Store, query string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := s.DB().Conn(ctx)
	require.NoError(t, err)
	defer func() { require.NoError(t, conn.Close()) }()
	if s.Dialect() == "sqlite" {
		_, err = conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF")
		require.NoError(t, err)
		defer func() {
			_, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = ON")
			require.NoError(t, err)
		}()
	} else {
		dropForeignKeys(t, s)
	}
	_, err = conn.ExecContext(ctx, s.Rebind(query), args...)
	require.NoError(t, err, query)
}

func dropForeignKeys(t *testing.T, s *sqlstore.Store) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.DB().QueryContext(ctx, `SELECT conrelid::regclass::text, conname FROM pg_constraint
		WHERE contype = 'f' AND connamespace = current_schema()::regnamespace`)
	require.NoError(t, err)
	var drops []string
	for rows.Next() {
		var table, name string
		require.NoError(t, rows.Scan(&table, &name))
		drops = append(drops, "ALTER TABLE "+table+" DROP CONSTRAINT "+name)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	for _, d := range drops {
		_, err := s.DB().ExecContext(ctx, d)
		require.NoError(t, err, d)
	}
}

// uniqueKeys names, per table, the key that keeps one row per event_id or
// work_order_id: its PostgreSQL constraint, and the column definition that
// declares it in the SQLite DDL with its replacement.
var uniqueKeys = map[string]struct{ pg, sqliteKey, sqliteLoose string }{
	"workorders":     {"workorders_event_id_key", "NOT NULL UNIQUE REFERENCES events", "NOT NULL REFERENCES events"},
	"output_bundles": {"output_bundles_pkey", "work_order_id TEXT PRIMARY KEY", "work_order_id TEXT NOT NULL"},
	"run_records":    {"run_records_pkey", "work_order_id TEXT PRIMARY KEY", "work_order_id TEXT NOT NULL"},
	"events": {"events_event_type_subject_id_transition_seq_key",
		",\n    UNIQUE (event_type, subject_id, transition_seq)", ""},
}

// dropUnique removes table's one-row-per-key constraint so that a second row
// can be written; SQLite cannot drop a constraint, so the table is rebuilt
// without it (SQLite's documented twelve-step table change).
func dropUnique(t *testing.T, s *sqlstore.Store, table string) {
	t.Helper()
	ctx := context.Background()
	k, ok := uniqueKeys[table]
	require.True(t, ok, table)
	if s.Dialect() != "sqlite" {
		raw(t, s, "ALTER TABLE "+table+" DROP CONSTRAINT "+k.pg)
		return
	}
	var ddl string
	require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?`, table).Scan(&ddl))
	loose := strings.Replace(ddl, k.sqliteKey, k.sqliteLoose, 1)
	require.NotEqual(t, ddl, loose, "the %s DDL no longer declares %q", table, k.sqliteKey)
	loose = strings.Replace(loose, "CREATE TABLE "+table, "CREATE TABLE "+table+"_loose", 1)
	raw(t, s, loose)
	raw(t, s, "INSERT INTO "+table+"_loose SELECT * FROM "+table)
	raw(t, s, "DROP TABLE "+table)
	raw(t, s, "ALTER TABLE "+table+"_loose RENAME TO "+table)
}
