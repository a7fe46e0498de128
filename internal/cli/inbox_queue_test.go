package cli

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"github.com/azolla/azolla/internal/store/storetest"
)

// The inbox names the objectives whose runs wait for a slot under a
// limit, with how many are ahead, read from the store: the command line
// need not be given the workers' limits.
func TestInbox_NamesTheRunsQueuedForASlot(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	wo := storetest.Scheduled(t, s, "queued-obj")
	_, _, err := s.CreateWorkOrder(t.Context(), wo)
	require.NoError(t, err)
	sl := slots.New(claim.NewBridge(s), s, slots.Limits{Deployment: 1}, time.Minute, nil)
	held, ok, err := sl.Try(t.Context(), slots.Request{Holder: "wo-other", Urgency: "NORMAL"})
	require.NoError(t, err)
	require.True(t, ok)
	defer held.Release(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = sl.Wait(ctx, slots.Request{Holder: wo.WorkOrderID, Urgency: "NORMAL", Since: time.Now()}, nil)
	}()
	require.Eventually(t, func() bool {
		_, queued, err := sl.Position(t.Context(), wo.WorkOrderID)
		return err == nil && queued
	}, 10*time.Second, 10*time.Millisecond)

	res := azolla(t, env, "inbox")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "queued for a run slot under max_concurrent_runs: 1 run(s)\n")
	require.Contains(t, res.stdout, "objective queued-obj: queued for a run slot (0 ahead, the deployment's limit)\n")
}
