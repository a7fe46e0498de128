package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workflows"
)

// Ten lifecycles on two workers whose PostgreSQL store and Temporal
// frontend are each reached through a fault-injecting proxy (latency,
// every connection reset, partitions that heal), injected while the
// lifecycles run: every lifecycle reaches DONE with one bundle and one run
// record, the history of every claim operation and fenced write the
// workers made is linearizable against the claim model, and that of every
// bundle delivered against the outcome model.
func TestFaults_LifecyclesOnAFaultyStoreKeepTheClaimProtocol(t *testing.T) {
	t.Parallel()
	// Runs of two seconds, so the faults fall on lifecycles in flight.
	b := setup(t, setupOptions{command: "sleep 2; printf ok", leaseTTL: 3 * time.Second, noWorker: true})
	var proxy *storetest.FaultProxy
	pg := storetest.NewPostgresThrough(t, func(upstream string) string {
		proxy = storetest.StartFaultProxy(t, upstream)
		return proxy.Addr()
	})
	h := storetest.NewHistory()
	st := h.FullStore(pg)
	b.store, b.starter.Store = st, st
	// The workers reach Temporal through a proxy of their own; the test's
	// client (approvals, waits) goes straight.
	frontend := storetest.StartFaultProxy(t, server.FrontendAddress())
	wc, err := client.Dial(client.Options{HostPort: frontend.Addr(), Namespace: "default", Logger: quietSDKLogger{}})
	require.NoError(t, err)
	t.Cleanup(wc.Close)
	b.client = wc
	b.startWorker(t, "first")
	b.startWorker(t, "second")

	ctx := context.Background()
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = uniqueID(fmt.Sprintf("faulty%d", i))
		b.create(t, ids[i])
		_, err := b.starter.Decide(ctx, ids[i], workflows.Approve, workflows.Decision{By: "tester"})
		require.NoError(t, err)
	}
	fctx, stop := context.WithCancel(ctx)
	var faulted sync.WaitGroup
	faulted.Go(func() { proxy.Schedule(fctx, 7, 100*time.Millisecond) })
	faulted.Go(func() { frontend.Schedule(fctx, 11, 150*time.Millisecond) })
	// Faults go on until the lifecycles have had some: at least a few
	// resets and a partition, whatever the machine's speed.
	require.Eventually(t, func() bool {
		c := proxy.Counts()
		return c[storetest.FaultReset] >= 3 && c[storetest.FaultPartition] >= 1
	}, 2*time.Minute, 50*time.Millisecond)
	stop()
	faulted.Wait()

	for _, id := range ids {
		st := b.waitStep(t, id, workflows.StepDone)
		require.Equal(t, domain.GatePass, st.GateResult, "%s: %s", id, st.GateReason)
		wos, bundles, records := b.counts(t, id)
		require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records}, "%s: one workorder, one bundle, one run record", id)
	}
	n := storetest.CheckClaimHistory(t, h, t.Name())
	delivered := storetest.CheckOutcomeHistory(t, h, t.Name())
	outcomes := storetest.HistoryOutcomes(h)
	t.Logf("%d claim operations and %d deliveries checked %v; faults injected on the store %v, on Temporal %v", n,
		delivered, outcomes, proxy.Counts(), frontend.Counts())
	require.Positive(t, outcomes["fenced ok"])
	require.GreaterOrEqual(t, delivered, len(ids), "every lifecycle's bundle was delivered")
}
