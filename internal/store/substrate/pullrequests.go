package substrate

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
)

// pullRequestsTable is the table of objectives' pull requests, which azolla
// stores have had only since their migration 0008_pull_requests.
const pullRequestsTable = "pull_requests"

// tableExists reports whether the substrate has table, as the queries
// would name it (on PostgreSQL, in the search_path). Asking first keeps the
// transaction usable: on PostgreSQL a failed statement aborts it, and the
// queries after it would fail too.
func (r *reader) tableExists(ctx context.Context, table string) (bool, error) {
	var q string
	switch r.s.cfg.Driver {
	case DriverPostgres:
		q = `SELECT to_regclass($1) IS NOT NULL`
	default:
		q = `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = $1`
	}
	var ok bool
	if err := r.tx.QueryRowContext(ctx, r.s.dialect.Rebind(q), table).Scan(&ok); err != nil {
		return false, r.s.unreachable(fmt.Sprintf("look for table %s", table), err)
	}
	return ok, nil
}

func scanPullRequest(r interface{ Scan(...any) error }) (manifest.PullRequestRow, error) {
	var p manifest.PullRequestRow
	if err := r.Scan(&p.ObjectiveID, &p.Number, &p.URL, &p.State, &p.Rounds, timeCol(&p.UpdatedAt),
		nullTimeCol(&p.MergedAt), nullTimeCol(&p.ClosedAt)); err != nil {
		return manifest.PullRequestRow{}, err
	}
	return p, nil
}

// pullRequests: every OPEN pull request, and those merged or closed since
// the lookback (recent_run_records' since); most recently updated first. A
// substrate without the table (a store older than pull requests) answers
// no rows, and the parameter manifest.ParamTableAbsent says why.
func (r *reader) pullRequests(ctx context.Context) (manifest.QueryResult, error) {
	since := r.since()
	params := map[string]string{
		"states":        fmt.Sprintf("%s,%s,%s", domain.PullRequestOpen, domain.PullRequestMerged, domain.PullRequestClosed),
		"settled_since": stamp(since),
	}
	ok, err := r.tableExists(ctx, pullRequestsTable)
	if err != nil {
		return manifest.QueryResult{}, err
	}
	if !ok {
		params[manifest.ParamTableAbsent] = "true"
		return result(r, manifest.QueryPullRequests, params, []manifest.PullRequestRow(nil))
	}
	rows, err := query(ctx, r, manifest.QueryPullRequests, `SELECT objective_id, number, url, state, rounds, updated_at, merged_at, closed_at
		FROM `+pullRequestsTable+` WHERE state = 'OPEN'
		OR (state = 'MERGED' AND COALESCE(merged_at, updated_at) >= $1)
		OR (state = 'CLOSED' AND COALESCE(closed_at, updated_at) >= $1)
		ORDER BY updated_at DESC, objective_id LIMIT $2`,
		scanPullRequest, r.s.dialect.EncodeTime(since), r.s.cfg.RowCap+1)
	if err != nil {
		return manifest.QueryResult{}, err
	}
	return result(r, manifest.QueryPullRequests, params, rows)
}
