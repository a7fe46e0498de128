package controlplane

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// A job enqueued with a run's slot holds it until it is settled: renewed
// at the enqueue, by the reaper while it waits, when its attempt starts and
// with each heartbeat; a heartbeat whose slot another run took is refused;
// a completion gives the slot up.
func TestSlots_AJobHoldsItsRunSlotUntilSettled(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		take := func(id, owner string) domain.SlotRef {
			_, ok, err := tb.st.AcquireClaim(tb.ctx, store.AcquireClaimParams{ResourceType: domain.ResourceRunSlot,
				ResourceID: id, OwnerID: owner, TTL: testTTL, Now: tb.clock.Now()})
			require.NoError(t, err)
			require.True(t, ok)
			return domain.SlotRef{ResourceID: id, OwnerID: owner}
		}
		slot := func(id string) *domain.ClaimRecord {
			c, err := tb.st.GetClaim(tb.ctx, domain.ResourceRunSlot, id)
			require.NoError(t, err)
			return c
		}
		ttl := tb.svc.Config().slotTTL()
		ref := take("rk:0", "rk/p/wo-1")
		j, err := tb.svc.Enqueue(tb.ctx, EnqueueParams{JobType: "PATCH_DIAZOTROPH", Stream: testStream,
			Payload: []byte(`{"work_order_id":"wo-1"}`), WorkOrderID: "wo-1", Activity: testActivity,
			RunSlots: []domain.SlotRef{ref}})
		require.NoError(t, err)
		require.Equal(t, []domain.SlotRef{ref}, tb.job(t, j.JobID).RunSlots)
		require.True(t, slot("rk:0").LeaseExpiresAt.Equal(tb.clock.Now().Add(ttl)), "renewed for the job at its enqueue")

		// Waiting past the run's own lease: the reaper keeps it.
		tb.clock.Advance(testTTL + time.Second)
		_, err = NewReaper(tb.svc).RunOnce(tb.ctx)
		require.NoError(t, err)
		require.True(t, slot("rk:0").Live(tb.clock.Now()), "kept while the job waits")

		c := tb.mustClaim(t, workerA)
		tb.clock.Advance(testTTL / 2)
		_, err = tb.svc.Heartbeat(tb.ctx, HeartbeatRequest{WorkerID: workerA, JobID: c.JobID, LeaseToken: c.LeaseToken})
		require.NoError(t, err)
		require.True(t, slot("rk:0").LeaseExpiresAt.Equal(tb.clock.Now().Add(ttl)), "renewed with the heartbeat")

		// Completed: the slot is given up with the job's outcome.
		_, err = tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{"ok":true}`))
		require.NoError(t, err)
		require.Equal(t, domain.JobSucceeded, tb.job(t, j.JobID).Status)
		require.NotNil(t, slot("rk:0").ReleasedAt, "given up with the job")

		// A second job whose slot another run takes while it runs: its
		// heartbeat is refused, and the other run keeps the slot.
		ref2 := take("rk:1", "rk/p/wo-2")
		_, err = tb.svc.Enqueue(tb.ctx, EnqueueParams{JobType: "PATCH_DIAZOTROPH", Stream: testStream,
			Payload: []byte(`{"work_order_id":"wo-2"}`), WorkOrderID: "wo-2", Activity: testActivity,
			RunSlots: []domain.SlotRef{ref2}})
		require.NoError(t, err)
		c2 := tb.mustClaim(t, workerA)
		held := slot("rk:1")
		_, err = tb.st.ReleaseClaim(tb.ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceRunSlot,
			ResourceID: "rk:1", OwnerID: held.OwnerID, ClaimVersion: held.ClaimVersion, Now: tb.clock.Now()})
		require.NoError(t, err)
		take("rk:1", "rk/p/wo-other")
		_, err = tb.svc.Heartbeat(tb.ctx, HeartbeatRequest{WorkerID: workerA, JobID: c2.JobID, LeaseToken: c2.LeaseToken})
		requireCode(t, err, 409, CodeLeaseLost)
		require.Equal(t, "rk/p/wo-other", slot("rk:1").OwnerID)
	})
}

// An attempt whose job's slot another run took (its lease lapsed while no
// reaper renewed it) is not started: the claim answers no job, and once
// the slot is free again the job starts and takes it back.
func TestSlots_AJobWhoseSlotIsTakenWaitsForIt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		own := domain.SlotRef{ResourceID: "rk:0", OwnerID: "rk/p/wo-1"}
		_, ok, err := tb.st.AcquireClaim(tb.ctx, store.AcquireClaimParams{ResourceType: domain.ResourceRunSlot,
			ResourceID: own.ResourceID, OwnerID: own.OwnerID, TTL: time.Second, Now: tb.clock.Now()})
		require.NoError(t, err)
		require.True(t, ok)
		_, err = tb.svc.Enqueue(tb.ctx, EnqueueParams{JobType: "PATCH_DIAZOTROPH", Stream: testStream,
			Payload: []byte(`{"work_order_id":"wo-1"}`), WorkOrderID: "wo-1", Activity: testActivity,
			RunSlots: []domain.SlotRef{own}})
		require.NoError(t, err)
		// No reaper ran: the slot lapses, and another run takes it.
		tb.clock.Advance(tb.svc.Config().slotTTL() + time.Second)
		other, ok, err := tb.st.AcquireClaim(tb.ctx, store.AcquireClaimParams{ResourceType: domain.ResourceRunSlot,
			ResourceID: own.ResourceID, OwnerID: "rk/p/wo-other", TTL: time.Minute, Now: tb.clock.Now()})
		require.NoError(t, err)
		require.True(t, ok)

		require.False(t, tb.claim(t, workerA).Claimed, "not started beside the run holding its slot")
		require.Empty(t, tb.tr.ackedIDs(), "the message is left pending")
		j, err := tb.st.GetJobByWorkOrder(tb.ctx, "wo-1")
		require.NoError(t, err)
		require.Equal(t, domain.JobQueued, j.Status)
		require.Empty(t, tb.attempts(t, j.JobID), "nothing of the attempt was written")

		_, err = tb.st.ReleaseClaim(tb.ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceRunSlot,
			ResourceID: own.ResourceID, OwnerID: other.OwnerID, ClaimVersion: other.ClaimVersion, Now: tb.clock.Now()})
		require.NoError(t, err)
		tb.tr.redeliver(j.MessageID)
		c := tb.mustClaim(t, workerA)
		require.Equal(t, j.JobID, c.JobID)
		held, err := tb.st.GetClaim(tb.ctx, domain.ResourceRunSlot, own.ResourceID)
		require.NoError(t, err)
		require.Equal(t, own.OwnerID, held.OwnerID, "taken back for the job")
		require.True(t, held.Live(tb.clock.Now()))
	})
}
