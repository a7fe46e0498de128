package substrate

import (
	"context"
	"slices"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/store/sqlcol"
)

func scanSpend(r interface{ Scan(...any) error }) (manifest.SpendRow, error) {
	var (
		s manifest.SpendRow
		m domain.BundleMetadata
	)
	if err := r.Scan(&s.WorkOrderID, sqlcol.NullString{S: &s.ObjectiveID}, sqlcol.NullString{S: &s.Repository},
		jsonCol(&m), timeCol(&s.CreatedAt)); err != nil {
		return manifest.SpendRow{}, err
	}
	s.Generator, s.RunReport = m.Generator, manifest.SpendReportOf(m.RunReport)
	return s, nil
}

// runSpend: the runs since the lookback that could cost, newest first,
// each with the repository of its workorder's objective (none for a
// track's workorder, whose objective_id is empty): the output bundles,
// and of a best-of-N workorder its candidates instead of its bundle, which
// repeats the winner's report (a candidate that was never started, SKIPPED,
// spent nothing).
//
// The metadata and reports are decoded here rather than with SQL JSON
// functions, so both backends read them alike (text on SQLite, jsonb on
// PostgreSQL), and which runs count is store.Spend.Add's rule
// (manifest.SpendRow.Counts), not a copy of it in SQL. So the cap applies
// to the rows read: the newest RowCap+1 of the lookback; when there were
// more, the runs among the first RowCap are kept and the result says
// "truncated". A store older than candidates has no candidates table and
// is read without it; a bundle written before run reports has none, so a
// run of the command or openai generator counts as of unknown cost.
func (r *reader) runSpend(ctx context.Context) (manifest.QueryResult, error) {
	since := r.since()
	withCandidates, err := r.tableExists(ctx, "candidates")
	if err != nil {
		return manifest.QueryResult{}, err
	}
	bundles := `SELECT b.work_order_id, w.objective_id, o.repository, b.metadata, b.created_at
		FROM output_bundles b JOIN workorders w ON w.work_order_id = b.work_order_id
		LEFT JOIN objectives o ON o.objective_id = w.objective_id
		WHERE b.created_at >= $1`
	if withCandidates {
		bundles += ` AND NOT EXISTS (SELECT 1 FROM candidates c WHERE c.work_order_id = b.work_order_id)`
	}
	rows, err := query(ctx, r, manifest.QueryRunSpend, bundles+` ORDER BY b.created_at DESC, b.work_order_id LIMIT $2`,
		scanSpend, r.s.dialect.EncodeTime(since), r.s.cfg.RowCap+1)
	if err != nil {
		return manifest.QueryResult{}, err
	}
	if withCandidates {
		cands, err := query(ctx, r, manifest.QueryRunSpend, `SELECT c.work_order_id, w.objective_id, o.repository,
			c.generator, c.report, c.created_at
			FROM candidates c JOIN workorders w ON w.work_order_id = c.work_order_id
			LEFT JOIN objectives o ON o.objective_id = w.objective_id
			WHERE c.created_at >= $1 AND c.status <> 'SKIPPED'
			ORDER BY c.created_at DESC, c.work_order_id, c.attempt LIMIT $2`,
			scanCandidateSpend, r.s.dialect.EncodeTime(since), r.s.cfg.RowCap+1)
		if err != nil {
			return manifest.QueryResult{}, err
		}
		rows = append(rows, cands...)
		slices.SortStableFunc(rows, func(a, b manifest.SpendRow) int { return b.CreatedAt.Compare(a.CreatedAt) })
	}
	params := map[string]string{"since": stamp(since)}
	if len(rows) > r.s.cfg.RowCap {
		rows = rows[:r.s.cfg.RowCap]
		params["truncated"] = "true"
	}
	var costly []manifest.SpendRow
	for _, row := range rows {
		if row.Counts() {
			costly = append(costly, row)
		}
	}
	return result(r, manifest.QueryRunSpend, params, costly)
}

// scanCandidateSpend reads a candidate as a run of its workorder.
func scanCandidateSpend(r interface{ Scan(...any) error }) (manifest.SpendRow, error) {
	var (
		s   manifest.SpendRow
		rep *domain.RunReport
	)
	if err := r.Scan(&s.WorkOrderID, sqlcol.NullString{S: &s.ObjectiveID}, sqlcol.NullString{S: &s.Repository},
		&s.Generator, jsonCol(&rep), timeCol(&s.CreatedAt)); err != nil {
		return manifest.SpendRow{}, err
	}
	s.RunReport = manifest.SpendReportOf(rep)
	return s, nil
}
