package substrate

import (
	"context"

	"github.com/azolla/azolla/internal/diazotroph/manifest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlcol"
)

func scanSpend(r interface{ Scan(...any) error }) (manifest.SpendRow, error) {
	var (
		s manifest.SpendRow
		m store.BundleMetadata
	)
	if err := r.Scan(&s.WorkOrderID, sqlcol.NullString{S: &s.ObjectiveID}, sqlcol.NullString{S: &s.Repository},
		jsonCol(&m), timeCol(&s.CreatedAt)); err != nil {
		return manifest.SpendRow{}, err
	}
	s.Generator = m.Generator
	if rr := m.RunReport; rr != nil {
		s.RunReport = &manifest.SpendReport{Model: rr.Model, CostUSD: rr.CostUSD, Tokens: rr.Tokens}
	}
	return s, nil
}

// runSpend: the output bundles created since the lookback whose runs could
// cost, newest first, each with the repository of its workorder's
// objective (none for a track's workorder, whose objective_id is empty).
//
// The metadata is decoded here rather than with SQL JSON functions, so
// both backends read it alike (text on SQLite, jsonb on PostgreSQL), and
// which runs count is store.Spend.Add's rule (manifest.SpendRow.Counts),
// not a copy of it in SQL. So the cap applies to the bundles read: the
// newest RowCap+1 of the lookback; when there were more, the runs among
// the first RowCap are kept and the result says "truncated". Every column
// read is in every azolla store since its first migration: no table
// check is needed; a bundle written before run reports has none, so a run
// of the command or openai generator counts as of unknown cost.
func (r *reader) runSpend(ctx context.Context) (manifest.QueryResult, error) {
	since := r.since()
	rows, err := query(ctx, r, manifest.QueryRunSpend, `SELECT b.work_order_id, w.objective_id, o.repository, b.metadata, b.created_at
		FROM output_bundles b JOIN workorders w ON w.work_order_id = b.work_order_id
		LEFT JOIN objectives o ON o.objective_id = w.objective_id
		WHERE b.created_at >= $1 ORDER BY b.created_at DESC, b.work_order_id LIMIT $2`,
		scanSpend, r.s.dialect.EncodeTime(since), r.s.cfg.RowCap+1)
	if err != nil {
		return manifest.QueryResult{}, err
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
