package substrate

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/lifecycle/deadline"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlcol"
)

// reader runs the queries of one manifest inside its transaction.
type reader struct {
	s   *Substrate
	tx  *sql.Tx
	now time.Time
}

const objectiveCols = `objective_id, title, status, urgency, blockers, blocker_ref, due_at, created_at, updated_at`

func scanObjective(r interface{ Scan(...any) error }) (manifest.ObjectiveRow, error) {
	var (
		o          manifest.ObjectiveRow
		blockerRef sql.NullString
	)
	if err := r.Scan(&o.ObjectiveID, &o.Title, &o.Status, &o.Urgency, jsonCol(&o.Blockers), &blockerRef,
		nullTimeCol(&o.DueAt), timeCol(&o.CreatedAt), timeCol(&o.UpdatedAt)); err != nil {
		return manifest.ObjectiveRow{}, err
	}
	o.BlockerRef = blockerRef.String
	return o, nil
}

// query runs one statement and scans up to RowCap+1 rows with scan.
func query[T any](ctx context.Context, r *reader, name, q string, scan func(interface{ Scan(...any) error }) (T, error), args ...any) ([]T, error) {
	rows, err := r.tx.QueryContext(ctx, r.s.dialect.Rebind(q), args...)
	if err != nil {
		return nil, r.s.unreachable("query "+name, err)
	}
	defer func() { _ = rows.Close() }()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, r.s.unreachable("query "+name+": scan", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, r.s.unreachable("query "+name, err)
	}
	return out, nil
}

// result caps rows at RowCap, marking the parameters truncated when there
// were more, and marshals them.
func result[T any](r *reader, name string, params map[string]string, rows []T) (manifest.QueryResult, error) {
	params["limit"] = strconv.Itoa(r.s.cfg.RowCap)
	if len(rows) > r.s.cfg.RowCap {
		rows = rows[:r.s.cfg.RowCap]
		params["truncated"] = "true"
	}
	if rows == nil {
		rows = []T{}
	}
	return manifest.Rows(name, QueryVersion, params, rows)
}

var (
	allStatuses    = []domain.Status{domain.StatusNew, domain.StatusTodo, domain.StatusInProgress, domain.StatusBlocked, domain.StatusDone}
	activeStatuses = domain.OpenStatuses()
)

// inList is "'A', 'B'": the statuses are this package's constants.
func inList(ss []domain.Status) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "'" + string(s) + "'"
	}
	return strings.Join(q, ", ")
}

func (r *reader) since() time.Time { return r.now.Add(-r.s.cfg.Lookback) }

// objectivesByStatus: every objective not DONE, and those DONE updated
// since the lookback; most recently updated first.
func (r *reader) objectivesByStatus(ctx context.Context) (manifest.QueryResult, error) {
	since := r.since()
	rows, err := query(ctx, r, manifest.QueryObjectivesByStatus, `SELECT `+objectiveCols+` FROM objectives
		WHERE status IN (`+inList(activeStatuses)+`) OR (status = 'DONE' AND updated_at >= $1)
		ORDER BY updated_at DESC, objective_id LIMIT $2`, scanObjective, r.s.dialect.EncodeTime(since), r.s.cfg.RowCap+1)
	if err != nil {
		return manifest.QueryResult{}, err
	}
	return result(r, manifest.QueryObjectivesByStatus, map[string]string{
		"statuses":   strings.Join(domain.StatusStrings(allStatuses), ","),
		"done_since": stamp(since),
	}, rows)
}

// blockedObjectives: BLOCKED objectives with their blockers, longest
// blocked first.
func (r *reader) blockedObjectives(ctx context.Context) (manifest.QueryResult, error) {
	rows, err := query(ctx, r, manifest.QueryBlockedObjectives, `SELECT `+objectiveCols+` FROM objectives
		WHERE status = 'BLOCKED' ORDER BY updated_at, objective_id LIMIT $1`, scanObjective, r.s.cfg.RowCap+1)
	if err != nil {
		return manifest.QueryResult{}, err
	}
	return result(r, manifest.QueryBlockedObjectives, map[string]string{"status": string(domain.StatusBlocked)}, rows)
}

// overdueObjectives: objectives not DONE past their deadline at now
// (package deadline), each with its deadline; earliest deadline first. SQL
// keeps exactly those (sqlstore's PastDeadline, on the SLAs resolved as
// package deadline resolves them), the first RowCap+1 by created_at.
func (r *reader) overdueObjectives(ctx context.Context) (manifest.QueryResult, error) {
	sla := deadline.Resolved(r.s.cfg.SLA)
	past, args := r.s.dialect.PastDeadline(store.DeadlineFilter{Before: r.now, SLA: sla}, 1)
	rows, err := query(ctx, r, manifest.QueryOverdueObjectives, `SELECT `+objectiveCols+` FROM objectives
		WHERE status IN (`+inList(activeStatuses)+`) AND `+past+`
		ORDER BY created_at, objective_id LIMIT `+strconv.Itoa(r.s.cfg.RowCap+1), scanObjective, args...)
	if err != nil {
		return manifest.QueryResult{}, err
	}
	found := make([]manifest.ObjectiveRow, 0, len(rows))
	for _, o := range rows {
		d := deadline.Deadline(&domain.Objective{Urgency: o.Urgency, DueAt: o.DueAt, CreatedAt: o.CreatedAt}, sla)
		o.Deadline = &d
		found = append(found, o)
	}
	slices.SortFunc(found, func(a, b manifest.ObjectiveRow) int {
		return cmp.Or(a.Deadline.Compare(*b.Deadline), strings.Compare(a.ObjectiveID, b.ObjectiveID))
	})
	return result(r, manifest.QueryOverdueObjectives, map[string]string{"now": stamp(r.now)}, found)
}

const pauseCols = `p.pause_state_id, p.objective_id, p.work_order_id, p.reason, p.prioritized_actions, p.created_at`

func scanPause(r interface{ Scan(...any) error }) (manifest.PauseRow, error) {
	var (
		p         manifest.PauseRow
		objective sql.NullString
		wo        sql.NullString
	)
	if err := r.Scan(&p.PauseStateID, &objective, &wo, &p.Reason, jsonCol(&p.PrioritizedActions), timeCol(&p.CreatedAt)); err != nil {
		return manifest.PauseRow{}, err
	}
	p.ObjectiveID, p.WorkOrderID = objective.String, wo.String
	if p.PrioritizedActions == nil {
		p.PrioritizedActions = []string{}
	}
	return p, nil
}

// humanPauseStates: for each objective not DONE, its latest pause state
// (what waits for a human on it); newest first.
func (r *reader) humanPauseStates(ctx context.Context) (manifest.QueryResult, error) {
	rows, err := query(ctx, r, manifest.QueryHumanPauseStates, `SELECT `+pauseCols+`
		FROM pause_states p JOIN objectives o ON o.objective_id = p.objective_id
		WHERE o.status <> 'DONE'
		AND p.created_at = (SELECT MAX(p2.created_at) FROM pause_states p2 WHERE p2.objective_id = p.objective_id)
		ORDER BY p.created_at DESC, p.pause_state_id LIMIT $1`, scanPause, r.s.cfg.RowCap+1)
	if err != nil {
		return manifest.QueryResult{}, err
	}
	return result(r, manifest.QueryHumanPauseStates, map[string]string{"latest_per_objective": "true", "objective_status_not": string(domain.StatusDone)}, rows)
}

func scanRun(r interface{ Scan(...any) error }) (manifest.RunRow, error) {
	var (
		rr        manifest.RunRow
		objective sql.NullString
	)
	if err := r.Scan(&rr.WorkOrderID, &objective, &rr.GateResult, &rr.GateReason, timeCol(&rr.CreatedAt)); err != nil {
		return manifest.RunRow{}, err
	}
	rr.ObjectiveID = objective.String
	return rr, nil
}

// recentRunRecords: gate verdicts since the lookback, newest first.
func (r *reader) recentRunRecords(ctx context.Context) (manifest.QueryResult, error) {
	since := r.since()
	rows, err := query(ctx, r, manifest.QueryRecentRunRecords, `SELECT work_order_id, objective_id, gate_result, gate_reason, created_at
		FROM run_records WHERE created_at >= $1 ORDER BY created_at DESC, work_order_id LIMIT $2`,
		scanRun, r.s.dialect.EncodeTime(since), r.s.cfg.RowCap+1)
	if err != nil {
		return manifest.QueryResult{}, err
	}
	return result(r, manifest.QueryRecentRunRecords, map[string]string{"since": stamp(since)}, rows)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// The column scanners read azolla's stored forms, as its store does.
func timeCol(t *time.Time) sqlcol.Time          { return sqlcol.Time{T: t} }
func nullTimeCol(t **time.Time) sqlcol.NullTime { return sqlcol.NullTime{T: t} }
func jsonCol(v any) sqlcol.JSON                 { return sqlcol.JSON{V: v} }
