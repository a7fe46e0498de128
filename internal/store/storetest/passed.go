package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
)

// PassedOn writes objective id, on repository repo, through a PASS of
// commit SHA1 at at, to DONE with its RUN_COMPLETE pause.
func PassedOn(t testing.TB, s store.Querier, id, repo string, at time.Time) *domain.WorkOrder {
	t.Helper()
	ctx := context.Background()
	o := Objective(id)
	o.Repository, o.BaseBranch = repo, "main"
	wo := ScheduledObjective(t, s, o, at)
	for _, to := range []domain.Status{domain.StatusTodo, domain.StatusInProgress} {
		_, err := s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: id, To: to, Now: at})
		require.NoError(t, err)
	}
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	_, _, err = s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Fix",
		Content: "diff --git a/x b/x\n", RunnerStatus: domain.RunnerOK, CreatedAt: at})
	require.NoError(t, err)
	_, _, err = s.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: wo.WorkOrderID, Now: at})
	require.NoError(t, err)
	_, err = s.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: id,
		GateResult: domain.GatePass, GateReason: "checked", CommitSHA: SHA1, CreatedAt: at, UpdatedAt: at})
	require.NoError(t, err)
	done, err := s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: id, To: domain.StatusDone, Now: at})
	require.NoError(t, err)
	ps := pause.RunComplete(id, done.StatusSeq, wo.WorkOrderID, wo.BranchName, nil, at)
	require.NoError(t, s.CreatePauseState(ctx, &ps))
	return wo
}
