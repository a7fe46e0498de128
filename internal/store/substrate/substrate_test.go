package substrate_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/postgres"
	"github.com/azolla/azolla/internal/store/sqlite"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/internal/store/substrate"
)

var t0 = storetest.T0

// backend is a migrated azolla store and the substrate config reading it.
type backend struct {
	name string
	open func(t *testing.T) (*sqlstore.Store, substrate.Config)
}

func backends() []backend {
	return []backend{{"sqlite", openSQLite}, {"postgres", openPostgres}}
}

func openSQLite(t *testing.T) (*sqlstore.Store, substrate.Config) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "other.db")
	s, err := sqlite.Open(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = s.Migrate(context.Background())
	require.NoError(t, err)
	return s, substrate.Config{Name: "other", Driver: substrate.DriverSQLite, Path: path}
}

// openPostgres migrates a store into a schema of its own, dropped at
// cleanup, and points the substrate at that schema.
func openPostgres(t *testing.T) (*sqlstore.Store, substrate.Config) {
	t.Helper()
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	schema := fmt.Sprintf("azolla_substrate_%d", time.Now().UnixNano())
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := postgres.Open(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = s.Migrate(ctx)
	require.NoError(t, err)
	return s, substrate.Config{Name: "other", Driver: substrate.DriverPostgres, DSN: u.String()}
}

func forEach(t *testing.T, test func(t *testing.T, s *sqlstore.Store, cfg substrate.Config)) {
	t.Parallel()
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, cfg := be.open(t)
			test(t, s, cfg)
		})
	}
}

func open(t *testing.T, cfg substrate.Config) *substrate.Substrate {
	t.Helper()
	sub, err := substrate.Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	return sub
}

func objective(t *testing.T, s store.Store, id string, status domain.Status, urgency string, created time.Time, edit func(o *domain.Objective)) {
	t.Helper()
	o := storetest.Objective(id)
	o.Status, o.Urgency, o.CreatedAt, o.UpdatedAt = status, urgency, created, created
	if edit != nil {
		edit(o)
	}
	require.NoError(t, s.CreateObjective(context.Background(), o))
}

// seed writes a small substrate: objectives of every status, an overdue
// one, a pause, a run record, an open pull request and the bundle of a run
// that cost.
func seed(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	objective(t, s, "o-new", domain.StatusNew, "NORMAL", t0, nil)
	objective(t, s, "o-late", domain.StatusTodo, "CRITICAL", t0.Add(-5*time.Hour), nil)
	due := t0.Add(-time.Minute)
	objective(t, s, "o-due", domain.StatusInProgress, "LOW", t0.Add(-time.Hour), func(o *domain.Objective) { o.DueAt = &due })
	objective(t, s, "o-blocked", domain.StatusBlocked, "HIGH", t0.Add(-2*time.Hour), func(o *domain.Objective) {
		o.Blockers = []string{"waiting on the DBA"}
	})
	objective(t, s, "o-done", domain.StatusDone, "CRITICAL", t0.Add(-10*time.Hour), nil)
	require.NoError(t, s.CreatePauseState(ctx, &domain.PauseState{PauseStateID: "pause-o-new", ObjectiveID: "o-new",
		Reason: domain.PauseRejected, PrioritizedActions: []string{"Approve or reject o-new"}, CreatedAt: t0}))
	require.NoError(t, s.CreatePauseState(ctx, &domain.PauseState{PauseStateID: "pause-o-done", ObjectiveID: "o-done",
		Reason: domain.PauseRunComplete, PrioritizedActions: []string{"Confirm"}, CreatedAt: t0}))
	wo := storetest.Scheduled(t, s, "o-run")
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	_, err = s.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: "o-run",
		GateResult: domain.GateFail, GateReason: "tests failed", CreatedAt: t0, UpdatedAt: t0})
	require.NoError(t, err)
	_, _, err = s.RecordPullRequest(ctx, storetest.PullRequestParams(wo, 7, t0))
	require.NoError(t, err)
	_, _, err = s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Run", Content: "x",
		Metadata:     domain.BundleMetadata{Generator: "command", RunReport: &domain.RunReport{Model: "m", CostUSD: usd(0.5)}},
		RunnerStatus: domain.RunnerOK, CreatedAt: t0})
	require.NoError(t, err)
}

// pullRequest records a pull request numbered number for a new objective
// id at recorded, then moves it to state at settled (OPEN: no move).
func pullRequest(t *testing.T, s store.Store, id string, number int, recorded time.Time, state domain.PullRequestState, settled time.Time) {
	t.Helper()
	ctx := context.Background()
	wo := storetest.Scheduled(t, s, id)
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	_, _, err = s.RecordPullRequest(ctx, storetest.PullRequestParams(wo, number, recorded))
	require.NoError(t, err)
	if state != domain.PullRequestOpen {
		_, _, err = s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: id, State: state, Now: settled})
		require.NoError(t, err)
	}
}

func prID(p manifest.PullRequestRow) string { return p.ObjectiveID }

func byName(qs []manifest.QueryResult) map[string]manifest.QueryResult {
	m := map[string]manifest.QueryResult{}
	for _, q := range qs {
		m[q.Name] = q
	}
	return m
}

func ids[T any](t *testing.T, q manifest.QueryResult, id func(T) string) []string {
	t.Helper()
	out := []string{}
	for _, r := range q.Rows {
		var v T
		require.NoError(t, json.Unmarshal(r, &v))
		out = append(out, id(v))
	}
	return out
}

func objID(o manifest.ObjectiveRow) string { return o.ObjectiveID }

func TestManifestQueries_ReadTheSubstrateStably(t *testing.T) {
	forEach(t, func(t *testing.T, s *sqlstore.Store, cfg substrate.Config) {
		seed(t, s)
		sub := open(t, cfg)
		now := t0.Add(time.Hour)
		first, err := sub.ManifestQueries(t.Context(), "ticket", now)
		require.NoError(t, err)
		require.Len(t, first, 7)
		for i, name := range []string{manifest.QueryObjectivesByStatus, manifest.QueryBlockedObjectives,
			manifest.QueryOverdueObjectives, manifest.QueryHumanPauseStates, manifest.QueryRecentRunRecords,
			manifest.QueryPullRequests, manifest.QueryRunSpend} {
			require.Equal(t, name, first[i].Name)
			require.Equal(t, 1, first[i].Version)
			require.Equal(t, "other", first[i].Substrate)
			require.Equal(t, "500", first[i].Parameters["limit"])
			require.Empty(t, first[i].Parameters["truncated"])
			require.Empty(t, first[i].Parameters[manifest.ParamTableAbsent])
		}
		q := byName(first)
		require.ElementsMatch(t, []string{"o-new", "o-late", "o-due", "o-blocked", "o-done", "o-run"},
			ids(t, q[manifest.QueryObjectivesByStatus], objID))
		require.Equal(t, []string{"o-blocked"}, ids(t, q[manifest.QueryBlockedObjectives], objID))
		blocked := ids(t, q[manifest.QueryBlockedObjectives], func(o manifest.ObjectiveRow) string { return o.Blockers[0] })
		require.Equal(t, []string{"waiting on the DBA"}, blocked)
		// o-late is CRITICAL, due 4h from created_at (t0-1h); o-due's due_at is t0-1m.
		require.Equal(t, []string{"o-late", "o-due"}, ids(t, q[manifest.QueryOverdueObjectives], objID))
		deadlines := ids(t, q[manifest.QueryOverdueObjectives], func(o manifest.ObjectiveRow) string { return o.Deadline.Format(time.RFC3339) })
		require.Equal(t, []string{t0.Add(-time.Hour).Format(time.RFC3339), t0.Add(-time.Minute).Format(time.RFC3339)}, deadlines)
		require.Equal(t, []string{"pause-o-new"}, ids(t, q[manifest.QueryHumanPauseStates], func(p manifest.PauseRow) string { return p.PauseStateID }))
		require.Equal(t, []string{"wo-o-run"}, ids(t, q[manifest.QueryRecentRunRecords], func(r manifest.RunRow) string { return r.WorkOrderID }))
		var pr manifest.PullRequestRow
		require.Len(t, q[manifest.QueryPullRequests].Rows, 1)
		require.NoError(t, json.Unmarshal(q[manifest.QueryPullRequests].Rows[0], &pr))
		require.Equal(t, manifest.PullRequestRow{ObjectiveID: "o-run", Number: 7, URL: "https://git.example.org/azolla/azolla/pulls/7",
			State: "OPEN", Rounds: 1, UpdatedAt: t0}, pr)

		// The report reads them.
		rep, err := manifest.Build(manifest.Input{Format: manifest.InputFormat, Now: now, Queries: first})
		require.NoError(t, err)
		require.Contains(t, rep.Markdown, "- objective `o-run`: https://git.example.org/azolla/azolla/pulls/7 (round 1)")
		require.Contains(t, rep.Markdown, "- Total: $0.50 over 1 run; no tokens reported\n")
		require.Empty(t, rep.Notes)

		second, err := sub.ManifestQueries(t.Context(), "ticket", now)
		require.NoError(t, err)
		require.Equal(t, first, second)
		for i := range first {
			h1, err := first[i].ContentHash()
			require.NoError(t, err)
			h2, err := second[i].ContentHash()
			require.NoError(t, err)
			require.Equal(t, h1, h2)
		}
	})
}

func TestManifestQueries_CapRowsAndSayTruncated(t *testing.T) {
	forEach(t, func(t *testing.T, s *sqlstore.Store, cfg substrate.Config) {
		for i := range 5 {
			objective(t, s, "o-"+strconv.Itoa(i), domain.StatusBlocked, "CRITICAL", t0.Add(time.Duration(i)*time.Second), nil)
		}
		cfg.RowCap = 3
		qs, err := open(t, cfg).ManifestQueries(t.Context(), "", t0.Add(48*time.Hour))
		require.NoError(t, err)
		q := byName(qs)
		for _, name := range []string{manifest.QueryObjectivesByStatus, manifest.QueryBlockedObjectives, manifest.QueryOverdueObjectives} {
			require.Len(t, q[name].Rows, 3, name)
			require.Equal(t, "true", q[name].Parameters["truncated"], name)
			require.Equal(t, "3", q[name].Parameters["limit"], name)
		}
		require.Equal(t, []string{"o-0", "o-1", "o-2"}, ids(t, q[manifest.QueryOverdueObjectives], objID))
		require.Empty(t, q[manifest.QueryRecentRunRecords].Rows)
		require.Empty(t, q[manifest.QueryRecentRunRecords].Parameters["truncated"])
	})
}

// Every OPEN pull request, however old; a merged or closed one only when it
// was settled since the lookback; most recently updated first, capped.
func TestManifestQueries_PullRequestsOpenAndSettledSinceTheLookback(t *testing.T) {
	forEach(t, func(t *testing.T, s *sqlstore.Store, cfg substrate.Config) {
		now := t0.Add(40 * 24 * time.Hour) // the lookback (30 days) starts at t0+10d
		pullRequest(t, s, "o-open-old", 1, t0, domain.PullRequestOpen, time.Time{})
		pullRequest(t, s, "o-open-new", 2, t0.Add(20*24*time.Hour), domain.PullRequestOpen, time.Time{})
		pullRequest(t, s, "o-merged", 3, t0, domain.PullRequestMerged, t0.Add(15*24*time.Hour))
		pullRequest(t, s, "o-merged-old", 4, t0, domain.PullRequestMerged, t0.Add(9*24*time.Hour))
		pullRequest(t, s, "o-closed", 5, t0, domain.PullRequestClosed, t0.Add(30*24*time.Hour))
		pullRequest(t, s, "o-closed-old", 6, t0, domain.PullRequestClosed, t0.Add(24*time.Hour))

		q := pullRequestsQuery(t, cfg, now)
		require.Equal(t, []string{"o-closed", "o-open-new", "o-merged", "o-open-old"}, ids(t, q, prID))
		require.Equal(t, t0.Add(10*24*time.Hour).Format(time.RFC3339Nano), q.Parameters["settled_since"])
		require.Equal(t, "OPEN,MERGED,CLOSED", q.Parameters["states"])
		merged := ids(t, q, func(p manifest.PullRequestRow) string {
			if p.MergedAt == nil {
				return "-"
			}
			return p.MergedAt.Format(time.RFC3339)
		})
		require.Equal(t, []string{"-", "-", t0.Add(15 * 24 * time.Hour).Format(time.RFC3339), "-"}, merged)

		cfg.RowCap = 2
		q = pullRequestsQuery(t, cfg, now)
		require.Equal(t, []string{"o-closed", "o-open-new"}, ids(t, q, prID))
		require.Equal(t, "true", q.Parameters["truncated"])
	})
}

// A store older than pull requests (migration 0008) still gives a
// manifest: the query answers no rows and says the table is absent.
func TestManifestQueries_ASubstrateWithoutPullRequestsAnswersEmpty(t *testing.T) {
	forEach(t, func(t *testing.T, s *sqlstore.Store, cfg substrate.Config) {
		seed(t, s)
		_, err := s.DB().ExecContext(t.Context(), "DROP TABLE pull_requests")
		require.NoError(t, err)
		now := t0.Add(time.Hour)
		qs, err := open(t, cfg).ManifestQueries(t.Context(), "", now)
		require.NoError(t, err)
		require.Len(t, qs, 7)
		q := byName(qs)[manifest.QueryPullRequests]
		require.Empty(t, q.Rows)
		require.NotNil(t, q.Rows, "an empty array, as the other queries")
		require.Equal(t, "true", q.Parameters[manifest.ParamTableAbsent])
		// The other queries are whole.
		require.Equal(t, []string{"wo-o-run"}, ids(t, byName(qs)[manifest.QueryRecentRunRecords], func(r manifest.RunRow) string { return r.WorkOrderID }))

		rep, err := manifest.Build(manifest.Input{Format: manifest.InputFormat, Now: now, Queries: qs})
		require.NoError(t, err)
		require.Equal(t, []string{"query pull_requests: the substrate has no table for it (its store is older): its sections are empty"}, rep.Notes)
		require.Contains(t, rep.Markdown, "## Pull requests waiting for review (0)\n\n_None._\n")
	})
}

func pullRequestsQuery(t *testing.T, cfg substrate.Config, now time.Time) manifest.QueryResult {
	t.Helper()
	qs, err := open(t, cfg).ManifestQueries(t.Context(), "", now)
	require.NoError(t, err)
	return byName(qs)[manifest.QueryPullRequests]
}

func TestManifestQueries_OverdueUsesTheConfiguredSLA(t *testing.T) {
	forEach(t, func(t *testing.T, s *sqlstore.Store, cfg substrate.Config) {
		objective(t, s, "o-high", domain.StatusTodo, "HIGH", t0, nil)
		now := t0.Add(2 * time.Hour)
		qs, err := open(t, cfg).ManifestQueries(t.Context(), "", now)
		require.NoError(t, err)
		require.Empty(t, byName(qs)[manifest.QueryOverdueObjectives].Rows, "HIGH is 24h by default")
		cfg.SLA = map[string]time.Duration{"HIGH": time.Hour}
		qs, err = open(t, cfg).ManifestQueries(t.Context(), "", now)
		require.NoError(t, err)
		require.Equal(t, []string{"o-high"}, ids(t, byName(qs)[manifest.QueryOverdueObjectives], objID))
	})
}

func TestManifestQueries_UnreachableSubstrate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for name, cfg := range map[string]substrate.Config{
		"missing sqlite file": {Name: "gone", Driver: substrate.DriverSQLite, Path: filepath.Join(t.TempDir(), "nope.db")},
		"postgres down":       {Name: "down", Driver: substrate.DriverPostgres, DSN: "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2"},
	} {
		sub, err := substrate.Open(ctx, cfg)
		require.NoError(t, err, name)
		_, err = sub.ManifestQueries(ctx, "", t0)
		require.ErrorIs(t, err, substrate.ErrUnreachable, name)
		require.ErrorIs(t, sub.Ping(ctx), substrate.ErrUnreachable, name)
		_ = sub.Close()
	}
	// A database without azolla's tables.
	empty := filepath.Join(t.TempDir(), "empty.db")
	db, err := sql.Open("sqlite", empty)
	require.NoError(t, err)
	_, err = db.Exec("CREATE TABLE other (x INTEGER)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	sub := open(t, substrate.Config{Name: "empty", Driver: substrate.DriverSQLite, Path: empty})
	_, err = sub.ManifestQueries(ctx, "", t0)
	require.ErrorIs(t, err, substrate.ErrUnreachable)
	require.ErrorContains(t, err, "objectives")
}

func TestOpen_RefusesABadConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []substrate.Config{
		{Driver: substrate.DriverSQLite, Path: "x.db"},
		{Name: "x", Driver: "mysql"},
		{Name: "x", Driver: substrate.DriverSQLite},
		{Name: "x", Driver: substrate.DriverPostgres},
		{Name: "x", Driver: substrate.DriverPostgres, DSN: "postgres://%zz"},
	} {
		_, err := substrate.Open(t.Context(), cfg)
		require.Error(t, err, "%+v", cfg)
	}
}

func TestReadOnly_AWriteIsRefused(t *testing.T) {
	forEach(t, func(t *testing.T, s *sqlstore.Store, cfg substrate.Config) {
		seed(t, s)
		sub := open(t, cfg)
		err := substrate.WriteInReadOnlyTx(t.Context(), sub, `UPDATE objectives SET title = 'changed' WHERE objective_id = 'o-new'`)
		require.Error(t, err, "a write inside the read-only transaction is refused")
		o, err := s.GetObjective(t.Context(), "o-new")
		require.NoError(t, err)
		require.Equal(t, "Fix o-new", o.Title)
	})
}
