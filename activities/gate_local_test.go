package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
)

// The local gate writes the same verdict the activity does, holding the
// workorder's claim for its one transaction; a second call returns it.
func TestGate_LocalWritesTheVerdictAtOneCommit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		wo := tb.runWith(t, okResult)
		ran := tb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID) // by Run
		in := activities.GateInput{WorkOrderID: wo.WorkOrderID, Local: true}
		res, err := tb.steps.Gate(ctx, in)
		require.NoError(t, err)
		require.False(t, res.NeedsRepository)
		require.Equal(t, domain.GatePass, res.GateResult)
		require.Equal(t, domain.StatusDone, res.Status)
		rr, err := tb.store.GetRunRecord(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, domain.GatePass, rr.GateResult)
		require.Equal(t, []*domain.PauseState{&res.Pause}, tb.pausesOf(t, "obj-1", wo.WorkOrderID))
		c := tb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)
		require.Equal(t, ran.ClaimVersion+2, c.ClaimVersion, "taken and given back at one commit")
		tb.requireGateIdempotent(t, in, res)
	})
}

// A PASS the workorder's diazotroph would check itself is handed back by
// the local gate with nothing written and no claim taken; the activity
// then gates it with those checks.
func TestGate_LocalHandsBackAWorkOrderItsDiazotrophChecks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		ctx := context.Background()
		tb.steps.Diazotrophs = diazotroph.NewRegistry(unpushedChecker{tb.fake})
		wo := tb.runWith(t, okResult)
		before := tb.objective(t, "obj-1")
		claim, err := tb.store.GetClaim(ctx, domain.ResourceWorkOrder, wo.WorkOrderID)
		require.NoError(t, err)

		res, err := tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID, Local: true})
		require.NoError(t, err)
		require.Equal(t, activities.GateResult{NeedsRepository: true}, res)
		_, err = tb.store.GetRunRecord(ctx, wo.WorkOrderID)
		require.ErrorIs(t, err, domain.ErrNotFound)
		require.Empty(t, tb.pauses(t, "obj-1"))
		require.Equal(t, before, tb.objective(t, "obj-1"))
		after, err := tb.store.GetClaim(ctx, domain.ResourceWorkOrder, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, claim, after, "the workorder's claim is untouched")

		res, err = tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.GatePass, res.GateResult)
		require.Contains(t, res.GateReason, "gate commands passed", "the diazotroph's checks ran")
	})
}
