package sqlstore

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// A track's snapshot, workorder and run record store '' in objective_id,
// and a track workorder '' in branch_name (migration 7).

const snapshotCols = `context_snapshot_id, objective_id, track, full_prompt_text, commit_sha, base_branch,
	related_yield_refs, created_at`

func scanSnapshot(r rowScanner) (*domain.ContextSnapshot, error) {
	var s domain.ContextSnapshot
	err := r.Scan(&s.ContextSnapshotID, &s.ObjectiveID, nullStringCol(&s.Track), &s.FullPromptText, nullStringCol(&s.Metadata.CommitSHA),
		nullStringCol(&s.Metadata.BaseBranch), jsonCol(&s.RelatedYieldRefs), timeCol(&s.CreatedAt))
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// CreateContextSnapshot inserts a frozen run input.
func (q *querier) CreateContextSnapshot(ctx context.Context, s *domain.ContextSnapshot) error {
	s.CreatedAt = store.NowOr(s.CreatedAt)
	if s.RelatedYieldRefs == nil {
		s.RelatedYieldRefs = []domain.YieldRef{} // a JSON array, never null
	}
	if err := schemas.Validate(schemas.ContextSnapshot, s); err != nil {
		return fmt.Errorf("create context snapshot: %w", err)
	}
	refs, err := jsonText(s.RelatedYieldRefs)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `INSERT INTO context_snapshots (`+snapshotCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		s.ContextSnapshotID, s.ObjectiveID, nullString(s.Track), s.FullPromptText, nullString(s.Metadata.CommitSHA),
		nullString(s.Metadata.BaseBranch), refs, q.t(s.CreatedAt))
	if q.d.IsUniqueViolation(err) {
		return fmt.Errorf("create context snapshot %q: %w", s.ContextSnapshotID, domain.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create context snapshot %q: %w", s.ContextSnapshotID, err)
	}
	return nil
}

// GetContextSnapshot loads one snapshot.
func (q *querier) GetContextSnapshot(ctx context.Context, id string) (*domain.ContextSnapshot, error) {
	s, err := scanSnapshot(q.queryRow(ctx, `SELECT `+snapshotCols+` FROM context_snapshots WHERE context_snapshot_id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("get context snapshot: %w", notFound(err, "context snapshot", id))
	}
	return s, nil
}

const workOrderCols = `work_order_id, event_id, objective_id, track, diazotroph_type, context_snapshot_id, branch_name,
	budget_ms, budget_usd_remaining, status, created_at, executed_at`

func scanWorkOrder(r rowScanner) (*domain.WorkOrder, error) {
	var w domain.WorkOrder
	err := r.Scan(&w.WorkOrderID, &w.EventID, &w.ObjectiveID, nullStringCol(&w.Track), &w.DiazotrophType, &w.ContextSnapshotID,
		&w.BranchName, &w.BudgetMS, nullFloatCol(&w.BudgetUSDRemaining), &w.Status, timeCol(&w.CreatedAt), nullTimeCol(&w.ExecutedAt))
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// CreateWorkOrder inserts w unless its event has a workorder already; the
// unique workorders(event_id) key decides, so a re-run scheduler gets the
// first workorder back instead of a second one.
func (q *querier) CreateWorkOrder(ctx context.Context, w *domain.WorkOrder) (*domain.WorkOrder, bool, error) {
	w.CreatedAt = store.NowOr(w.CreatedAt)
	if err := schemas.Validate(schemas.WorkOrder, w); err != nil {
		return nil, false, fmt.Errorf("create workorder: %w", err)
	}
	return insertOrGet(q, fmt.Sprintf("create workorder %q", w.WorkOrderID), func() (*domain.WorkOrder, error) {
		return scanWorkOrder(q.queryRow(ctx, `INSERT INTO workorders (`+workOrderCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (event_id) DO NOTHING RETURNING `+workOrderCols,
			w.WorkOrderID, w.EventID, w.ObjectiveID, nullString(w.Track), w.DiazotrophType, w.ContextSnapshotID, w.BranchName,
			w.BudgetMS, nullFloat(w.BudgetUSDRemaining), w.Status, q.t(w.CreatedAt), q.nt(w.ExecutedAt)))
	}, func() (*domain.WorkOrder, error) { return q.GetWorkOrderByEvent(ctx, w.EventID) })
}

// GetWorkOrder loads one workorder.
func (q *querier) GetWorkOrder(ctx context.Context, id string) (*domain.WorkOrder, error) {
	w, err := scanWorkOrder(q.queryRow(ctx, `SELECT `+workOrderCols+` FROM workorders WHERE work_order_id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("get workorder: %w", notFound(err, "workorder", id))
	}
	return w, nil
}

// GetWorkOrderByEvent loads the workorder an event was scheduled into.
func (q *querier) GetWorkOrderByEvent(ctx context.Context, eventID string) (*domain.WorkOrder, error) {
	w, err := scanWorkOrder(q.queryRow(ctx, `SELECT `+workOrderCols+` FROM workorders WHERE event_id = $1`, eventID))
	if err != nil {
		return nil, fmt.Errorf("get workorder by event: %w", notFound(err, "workorder for event", eventID))
	}
	return w, nil
}

// ListWorkOrders lists workorders, oldest first.
func (q *querier) ListWorkOrders(ctx context.Context, p store.ListWorkOrdersParams) ([]*domain.WorkOrder, error) {
	var f filters
	f.eq("status", string(p.Status))
	f.eq("objective_id", p.ObjectiveID)
	f.eq("track", p.Track)
	f.eq("diazotroph_type", p.DiazotrophType)
	rows, err := q.query(ctx, `SELECT `+workOrderCols+` FROM workorders`+f.clause()+`
		ORDER BY created_at, work_order_id LIMIT `+f.arg(limit(p.Limit)), f.args...)
	out, err := collect(rows, err, scanWorkOrder)
	if err != nil {
		return nil, fmt.Errorf("list workorders: %w", err)
	}
	return out, nil
}

// MarkWorkOrderExecuted moves CREATED to EXECUTED once.
func (q *querier) MarkWorkOrderExecuted(ctx context.Context, p store.MarkWorkOrderExecutedParams) (*domain.WorkOrder, bool, error) {
	cur, err := q.GetWorkOrder(ctx, p.WorkOrderID)
	if err != nil {
		return nil, false, fmt.Errorf("mark workorder executed: %w", err)
	}
	if cur.Status == domain.WorkOrderExecuted {
		return cur, false, nil
	}
	next := *cur
	now := store.NowOr(p.Now)
	next.Status, next.ExecutedAt = domain.WorkOrderExecuted, &now
	if err := schemas.Validate(schemas.WorkOrder, &next); err != nil {
		return nil, false, fmt.Errorf("mark workorder executed: %w", err)
	}
	res, err := q.exec(ctx, `UPDATE workorders SET status = $1, executed_at = $2 WHERE work_order_id = $3 AND status = $4`,
		domain.WorkOrderExecuted, q.t(now), p.WorkOrderID, domain.WorkOrderCreated)
	if err != nil {
		return nil, false, fmt.Errorf("mark workorder %q executed: %w", p.WorkOrderID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		// A concurrent runner got there first: still a no-op for us.
		w, gerr := q.GetWorkOrder(ctx, p.WorkOrderID)
		return w, false, gerr
	}
	return &next, true, nil
}

const bundleCols = `work_order_id, title, content, notes, metadata, runner_status, created_at`

func scanBundle(r rowScanner) (*domain.OutputBundle, error) {
	var b domain.OutputBundle
	err := r.Scan(&b.WorkOrderID, &b.Title, &b.Content, &b.Notes, jsonCol(&b.Metadata), &b.RunnerStatus, timeCol(&b.CreatedAt))
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// CreateOutputBundle inserts a workorder's single bundle; the primary key on
// work_order_id keeps it single.
func (q *querier) CreateOutputBundle(ctx context.Context, b *domain.OutputBundle) (*domain.OutputBundle, bool, error) {
	b.CreatedAt = store.NowOr(b.CreatedAt)
	if kept, tr := domain.SplitTranscript(b); tr != nil {
		// The transcript the bundle carried goes to its own table, with it.
		return q.createBundleWithTranscript(ctx, kept, tr, (*querier).CreateOutputBundle)
	}
	if err := schemas.Validate(schemas.OutputBundle, b); err != nil {
		return nil, false, fmt.Errorf("create output bundle: %w", err)
	}
	meta, err := jsonText(b.Metadata)
	if err != nil {
		return nil, false, err
	}
	return insertOrGet(q, fmt.Sprintf("create output bundle for %q", b.WorkOrderID), func() (*domain.OutputBundle, error) {
		return scanBundle(q.queryRow(ctx, `INSERT INTO output_bundles (`+bundleCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (work_order_id) DO NOTHING RETURNING `+bundleCols,
			b.WorkOrderID, b.Title, b.Content, b.Notes, meta, b.RunnerStatus, q.t(b.CreatedAt)))
	}, func() (*domain.OutputBundle, error) { return q.GetOutputBundle(ctx, b.WorkOrderID) })
}

// GetOutputBundle loads a workorder's bundle.
func (q *querier) GetOutputBundle(ctx context.Context, workOrderID string) (*domain.OutputBundle, error) {
	b, err := scanBundle(q.queryRow(ctx, `SELECT `+bundleCols+` FROM output_bundles WHERE work_order_id = $1`, workOrderID))
	if err != nil {
		return nil, fmt.Errorf("get output bundle: %w", notFound(err, "output bundle for workorder", workOrderID))
	}
	return b, nil
}

const runRecordCols = `work_order_id, objective_id, track, gate_result, gate_reason, commit_sha, created_at, updated_at,
	blame`

func scanRunRecord(r rowScanner) (*domain.RunRecord, error) {
	var rr domain.RunRecord
	err := r.Scan(&rr.WorkOrderID, &rr.ObjectiveID, nullStringCol(&rr.Track), &rr.GateResult, &rr.GateReason, nullStringCol(&rr.CommitSHA),
		timeCol(&rr.CreatedAt), timeCol(&rr.UpdatedAt), nullStringCol(&rr.Blame))
	if err != nil {
		return nil, err
	}
	return &rr, nil
}

// UpsertRunRecord writes the verdict keyed by work_order_id.
func (q *querier) UpsertRunRecord(ctx context.Context, r *domain.RunRecord) (*domain.RunRecord, error) {
	r.CreatedAt = store.NowOr(r.CreatedAt)
	r.UpdatedAt = store.NowOr(r.UpdatedAt)
	if err := schemas.Validate(schemas.RunRecord, r); err != nil {
		return nil, fmt.Errorf("upsert run record: %w", err)
	}
	stored, err := scanRunRecord(q.queryRow(ctx, `INSERT INTO run_records (`+runRecordCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (work_order_id) DO UPDATE SET objective_id = excluded.objective_id, track = excluded.track,
			gate_result = excluded.gate_result, gate_reason = excluded.gate_reason,
			commit_sha = excluded.commit_sha, updated_at = excluded.updated_at, blame = excluded.blame
		RETURNING `+runRecordCols,
		r.WorkOrderID, r.ObjectiveID, nullString(r.Track), r.GateResult, r.GateReason, nullString(r.CommitSHA), q.t(r.CreatedAt),
		q.t(r.UpdatedAt), nullString(r.Blame)))
	if err != nil {
		return nil, fmt.Errorf("upsert run record for %q: %w", r.WorkOrderID, err)
	}
	return stored, nil
}

// GetRunRecord loads a workorder's run record.
func (q *querier) GetRunRecord(ctx context.Context, workOrderID string) (*domain.RunRecord, error) {
	r, err := scanRunRecord(q.queryRow(ctx, `SELECT `+runRecordCols+` FROM run_records WHERE work_order_id = $1`, workOrderID))
	if err != nil {
		return nil, fmt.Errorf("get run record: %w", notFound(err, "run record for workorder", workOrderID))
	}
	return r, nil
}
