package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// openPullRequest records pull request number for wo's objective, after
// its PASS.
func openPullRequest(t *testing.T, s store.Querier, wo *domain.WorkOrder, number int) *domain.PullRequest {
	t.Helper()
	pr, created, err := s.RecordPullRequest(context.Background(), storetest.PullRequestParams(wo, number, T0.Add(4*time.Minute)))
	require.NoError(t, err)
	require.True(t, created)
	return pr
}

// pullRequestsEveryState leaves a pull request in each state, each of an
// objective run to a PASS: one open in its second round, one merged, one
// closed without merge.
func pullRequestsEveryState(t *testing.T, s store.Querier) {
	t.Helper()
	ctx := context.Background()
	openPullRequest(t, s, passed(t, s, "obj-pr-open"), 1)
	_, err := s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-pr-open",
		To: "r1", ChecksSHA: storetest.SHA1, NewRound: true, Now: T0.Add(5 * time.Minute)})
	require.NoError(t, err)
	for i, state := range []domain.PullRequestState{domain.PullRequestMerged, domain.PullRequestClosed} {
		wo := passed(t, s, "obj-pr-"+string(state))
		openPullRequest(t, s, wo, 2+i)
		_, _, err := s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: wo.ObjectiveID,
			State: state, Now: T0.Add(6 * time.Minute)})
		require.NoError(t, err)
	}
}

func TestRun_PullRequestsInEveryStateAreClean(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		pullRequestsEveryState(t, s)
		rep := audited(t, s)
		require.Empty(t, rep.Violations)
		require.Equal(t, 3, rep.Checked[audit.RulePullRequestSchema])
		require.Equal(t, 3, rep.Checked[audit.RulePullRequestOfPassedWorkOrder])
	})
}

// Each case starts from objective obj-1 run to a PASS (workorder wo-obj-1)
// with its pull request #1, and breaks one guarantee, through the store
// where the store allows it and with raw SQL where it would refuse.
func TestRun_ReportsEachBrokenPullRequestGuarantee(t *testing.T) {
	t.Parallel()
	type want struct{ rule, resource string }
	tests := []struct {
		name    string
		corrupt func(t *testing.T, s *sqlstore.Store)
		want    []want
	}{
		// pull-request-schema
		{"MERGED without merged_at", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE pull_requests SET state = 'MERGED' WHERE objective_id = 'obj-1'`)
		}, []want{{audit.RulePullRequestSchema, "pull_request obj-1"}}},
		{"CLOSED without closed_at", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE pull_requests SET state = 'CLOSED' WHERE objective_id = 'obj-1'`)
		}, []want{{audit.RulePullRequestSchema, "pull_request obj-1"}}},
		{"head on another objective's branch", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE pull_requests SET head_branch = 'azolla/obj-2' WHERE objective_id = 'obj-1'`)
		}, []want{{audit.RulePullRequestSchema, "pull_request obj-1"}}},
		{"a URL that is no URL", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE pull_requests SET url = 'javascript:alert(1)' WHERE objective_id = 'obj-1'`)
		}, []want{{audit.RulePullRequestSchema, "pull_request obj-1"}}},

		// pull-request-of-passed-workorder
		{"objective that does not exist", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `INSERT INTO pull_requests (objective_id, work_order_id, forge, repository, number, url, head_branch,
				base_branch, head_sha, state, adopted, review_cursor, rounds, created_at, updated_at)
				SELECT 'obj-ghost', work_order_id, forge, repository, 99, url, 'azolla/obj-ghost', base_branch, head_sha,
				state, adopted, review_cursor, rounds, created_at, updated_at FROM pull_requests WHERE objective_id = 'obj-1'`)
		}, []want{ // no objective, and a workorder of another
			{audit.RulePullRequestOfPassedWorkOrder, "pull_request obj-ghost"},
			{audit.RulePullRequestOfPassedWorkOrder, "pull_request obj-ghost"},
		}},
		{"workorder that does not exist", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE pull_requests SET work_order_id = 'wo-ghost' WHERE objective_id = 'obj-1'`)
		}, []want{{audit.RulePullRequestOfPassedWorkOrder, "pull_request obj-1"}}},
		{"workorder of another objective", func(t *testing.T, s *sqlstore.Store) {
			passed(t, s, "obj-2")
			raw(t, s, `UPDATE pull_requests SET work_order_id = 'wo-obj-2' WHERE objective_id = 'obj-1'`)
		}, []want{{audit.RulePullRequestOfPassedWorkOrder, "pull_request obj-1"}}},
		{"workorder that failed its gate", func(t *testing.T, s *sqlstore.Store) {
			wo := schedule(t, s, "obj-2")
			execute(t, s, wo)
			gate(t, s, wo, domain.GateFail)
			openPullRequest(t, s, wo, 2)
		}, []want{{audit.RulePullRequestOfPassedWorkOrder, "pull_request obj-2"}}},
		{"a head azolla did not push", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE pull_requests SET head_sha = '`+storetest.SHA2+`' WHERE objective_id = 'obj-1'`)
		}, []want{{audit.RulePullRequestOfPassedWorkOrder, "pull_request obj-1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
				openPullRequest(t, s, passed(t, s, "obj-1"), 1)
				require.Empty(t, audited(t, s).Violations, "the starting point is consistent")
				tt.corrupt(t, s)
				rep := audited(t, s)
				for _, w := range tt.want {
					requireReported(t, rep, w.rule, w.resource)
				}
				require.Len(t, rep.Violations, len(tt.want), "%+v", rep.Violations)
			})
		})
	}
}

// judge records feedback on obj-1's pull request #1: a stranger's review
// not taken, and a writer's taken by the round of event ev.
func judge(t *testing.T, s store.Querier, ev string) {
	t.Helper()
	judgeOn(t, s, "obj-1", ev)
}

// judgeOn records feedback on pull request #1 of objective id.
func judgeOn(t *testing.T, s store.Querier, id, ev string) {
	t.Helper()
	taken := &domain.PullRequestFeedback{ObjectiveID: id, Number: 1, FeedbackID: "review-2",
		Kind: domain.FeedbackReview, Author: "writer", State: "changes_requested", Summary: "Rename it.",
		Trusted: true, TrustReason: "write access to azolla/azolla", TakenBy: ev, CreatedAt: T0.Add(5 * time.Minute)}
	_, err := s.RecordPullRequestFeedback(context.Background(), []*domain.PullRequestFeedback{
		storetest.NotTakenFeedback(id, 1, "1", T0.Add(5*time.Minute)), taken})
	require.NoError(t, err)
}

// A round started by review feedback names only trusted authors: verify
// reports a taken review whose round is not its objective's TICKET_READY,
// and a record that is no valid pull_request_feedback; the database itself
// refuses a taken review from an untrusted author.
func TestRun_FeedbackTakenFromTrusted(t *testing.T) {
	t.Parallel()
	type want struct{ rule, resource string }
	const res = "pull_request_feedback obj-1 #1 review-2"
	tests := []struct {
		name    string
		corrupt func(t *testing.T, s *sqlstore.Store)
		want    []want
	}{
		{"taken by an event that does not exist", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE pull_request_feedback SET taken_by = 'ev-ghost' WHERE feedback_id = 'review-2'`)
		}, []want{{audit.RuleFeedbackTakenFromTrusted, res}}},
		{"taken by another objective's round", func(t *testing.T, s *sqlstore.Store) {
			passed(t, s, "obj-2")
			raw(t, s, `UPDATE pull_request_feedback SET taken_by = 'ev-obj-2' WHERE feedback_id = 'review-2'`)
		}, []want{{audit.RuleFeedbackTakenFromTrusted, res}}},
		{"taken without saying why its author is trusted", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE pull_request_feedback SET trust_reason = '' WHERE feedback_id = 'review-2'`)
		}, []want{{audit.RuleFeedbackTakenFromTrusted, res}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
				openPullRequest(t, s, passed(t, s, "obj-1"), 1)
				judge(t, s, "ev-obj-1")
				rep := audited(t, s)
				require.Empty(t, rep.Violations, "the starting point is consistent")
				require.Equal(t, 2, rep.Checked[audit.RuleFeedbackTakenFromTrusted])
				tt.corrupt(t, s)
				rep = audited(t, s)
				for _, w := range tt.want {
					requireReported(t, rep, w.rule, w.resource)
				}
				require.Len(t, rep.Violations, len(tt.want), "%+v", rep.Violations)
			})
		})
	}

	t.Run("the database refuses a taken review from an untrusted author", func(t *testing.T) {
		t.Parallel()
		forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
			openPullRequest(t, s, passed(t, s, "obj-1"), 1)
			judge(t, s, "ev-obj-1")
			_, err := s.DB().ExecContext(context.Background(),
				`UPDATE pull_request_feedback SET taken_by = 'ev-obj-1' WHERE feedback_id = 'review-1'`)
			require.Error(t, err, "the CHECK holds whatever writes the row")
		})
	})
}
