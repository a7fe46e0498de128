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

// An objective's pull request (migration 8). RecordPullRequest and
// UpdatePullRequestState read the row locked (FOR UPDATE on PostgreSQL; a
// SQLite transaction holds the write lock from its start), decide on the
// row as read, and write by primary key, all in one transaction of their
// own or under a savepoint of the caller's (atomically), so two recorders
// take turns. AdvancePullRequestCursor decides in its UPDATE alone: the
// stored cursor must still be the caller's, which is the compare-and-swap
// that takes each review once.

const pullRequestCols = `objective_id, work_order_id, forge, repository, number, url, head_branch, base_branch,
	head_sha, state, adopted, review_cursor, checks_sha, rounds, created_at, updated_at, merged_at, closed_at`

// advanceReviewCursorSQL takes feedback: the cursor must be the caller's
// ($6), a named checks head ($2, empty for none) must not be the one taken
// last, and a new round ($3 = 1) needs an OPEN pull request ($7).
const advanceReviewCursorSQL = `UPDATE pull_requests SET review_cursor = $1,
		checks_sha = CASE WHEN $2 = '' THEN checks_sha ELSE $2 END,
		rounds = rounds + $3, updated_at = $4
	WHERE objective_id = $5 AND review_cursor = $6
		AND ($2 = '' OR checks_sha IS NULL OR checks_sha <> $2)
		AND ($3 = 0 OR state = $7)
	RETURNING ` + pullRequestCols

func scanPullRequest(r rowScanner) (*domain.PullRequest, error) {
	var p domain.PullRequest
	err := r.Scan(&p.ObjectiveID, &p.WorkOrderID, &p.Forge, &p.Repository, &p.Number, &p.URL, &p.HeadBranch,
		&p.BaseBranch, &p.HeadSHA, &p.State, &p.Adopted, &p.ReviewCursor, nullStringCol(&p.ChecksSHA), &p.Rounds,
		timeCol(&p.CreatedAt), timeCol(&p.UpdatedAt), nullTimeCol(&p.MergedAt), nullTimeCol(&p.ClosedAt))
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// pullRequestArgs returns p's column values in pullRequestCols order.
func (q *querier) pullRequestArgs(p *domain.PullRequest) []any {
	return []any{p.ObjectiveID, p.WorkOrderID, p.Forge, p.Repository, p.Number, p.URL, p.HeadBranch, p.BaseBranch,
		p.HeadSHA, p.State, p.Adopted, p.ReviewCursor, nullString(p.ChecksSHA), p.Rounds, q.t(p.CreatedAt),
		q.t(p.UpdatedAt), q.nt(p.MergedAt), q.nt(p.ClosedAt)}
}

// validatePullRequest checks p against its schema, then what the schema
// cannot say (store.PullRequest.CheckHeadBranch).
func validatePullRequest(p *domain.PullRequest) error {
	if err := schemas.Validate(schemas.PullRequest, p); err != nil {
		return err
	}
	return p.CheckHeadBranch()
}

// RecordPullRequest inserts the objective's pull request, or reconciles the
// one recorded with it (see store.PullRequestQuerier).
func (q *querier) RecordPullRequest(ctx context.Context, p store.RecordPullRequestParams) (*domain.PullRequest, bool, error) {
	now := store.NowOr(p.Now)
	fresh := &domain.PullRequest{ObjectiveID: p.ObjectiveID, WorkOrderID: p.WorkOrderID, Forge: p.Forge,
		Repository: p.Repository, Number: p.Number, URL: p.URL, HeadBranch: p.HeadBranch, BaseBranch: p.BaseBranch,
		HeadSHA: p.HeadSHA, State: domain.PullRequestOpen, Adopted: p.Adopted, Rounds: 1, CreatedAt: now, UpdatedAt: now}
	what := fmt.Sprintf("record pull request %s for objective %s", fresh.Ref(), p.ObjectiveID)
	if err := validatePullRequest(fresh); err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	stored, created, err := q.recordPullRequest(ctx, p.ObjectiveID, fresh)
	if errors.Is(err, domain.ErrAlreadyExists) {
		// A racing recorder of the same objective's pull request can make
		// the insert hit the number's unique key before its own row is
		// visible (PostgreSQL); once it has committed, a second try finds
		// its row and reconciles with it. A pull request recorded for
		// another objective is refused the same way again.
		stored, created, err = q.recordPullRequest(ctx, p.ObjectiveID, fresh)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	return stored, created, nil
}

// recordPullRequest is one transaction of RecordPullRequest.
func (q *querier) recordPullRequest(ctx context.Context, objectiveID string, fresh *domain.PullRequest) (*domain.PullRequest, bool, error) {
	var (
		stored  *domain.PullRequest
		created bool
	)
	err := q.atomically(ctx, func(q *querier) error {
		if err := q.checkPullRequestWorkOrder(ctx, fresh); err != nil {
			return err
		}
		cur, err := q.getPullRequest(ctx, objectiveID, true)
		if errors.Is(err, domain.ErrNotFound) {
			stored, err = scanPullRequest(q.queryRow(ctx, `INSERT INTO pull_requests (`+pullRequestCols+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
				ON CONFLICT (objective_id) DO NOTHING RETURNING `+pullRequestCols, q.pullRequestArgs(fresh)...))
			if err == nil {
				created = true
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return q.pullRequestWriteError(err, fresh)
			}
			// Another recorder's insert won; reconcile with it.
			cur, err = q.getPullRequest(ctx, objectiveID, true)
		}
		if err != nil {
			return err
		}
		stored, created, err = q.recordOver(ctx, cur, fresh)
		return err
	})
	return stored, created, err
}

// checkPullRequestWorkOrder refuses a pull request whose workorder, or
// objective, does not exist, or whose workorder is another objective's.
func (q *querier) checkPullRequestWorkOrder(ctx context.Context, p *domain.PullRequest) error {
	if _, err := q.GetObjective(ctx, p.ObjectiveID); err != nil {
		return err
	}
	w, err := q.GetWorkOrder(ctx, p.WorkOrderID)
	if err != nil {
		return err
	}
	if w.ObjectiveID != p.ObjectiveID {
		return fmt.Errorf("/work_order_id: workorder %s is not of objective %s: %w", w.WorkOrderID, p.ObjectiveID, domain.ErrInvalid)
	}
	return nil
}

// recordOver reconciles the recorded pull request cur with fresh, under
// cur's row lock.
func (q *querier) recordOver(ctx context.Context, cur, fresh *domain.PullRequest) (*domain.PullRequest, bool, error) {
	switch {
	case cur.Same(fresh.Forge, fresh.Repository, fresh.Number):
		if cur.WorkOrderID == fresh.WorkOrderID && cur.HeadSHA == fresh.HeadSHA {
			return cur, false, nil // a repeat: nothing to write
		}
		if cur.State == domain.PullRequestMerged {
			return nil, false, fmt.Errorf("a merged pull request is final: %w",
				domain.PullRequestTransitionError(cur.ObjectiveID, cur.State, domain.PullRequestOpen))
		}
		next := *cur
		next.WorkOrderID, next.HeadSHA, next.UpdatedAt = fresh.WorkOrderID, fresh.HeadSHA, fresh.UpdatedAt
		if err := validatePullRequest(&next); err != nil {
			return nil, false, err
		}
		if _, err := q.exec(ctx, `UPDATE pull_requests SET work_order_id = $1, head_sha = $2, updated_at = $3
			WHERE objective_id = $4`, next.WorkOrderID, next.HeadSHA, q.t(next.UpdatedAt), next.ObjectiveID); err != nil {
			return nil, false, err
		}
		return &next, false, nil
	case cur.State == domain.PullRequestClosed:
		// A human closed it without merging and azolla opened another: the
		// new one is the objective's now, its rounds and feedback afresh.
		_, err := q.exec(ctx, `UPDATE pull_requests SET (`+pullRequestCols+`) =
			($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
			WHERE objective_id = $1`, q.pullRequestArgs(fresh)...)
		if err != nil {
			return nil, false, q.pullRequestWriteError(err, fresh)
		}
		return fresh, true, nil
	default:
		return nil, false, &domain.PullRequestConflictError{Stored: cur, Forge: fresh.Forge,
			Repository: fresh.Repository, Number: fresh.Number}
	}
}

// pullRequestWriteError names what a unique violation on insert means: the
// pull request is recorded for another objective.
func (q *querier) pullRequestWriteError(err error, p *domain.PullRequest) error {
	if q.d.IsUniqueViolation(err) {
		return fmt.Errorf("%s is recorded for another objective: %w", p.Ref(), domain.ErrAlreadyExists)
	}
	return err
}

// GetPullRequest loads the objective's pull request.
func (q *querier) GetPullRequest(ctx context.Context, objectiveID string) (*domain.PullRequest, error) {
	p, err := q.getPullRequest(ctx, objectiveID, false)
	if err != nil {
		return nil, fmt.Errorf("get pull request: %w", err)
	}
	return p, nil
}

// getPullRequest loads the objective's pull request, locking its row until
// the end of the transaction if lock is set.
func (q *querier) getPullRequest(ctx context.Context, objectiveID string, lock bool) (*domain.PullRequest, error) {
	query := `SELECT ` + pullRequestCols + ` FROM pull_requests WHERE objective_id = $1`
	if lock {
		query += q.d.ForUpdate
	}
	p, err := scanPullRequest(q.queryRow(ctx, query, objectiveID))
	if err != nil {
		return nil, notFound(err, "pull request of objective", objectiveID)
	}
	return p, nil
}

// UpdatePullRequestState records the state the forge reports, by the
// diagram on store.PullRequestState.
func (q *querier) UpdatePullRequestState(ctx context.Context, p store.UpdatePullRequestStateParams) (*domain.PullRequest, bool, error) {
	now := store.NowOr(p.Now)
	var (
		out     *domain.PullRequest
		changed bool
	)
	err := q.atomically(ctx, func(q *querier) error {
		cur, err := q.getPullRequest(ctx, p.ObjectiveID, true)
		if err != nil {
			return err
		}
		next := *cur
		if p.HeadSHA != "" {
			next.HeadSHA = p.HeadSHA
		}
		if p.State != cur.State {
			next.State, next.MergedAt, next.ClosedAt = p.State, nil, nil
			switch p.State {
			case domain.PullRequestMerged:
				next.MergedAt = &now
			case domain.PullRequestClosed:
				next.ClosedAt = &now
			}
		}
		if next.State == cur.State && next.HeadSHA == cur.HeadSHA {
			out = cur // seen before: nothing to write
			return nil
		}
		next.UpdatedAt = now
		if err := validatePullRequest(&next); err != nil {
			return err
		}
		if cur.State == domain.PullRequestMerged {
			return fmt.Errorf("a merged pull request is final: %w",
				domain.PullRequestTransitionError(cur.ObjectiveID, cur.State, next.State))
		}
		if next.State != cur.State && !domain.PullRequestMayMove(cur.State, next.State) {
			return domain.PullRequestTransitionError(cur.ObjectiveID, cur.State, next.State)
		}
		if _, err := q.exec(ctx, `UPDATE pull_requests SET state = $1, head_sha = $2, merged_at = $3, closed_at = $4,
			updated_at = $5 WHERE objective_id = $6`, next.State, next.HeadSHA, q.nt(next.MergedAt), q.nt(next.ClosedAt),
			q.t(next.UpdatedAt), next.ObjectiveID); err != nil {
			return err
		}
		out, changed = &next, true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("update pull request of objective %s to %s: %w", p.ObjectiveID, p.State, err)
	}
	return out, changed, nil
}

// AdvancePullRequestCursor takes one batch of feedback by compare-and-swap
// on review_cursor. The row is read first only to validate the record the
// swap writes; the swap's own WHERE decides, so two callers that read the
// same cursor cannot both win.
func (q *querier) AdvancePullRequestCursor(ctx context.Context, p store.AdvancePullRequestCursorParams) (*domain.PullRequest, error) {
	what := "advance review cursor of objective " + p.ObjectiveID
	if p.To == p.From && p.ChecksSHA == "" && !p.NewRound {
		return nil, fmt.Errorf("%s: nothing to do: the cursor stays %q, no checks are named and no round starts: %w",
			what, p.From, domain.ErrInvalid)
	}
	now := store.NowOr(p.Now)
	cur, err := q.getPullRequest(ctx, p.ObjectiveID, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	next, round := *cur, 0
	next.ReviewCursor, next.UpdatedAt = p.To, now
	if p.ChecksSHA != "" {
		next.ChecksSHA = p.ChecksSHA
	}
	if p.NewRound {
		next.Rounds, round = next.Rounds+1, 1
	}
	if err := validatePullRequest(&next); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	st, err := q.statement(ctx, stmtAdvanceReviewCursor)
	var out *domain.PullRequest
	if err == nil {
		out, err = scanPullRequest(st.QueryRowContext(ctx, p.To, p.ChecksSHA, round, q.t(now), p.ObjectiveID, p.From,
			domain.PullRequestOpen))
	}
	if errors.Is(err, sql.ErrNoRows) {
		err = q.advanceRefused(ctx, p)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// advanceRefused says why the swap matched no row, from the row as it is.
func (q *querier) advanceRefused(ctx context.Context, p store.AdvancePullRequestCursorParams) error {
	cur, err := q.getPullRequest(ctx, p.ObjectiveID, false)
	if err != nil {
		return err
	}
	stale := &domain.PullRequestStaleError{ObjectiveID: p.ObjectiveID, ReviewCursor: cur.ReviewCursor, ChecksSHA: cur.ChecksSHA}
	switch {
	case cur.ReviewCursor != p.From:
		stale.Reason = fmt.Sprintf("review cursor is %q, not %q: those reviews were taken", cur.ReviewCursor, p.From)
	case p.ChecksSHA != "" && cur.ChecksSHA == p.ChecksSHA:
		stale.Reason = "the failing checks of " + p.ChecksSHA + " were taken"
	case p.NewRound && cur.State != domain.PullRequestOpen:
		return &domain.TransitionError{Kind: "pull request of objective", ObjectiveID: p.ObjectiveID,
			Current: string(cur.State), From: []string{string(domain.PullRequestOpen)}, To: "a new round"}
	default:
		stale.Reason = "it changed while the cursor was being advanced"
	}
	return stale
}

// ListPullRequests pages through pull requests by (created_at,
// objective_id), keeping the states asked for.
func (q *querier) ListPullRequests(ctx context.Context, p store.ListPullRequestsParams) ([]*domain.PullRequest, error) {
	args := []any{q.t(p.After.CreatedAt), p.After.ID, limit(p.Limit)}
	states := "TRUE"
	if len(p.States) > 0 {
		states = "state IN (" + placeholders(len(args)+1, len(p.States)) + ")"
		for _, s := range p.States {
			args = append(args, s)
		}
	}
	rows, err := q.query(ctx, `SELECT `+pullRequestCols+` FROM pull_requests
		WHERE `+states+` AND (created_at, objective_id) > ($1, $2)
		ORDER BY created_at, objective_id LIMIT $3`, args...)
	out, err := collect(rows, err, scanPullRequest)
	if err != nil {
		return nil, fmt.Errorf("list pull requests: %w", err)
	}
	return out, nil
}
