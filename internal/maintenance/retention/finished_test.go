package retention_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/maintenance/retention"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

func TestFinishedPruner_DeletesFinishedStepsClaimsOnceRetentionHasPassed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewSQLite(t)
	wo := storetest.PassedOn(t, s, "obj-1", "", storetest.T0)
	c, ok, err := s.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: domain.ResourceWorkOrder,
		ResourceID: wo.WorkOrderID, OwnerID: "w:1", TTL: time.Minute, Now: storetest.T0})
	require.NoError(t, err)
	require.True(t, ok)
	_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: c.ResourceType, ResourceID: c.ResourceID,
		OwnerID: c.OwnerID, ClaimVersion: c.ClaimVersion, Now: storetest.T0})
	require.NoError(t, err)

	now := storetest.T0.Add(30 * time.Minute)
	p := &retention.FinishedPruner{Store: s, Retention: time.Hour, Now: func() time.Time { return now }}
	counts, err := p.RunOnce(ctx)
	require.NoError(t, err)
	require.Zero(t, counts.Total(), "within retention")

	now = storetest.T0.Add(2 * time.Hour)
	counts, err = p.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, store.PruneFinishedCounts{Claims: 1}, counts)
	_, err = s.GetClaim(ctx, domain.ResourceWorkOrder, wo.WorkOrderID)
	require.ErrorIs(t, err, domain.ErrNotFound)

	p.Retention = 0
	_, err = p.RunOnce(ctx)
	require.ErrorContains(t, err, "retention must be positive")
}
