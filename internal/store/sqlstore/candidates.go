package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// A workorder's candidates (migration 11). PutCandidate and ChooseCandidate
// lock the workorder's row first (FOR UPDATE on PostgreSQL; a SQLite
// transaction holds the write lock from its start), then decide on the
// candidates as read, all in one transaction of their own or under a
// savepoint of the caller's, so a put and a choice of the same workorder
// take turns. The partial unique index candidates_one_chosen backs the
// "one chosen" rule should a writer ever skip the lock.

const candidateCols = `work_order_id, attempt, generator, status, runner_status, patch, patch_sha256, diff_lines,
	gate_results, commands_passed, report, chosen, why, finished_at, created_at, updated_at`

func scanCandidate(r rowScanner) (*domain.Candidate, error) {
	var c domain.Candidate
	err := r.Scan(&c.WorkOrderID, &c.Attempt, &c.Generator, &c.Status, nullStringCol(&c.RunnerStatus),
		nullStringCol(&c.Patch), nullStringCol(&c.PatchSHA256), nullIntCol{&c.DiffLines}, jsonCol(&c.GateResults),
		&c.CommandsPassed, jsonCol(&c.Report), &c.Chosen, nullStringCol(&c.Why), nullTimeCol(&c.FinishedAt),
		timeCol(&c.CreatedAt), timeCol(&c.UpdatedAt))
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// nullIntCol scans a nullable integer column into *I (nil for NULL).
type nullIntCol struct{ I **int }

// Scan implements sql.Scanner.
func (c nullIntCol) Scan(src any) error {
	var n sql.NullInt64
	if err := n.Scan(src); err != nil {
		return err
	}
	*c.I = nil
	if n.Valid {
		v := int(n.Int64)
		*c.I = &v
	}
	return nil
}

// nullInt stores nil as NULL.
func nullInt(i *int) any {
	if i == nil {
		return nil
	}
	return int64(*i)
}

// candidateArgs returns c's column values in candidateCols order.
func (q *querier) candidateArgs(c *domain.Candidate) ([]any, error) {
	gates, err := jsonText(c.GateResults)
	if err != nil {
		return nil, err
	}
	var report any
	if c.Report != nil {
		text, err := jsonText(c.Report)
		if err != nil {
			return nil, err
		}
		report = text
	}
	return []any{c.WorkOrderID, c.Attempt, c.Generator, c.Status, nullString(c.RunnerStatus), nullString(c.Patch),
		nullString(c.PatchSHA256), nullInt(c.DiffLines), gates, c.CommandsPassed, report, c.Chosen,
		nullString(c.Why), q.nt(c.FinishedAt), q.t(c.CreatedAt), q.t(c.UpdatedAt)}, nil
}

// PutCandidate inserts or replaces one candidate (see
// store.CandidateQuerier).
func (q *querier) PutCandidate(ctx context.Context, c *domain.Candidate) (*domain.Candidate, error) {
	what := "put candidate " + domain.CandidateKey(c.WorkOrderID, c.Attempt)
	next := *c
	next.CreatedAt = store.NowOr(c.CreatedAt)
	next.UpdatedAt = store.NowOr(c.UpdatedAt)
	if c.FinishedAt != nil {
		at := store.NowOr(*c.FinishedAt)
		next.FinishedAt = &at
	}
	if next.GateResults == nil {
		next.GateResults = []domain.CandidateGateResult{}
	}
	if next.PatchSHA256 == "" && next.Patch != "" {
		next.PatchSHA256 = domain.PatchSHA256(next.Patch)
	}
	if err := schemas.Validate(schemas.Candidate, &next); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := next.CheckPatchHash(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if next.Chosen {
		return nil, fmt.Errorf("%s: /chosen: only ChooseCandidate chooses: %w", what, domain.ErrInvalid)
	}
	args, err := q.candidateArgs(&next)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var stored *domain.Candidate
	err = q.atomically(ctx, func(q *querier) error {
		chosen, err := q.lockCandidates(ctx, next.WorkOrderID)
		if err != nil {
			return err
		}
		if chosen != nil {
			return settled(chosen)
		}
		// Under the workorder's lock, so a write racing this one (the
		// selection's cancellation, a run's end) has committed or waits.
		var was string
		err = q.queryRow(ctx, `SELECT status FROM candidates WHERE work_order_id = $1 AND attempt = $2`,
			next.WorkOrderID, next.Attempt).Scan(&was)
		if err == nil && was != domain.CandidateRunning && was != next.Status {
			return fmt.Errorf("candidate is %s, not to become %s: %w", was, next.Status, domain.ErrCandidateFinished)
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		stored, err = scanCandidate(q.queryRow(ctx, `INSERT INTO candidates (`+candidateCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
			ON CONFLICT (work_order_id, attempt) DO UPDATE SET generator = excluded.generator,
				status = excluded.status, runner_status = excluded.runner_status, patch = excluded.patch,
				patch_sha256 = excluded.patch_sha256, diff_lines = excluded.diff_lines,
				gate_results = excluded.gate_results, commands_passed = excluded.commands_passed,
				report = excluded.report, chosen = excluded.chosen, why = excluded.why,
				finished_at = excluded.finished_at, updated_at = excluded.updated_at
			RETURNING `+candidateCols, args...))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return stored, nil
}

// lockCandidates locks the workorder's row, for the rest of the
// transaction, and returns its chosen candidate (nil before one is). An
// unknown workorder is a *NotFoundError.
func (q *querier) lockCandidates(ctx context.Context, workOrderID string) (*domain.Candidate, error) {
	var id string
	err := q.queryRow(ctx, `SELECT work_order_id FROM workorders WHERE work_order_id = $1`+q.d.ForUpdate,
		workOrderID).Scan(&id)
	if err != nil {
		return nil, notFound(err, "workorder", workOrderID)
	}
	c, err := scanCandidate(q.queryRow(ctx, `SELECT `+candidateCols+` FROM candidates
		WHERE work_order_id = $1 AND chosen = $2`, workOrderID, true))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return c, err
}

// settled is the refusal of a write once c, the chosen one, settled its
// workorder's candidates.
func settled(c *domain.Candidate) error {
	return fmt.Errorf("workorder %s chose candidate %d: %w", c.WorkOrderID, c.Attempt, domain.ErrCandidatesSettled)
}

// GetCandidate loads one candidate.
func (q *querier) GetCandidate(ctx context.Context, workOrderID string, attempt int) (*domain.Candidate, error) {
	c, err := scanCandidate(q.queryRow(ctx, `SELECT `+candidateCols+` FROM candidates
		WHERE work_order_id = $1 AND attempt = $2`, workOrderID, attempt))
	if err != nil {
		return nil, fmt.Errorf("get candidate: %w", notFound(err, "candidate", domain.CandidateKey(workOrderID, attempt)))
	}
	return c, nil
}

// ListCandidates lists a workorder's candidates by attempt.
func (q *querier) ListCandidates(ctx context.Context, workOrderID string) ([]*domain.Candidate, error) {
	rows, err := q.query(ctx, `SELECT `+candidateCols+` FROM candidates WHERE work_order_id = $1 ORDER BY attempt`,
		workOrderID)
	out, err := collect(rows, err, scanCandidate)
	if err != nil {
		return nil, fmt.Errorf("list candidates of workorder %q: %w", workOrderID, err)
	}
	return out, nil
}

// ChooseCandidate marks the workorder's winner (see store.CandidateQuerier).
func (q *querier) ChooseCandidate(ctx context.Context, p store.ChooseCandidateParams) (*domain.Candidate, error) {
	what := "choose candidate " + domain.CandidateKey(p.WorkOrderID, p.Attempt)
	now := store.NowOr(p.Now)
	// The parameters alone, as a record, so that a hostile id or why is
	// refused by the schema before anything is read.
	probe := &domain.Candidate{WorkOrderID: p.WorkOrderID, Attempt: p.Attempt, Generator: "static",
		Status: domain.CandidateDone, GateResults: []domain.CandidateGateResult{}, Chosen: true, Why: p.Why,
		CreatedAt: now, UpdatedAt: now}
	if err := schemas.Validate(schemas.Candidate, probe); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var out *domain.Candidate
	err := q.atomically(ctx, func(q *querier) error {
		chosen, err := q.lockCandidates(ctx, p.WorkOrderID)
		if err != nil {
			return err
		}
		if chosen != nil {
			if chosen.Attempt == p.Attempt {
				out = chosen // a repeat
				return nil
			}
			return settled(chosen)
		}
		cur, err := q.GetCandidate(ctx, p.WorkOrderID, p.Attempt)
		if err != nil {
			return err
		}
		next := *cur
		next.Chosen, next.UpdatedAt = true, now
		if p.Why != "" {
			next.Why = p.Why
		}
		if err := schemas.Validate(schemas.Candidate, &next); err != nil {
			return err
		}
		_, err = q.exec(ctx, `UPDATE candidates SET chosen = $1, why = $2, updated_at = $3
			WHERE work_order_id = $4 AND attempt = $5`,
			true, nullString(next.Why), q.t(next.UpdatedAt), next.WorkOrderID, next.Attempt)
		if q.d.IsUniqueViolation(err) {
			return fmt.Errorf("workorder %s has a chosen candidate: %w", p.WorkOrderID, domain.ErrCandidatesSettled)
		}
		if err != nil {
			return err
		}
		out = &next
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
