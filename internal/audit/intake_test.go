package audit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// intakeEveryState takes an issue as an objective with one command
// carried out and one refused, and a document as a capture.
func intakeEveryState(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	it, o := storetest.IntakeObjective(12, "widgets-12")
	_, _, err := store.TakeIntake(ctx, s, it, o, nil, T0)
	require.NoError(t, err)
	for _, c := range []*domain.ForgeCommand{
		{CommentID: "1", Author: "ana", Trusted: true, TrustReason: "write access to acme/widgets", Result: "approve: emitted ev-1"},
		{CommentID: "2", Author: "mallory", TrustReason: "may not write to acme/widgets (no role in it)", Result: "refused: may not write"},
	} {
		c.Source, c.ObjectiveID, c.Thread, c.Command, c.CreatedAt = it.Source, "widgets-12", "issue #12", domain.CommandApprove, T0
		_, err := s.RecordForgeCommand(ctx, c)
		require.NoError(t, err)
	}
	capItem := &domain.IntakeItem{Source: "jira", ExternalID: "PROJ-7", Kind: domain.IntakeCapture, CaptureID: "cap-jira-7",
		CreatedAt: T0, UpdatedAt: T0}
	_, _, err = store.TakeIntake(ctx, s, capItem, nil, storetest.Capture("cap-jira-7", T0), T0)
	require.NoError(t, err)
}

func TestRun_IntakeOneObjectivePerIssueAndOnlyTrustedCommandsCarriedOut(t *testing.T) {
	t.Parallel()
	type want struct{ rule, resource string }
	tests := []struct {
		name    string
		corrupt func(t *testing.T, s *sqlstore.Store)
		want    []want
	}{
		{"an issue that became two objectives", func(t *testing.T, s *sqlstore.Store) {
			o := storetest.Objective("widgets-12-again")
			o.Provenance = "https://git.example.com/acme/widgets/issues/12"
			require.NoError(t, s.CreateObjective(context.Background(), o))
		}, []want{{audit.RuleIntakeOnePerItem, "intake item " + storetest.IssueSource + " 12"}}},
		{"an item whose objective is gone", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE intake_items SET objective_id = 'ghost' WHERE external_id = '12'`)
		}, []want{{audit.RuleIntakeOnePerItem, "intake item " + storetest.IssueSource + " 12"}}},
		{"a stranger's command carried out", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE forge_commands SET result = 'approve: emitted ev-2' WHERE comment_id = '2'`)
		}, []want{{audit.RuleForgeCommandAuthorized, "command comment " + storetest.IssueSource + " 2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
				intakeEveryState(t, s)
				rep := audited(t, s)
				require.Empty(t, rep.Violations, "the starting point is consistent")
				require.Equal(t, 2, rep.Checked[audit.RuleIntakeOnePerItem])
				require.Equal(t, 2, rep.Checked[audit.RuleForgeCommandAuthorized])
				tt.corrupt(t, s)
				rep = audited(t, s)
				for _, w := range tt.want {
					requireReported(t, rep, w.rule, w.resource)
				}
				require.Len(t, rep.Violations, len(tt.want), "%+v", rep.Violations)
			})
		})
	}
}
