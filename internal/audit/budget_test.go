package audit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store/sqlstore"
)

// A FAIL once the objective's budget is spent is handed back as
// BUDGET_SPENT: that is its terminal pause state, and it counts as a gate's.
func TestAudit_FailHandedBackAsBudgetSpentIsClean(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		wo := schedule(t, s, "obj-1")
		execute(t, s, wo)
		_, err := s.UpsertRunRecord(context.Background(), &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: "obj-1",
			GateResult: domain.GateFail, GateReason: "checked", CreatedAt: T0, UpdatedAt: T0})
		require.NoError(t, err)
		move(t, s, "obj-1", domain.StatusInProgress, domain.StatusTodo, T0)
		pause(t, s, "obj-1", wo.WorkOrderID, domain.PauseBudgetSpent)
		require.Empty(t, audited(t, s).Violations)

		// Without its run record, the BUDGET_SPENT pause is a gate's
		// pause naming a workorder nobody gated.
		wo2 := schedule(t, s, "obj-2")
		execute(t, s, wo2)
		pause(t, s, "obj-2", wo2.WorkOrderID, domain.PauseBudgetSpent)
		requireReported(t, audited(t, s), audit.RuleRunRecordPerGated, "workorder "+wo2.WorkOrderID)
	})
}
