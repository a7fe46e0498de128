package sqlstore

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// The store's retention of finished work (store.PruneFinishedParams says
// what goes and what stays). Each statement deletes at most one batch,
// chosen by a subquery (SQLite has no DELETE … LIMIT); the conditions that
// can change under it, a lease taken again, are repeated on the DELETE
// itself, which PostgreSQL re-checks on the row it is about to delete.
// Whether a step is over (an event processed, a run_record written, a job
// settled and reported) never goes back.

// settledJob is the condition on a job j whose outcome is final and told:
// nothing reads its leases or messages again.
const settledJob = `j.status IN ('` + domain.JobSucceeded + `', '` + domain.JobFailed + `', '` + domain.JobDeadLettered + `')
	AND (j.notified_at IS NOT NULL OR j.activity_workflow_id IS NULL) AND j.updated_at <= $1`

// pruneStatements run in this order, each until it deletes less than a batch.
// $1 is the cutoff, $2 the batch.
var pruneStatements = []struct {
	what  string
	count func(c *store.PruneFinishedCounts) *int
	sql   string
}{
	{"event claims", func(c *store.PruneFinishedCounts) *int { return &c.Claims }, `DELETE FROM claims
		WHERE lease_expires_at <= $1 AND (resource_type, resource_id) IN (
			SELECT c.resource_type, c.resource_id FROM claims c
			WHERE c.resource_type = '` + domain.ResourceEvent + `' AND c.lease_expires_at <= $1
				AND EXISTS (SELECT 1 FROM events e WHERE e.event_id = c.resource_id AND e.processed)
			LIMIT $2)`},
	{"workorder claims", func(c *store.PruneFinishedCounts) *int { return &c.Claims }, `DELETE FROM claims
		WHERE lease_expires_at <= $1 AND (resource_type, resource_id) IN (
			SELECT c.resource_type, c.resource_id FROM claims c
			WHERE c.resource_type = '` + domain.ResourceWorkOrder + `' AND c.lease_expires_at <= $1
				AND EXISTS (SELECT 1 FROM run_records r WHERE r.work_order_id = c.resource_id)
			LIMIT $2)`},
	// A candidate's claim is on <work_order_id>-c<attempt>
	// (domain.CandidateResource), one per candidates row.
	{"candidate claims", func(c *store.PruneFinishedCounts) *int { return &c.Claims }, `DELETE FROM claims
		WHERE lease_expires_at <= $1 AND (resource_type, resource_id) IN (
			SELECT c.resource_type, c.resource_id FROM claims c
			WHERE c.resource_type = '` + domain.ResourceCandidate + `' AND c.lease_expires_at <= $1
				AND c.resource_id IN (SELECT k.work_order_id || '-c' || k.attempt
					FROM candidates k JOIN run_records r ON r.work_order_id = k.work_order_id)
			LIMIT $2)`},
	{"job leases", func(c *store.PruneFinishedCounts) *int { return &c.JobLeases }, `DELETE FROM job_leases
		WHERE COALESCE(released_at, lease_expires_at) <= $1 AND attempt_id IN (
			SELECT l.attempt_id FROM job_leases l JOIN jobs j ON j.job_id = l.job_id
			WHERE COALESCE(l.released_at, l.lease_expires_at) <= $1 AND ` + settledJob + `
			LIMIT $2)`},
	{"job messages", func(c *store.PruneFinishedCounts) *int { return &c.JobMessages }, `DELETE FROM job_messages
		WHERE (stream, message_id) IN (
			SELECT m.stream, m.message_id FROM job_messages m JOIN jobs j ON j.job_id = m.job_id
			WHERE m.created_at <= $1 AND ` + settledJob + `
			LIMIT $2)`},
}

// PruneFinished implements store.Store.
func (s *Store) PruneFinished(ctx context.Context, p store.PruneFinishedParams) (store.PruneFinishedCounts, error) {
	var counts store.PruneFinishedCounts
	if p.Before.IsZero() {
		return counts, fmt.Errorf("prune finished work: no cutoff given")
	}
	batch := p.Batch
	if batch <= 0 {
		batch = store.DefaultPruneBatch
	}
	before := s.t(p.Before)
	for _, st := range pruneStatements {
		for {
			if err := ctx.Err(); err != nil {
				return counts, fmt.Errorf("prune finished %s: %w", st.what, err)
			}
			res, err := s.exec(ctx, st.sql, before, batch)
			var n int64
			if err == nil {
				n, err = res.RowsAffected()
			}
			if err != nil {
				return counts, fmt.Errorf("prune finished %s: %w", st.what, err)
			}
			*st.count(&counts) += int(n)
			if n < int64(batch) {
				break
			}
		}
	}
	return counts, nil
}
