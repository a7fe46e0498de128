package activities_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	// The test drives Run from a workflow, as the lifecycle does, so that the
	// activity sees a real heartbeat timeout; activities code itself never
	// imports the workflow SDK.
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
)

// heartbeats records every activity heartbeat's details; Run's are the
// claim_version it holds.
type heartbeats struct {
	interceptor.WorkerInterceptorBase
	mu       sync.Mutex
	versions []int64
}

func (h *heartbeats) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &heartbeatInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, h: h}
}

func (h *heartbeats) Versions() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int64(nil), h.versions...)
}

type heartbeatInbound struct {
	interceptor.ActivityInboundInterceptorBase
	h *heartbeats
}

func (i *heartbeatInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	return i.Next.Init(&heartbeatOutbound{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: outbound}, h: i.h})
}

type heartbeatOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
	h *heartbeats
}

func (o *heartbeatOutbound) RecordHeartbeat(ctx context.Context, details ...any) {
	o.h.mu.Lock()
	for _, d := range details {
		if v, ok := d.(int64); ok {
			o.h.versions = append(o.h.versions, v)
		}
	}
	o.h.mu.Unlock()
	o.Next.RecordHeartbeat(ctx, details...)
}

// holding is an exec that runs for d and, at its start, reports the claim
// the runner holds on the workorder.
func holding(tb *testBundle, d time.Duration, seen chan<- domain.ClaimRecord) func(context.Context, diazotroph.Request) (diazotroph.Result, error) {
	return func(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
		c, err := tb.store.GetClaim(ctx, domain.ResourceWorkOrder, req.WorkOrder.WorkOrderID)
		if err != nil {
			return diazotroph.Result{}, err
		}
		seen <- *c
		select {
		case <-ctx.Done():
			return diazotroph.Result{}, context.Cause(ctx)
		case <-time.After(d):
		}
		return okResult(ctx, req)
	}
}

// TestRun_InActivityHeartbeatsEachRenewal runs Run in an activity context
// without a heartbeat timeout: the lease is Steps.LeaseTTL, the owner
// names the attempt, and every renewal, and only a renewal, is reported as a
// heartbeat.
func TestRun_InActivityHeartbeatsEachRenewal(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		wo := tb.scheduled(t, "obj-1")
		tb.steps.LeaseTTL = 600 * time.Millisecond // renewed every 200ms
		seen := make(chan domain.ClaimRecord, 1)
		tb.fake.exec = holding(tb, 1300*time.Millisecond, seen)
		hb := &heartbeats{}
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.SetTestTimeout(30 * time.Second)
		env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{hb}})
		tb.register(env)

		val, err := env.ExecuteActivity(tb.steps.Run, activities.RunInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		var res activities.RunResult
		require.NoError(t, val.Get(&res))
		require.Equal(t, activities.RunResult{WorkOrderID: wo.WorkOrderID, RunnerStatus: domain.RunnerOK}, res)

		held := <-seen
		require.Equal(t, 600*time.Millisecond, held.LeaseExpiresAt.Sub(held.HeartbeatAt),
			"without a heartbeat timeout the lease is LeaseTTL")
		require.True(t, strings.HasPrefix(held.OwnerID, "tester:"), held.OwnerID)
		require.True(t, strings.HasSuffix(held.OwnerID, "/1"), "the owner names attempt 1: %s", held.OwnerID)

		// Acquisition is version 1 and sends no heartbeat; each renewal bumps
		// the version and reports it.
		versions := hb.Versions()
		require.GreaterOrEqual(t, len(versions), 3, "one heartbeat per renewal: %v", versions)
		for i, v := range versions {
			require.Equal(t, int64(i+2), v, "heartbeat %d reports the claim_version the renewal produced: %v", i, versions)
		}
		c := tb.requireReleased(t, domain.ResourceWorkOrder, wo.WorkOrderID)
		require.Equal(t, versions[len(versions)-1]+1, c.ClaimVersion, "released after the last renewal")
	})
}

// runWithHeartbeat is the smallest workflow that runs Run the way the
// lifecycle does: with a heartbeat timeout and no retries.
func runWithHeartbeat(ctx workflow.Context, in activities.RunInput, heartbeat time.Duration) (activities.RunResult, error) {
	var a *activities.Steps
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		HeartbeatTimeout: heartbeat, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	var res activities.RunResult
	err := workflow.ExecuteActivity(ctx, a.Run, in).Get(ctx, &res)
	return res, err
}

// TestRun_InWorkflowLeaseIsHeartbeatTimeout runs Run under a heartbeat
// timeout shorter than the diazotroph's run: the claim's lease is the
// heartbeat timeout, and the renewals' heartbeats keep the activity alive.
func TestRun_InWorkflowLeaseIsHeartbeatTimeout(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		wo := tb.scheduled(t, "obj-1")
		const heartbeat = 1500 * time.Millisecond
		seen := make(chan domain.ClaimRecord, 1)
		tb.fake.exec = holding(tb, 2*heartbeat, seen)
		hb := &heartbeats{}
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestWorkflowEnvironment()
		env.SetTestTimeout(30 * time.Second)
		env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{hb}})
		tb.register(env)
		env.RegisterWorkflow(runWithHeartbeat)

		env.ExecuteWorkflow(runWithHeartbeat, activities.RunInput{WorkOrderID: wo.WorkOrderID}, heartbeat)
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError(), "heartbeats kept the activity alive past its heartbeat timeout")
		var res activities.RunResult
		require.NoError(t, env.GetWorkflowResult(&res))
		require.Equal(t, activities.RunResult{WorkOrderID: wo.WorkOrderID, RunnerStatus: domain.RunnerOK}, res)

		held := <-seen
		require.Equal(t, heartbeat, held.LeaseExpiresAt.Sub(held.HeartbeatAt), "the lease is the heartbeat timeout")
		require.NotEqual(t, tb.steps.LeaseTTL, heartbeat)
		require.GreaterOrEqual(t, len(hb.Versions()), 3, "renewed every 500ms for 3s: %v", hb.Versions())
		require.Equal(t, domain.WorkOrderExecuted, tb.workOrder(t, wo.WorkOrderID).Status)
	})
}
