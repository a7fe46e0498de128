package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

const (
	testStream = "patch"
	workerA    = "worker-a"
	workerB    = "worker-b"
	testTTL    = time.Minute
)

type testBundle struct {
	// st is the whole store: tests write the lifecycle's records the
	// control plane only reads.
	st    *sqlstore.Store
	tr    *fakeTransport
	acts  *fakeActivities
	hooks *recordingHooks
	clock *clock
	svc   *Service
	ctx   context.Context
}

// forEachBackend runs test on a fresh store of every backend.
func forEachBackend(t *testing.T, cfg Config, test func(t *testing.T, tb *testBundle)) {
	t.Helper()
	for _, b := range storetest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			test(t, setup(t, b.Open, cfg))
		})
	}
}

// setup builds a Service over a fresh store and fakes of the transport,
// the activities and the hooks, on a settable clock.
func setup(t *testing.T, open func(testing.TB) *sqlstore.Store, cfg Config) *testBundle {
	t.Helper()
	st := open(t)
	tb := &testBundle{st: st, tr: newFakeTransport(), acts: &fakeActivities{}, hooks: &recordingHooks{},
		clock: &clock{t: time.Now().UTC().Truncate(time.Millisecond)}, ctx: context.Background()}
	if cfg.LeaseTTL == 0 {
		cfg.LeaseTTL = testTTL
	}
	if cfg.Backoff == nil {
		cfg.Backoff = func(int) time.Duration { return 0 }
	}
	cfg.Now = tb.clock.Now
	if cfg.InstanceID == "" {
		cfg.InstanceID = "cp-1"
	}
	tb.svc = New(st, tb.tr, tb.acts, tb.hooks, cfg)
	return tb
}

var testActivity = &domain.ActivityRef{WorkflowID: "lifecycle-o1", RunID: "run-1", ActivityID: "5"}

func (tb *testBundle) enqueue(t *testing.T, workOrderID string) *domain.Job {
	t.Helper()
	j, err := tb.svc.Enqueue(tb.ctx, EnqueueParams{JobType: "PATCH_DIAZOTROPH", Stream: testStream,
		Payload: json.RawMessage(`{"work_order_id":"` + workOrderID + `"}`), WorkOrderID: workOrderID,
		Activity: testActivity})
	require.NoError(t, err)
	return j
}

func (tb *testBundle) claim(t *testing.T, worker string) ClaimResponse {
	t.Helper()
	resp, err := tb.svc.Claim(tb.ctx, ClaimRequest{WorkerID: worker, Streams: []string{testStream}})
	require.NoError(t, err)
	return resp
}

func (tb *testBundle) mustClaim(t *testing.T, worker string) ClaimResponse {
	t.Helper()
	resp := tb.claim(t, worker)
	require.True(t, resp.Claimed, "a job to claim")
	return resp
}

func (tb *testBundle) job(t *testing.T, id string) *domain.Job {
	t.Helper()
	j, err := tb.st.GetJob(tb.ctx, id)
	require.NoError(t, err)
	return j
}

func (tb *testBundle) attempts(t *testing.T, jobID string) []*domain.JobAttempt {
	t.Helper()
	as, err := tb.st.ListJobAttempts(tb.ctx, jobID)
	require.NoError(t, err)
	return as
}

func completeOf(c ClaimResponse, worker, result string) CompleteRequest {
	return CompleteRequest{WorkerID: worker, JobID: c.JobID, AttemptID: c.AttemptID, LeaseToken: c.LeaseToken,
		Stream: c.Stream.Name, MessageID: c.Stream.MessageID, Result: json.RawMessage(result)}
}

func failOf(c ClaimResponse, worker string, retryable bool) FailRequest {
	return FailRequest{WorkerID: worker, JobID: c.JobID, AttemptID: c.AttemptID, LeaseToken: c.LeaseToken,
		Stream: c.Stream.Name, MessageID: c.Stream.MessageID,
		Error: domain.JobError{Code: "TEST_FAILED", Message: "2 tests failed", Retryable: retryable}}
}

func requireCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, code, e.Code, "error: %v", err)
	require.Equal(t, status, e.Status)
}

func TestClaim_DuplicateDeliveriesMakeOneAttempt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		require.NotEmpty(t, j.MessageID)
		dup := tb.tr.duplicate(j.MessageID) // the same enqueue written twice

		c := tb.mustClaim(t, workerA)
		require.Equal(t, j.JobID, c.JobID)
		// The duplicate names a RUNNING job's own enqueue: skipped, and
		// kept pending rather than acknowledged before the job settles.
		require.False(t, tb.claim(t, workerB).Claimed)
		// The first message redelivered after a control-plane crash.
		tb.tr.redeliver(c.Stream.MessageID)
		require.False(t, tb.claim(t, workerB).Claimed)
		require.Empty(t, tb.tr.ackedIDs(), "nothing acknowledged before the job settled")

		resp, err := tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{"ok":1}`))
		require.NoError(t, err)
		require.Equal(t, CompleteResponse{OK: true, Ack: true}, resp)
		require.Equal(t, []string{c.Stream.MessageID}, tb.tr.ackedIDs())

		// Delivered again after the job settled: stale, acknowledged.
		tb.tr.redeliver(dup)
		require.False(t, tb.claim(t, workerB).Claimed)
		require.ElementsMatch(t, []string{c.Stream.MessageID, dup}, tb.tr.ackedIDs())
		require.Zero(t, tb.tr.live())

		as := tb.attempts(t, j.JobID)
		require.Len(t, as, 1)
		require.Equal(t, domain.AttemptSucceeded, as[0].Status)
		require.Equal(t, 1, tb.hooks.started)
		require.Equal(t, domain.JobSucceeded, tb.job(t, j.JobID).Status)
	})
}

func TestComplete_RepeatGetsSameAnswerAndWritesNothing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		c := tb.mustClaim(t, workerA)
		first, err := tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{"n":1}`))
		require.NoError(t, err)
		settled := tb.job(t, j.JobID)

		tb.clock.Advance(time.Second)
		again, err := tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{"n":2}`))
		require.NoError(t, err)
		require.Equal(t, first, again)

		after := tb.job(t, j.JobID)
		require.JSONEq(t, `{"n":1}`, string(after.Result))
		require.Equal(t, settled.UpdatedAt, after.UpdatedAt)
		require.Len(t, tb.attempts(t, j.JobID), 1)
		require.Equal(t, []string{j.JobID}, tb.hooks.succeeded)
		_, completed, _ := tb.acts.calls()
		require.Equal(t, []string{j.JobID}, completed)

		// A fail for the attempt that succeeded is stale, and writes nothing.
		_, err = tb.svc.Fail(tb.ctx, failOf(c, workerA, true))
		requireCode(t, err, 409, CodeStale)
		require.Equal(t, domain.JobSucceeded, tb.job(t, j.JobID).Status)
	})
}

func TestComplete_StaleTokenAfterReaperRequeueIsRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		old := tb.mustClaim(t, workerA)
		tb.clock.Advance(testTTL + time.Second)

		c, err := NewReaper(tb.svc).RunOnce(tb.ctx)
		require.NoError(t, err)
		require.True(t, c.Leader)
		require.Equal(t, 1, c.Expired)
		require.Equal(t, 1, c.Requeued)
		require.Equal(t, []string{old.Stream.MessageID}, tb.tr.ackedIDs(), "the expired attempt's message")
		requeued := tb.job(t, j.JobID)
		require.Equal(t, domain.JobQueued, requeued.Status)
		require.NotEqual(t, j.EnqueueID, requeued.EnqueueID)

		_, err = tb.svc.Complete(tb.ctx, completeOf(old, workerA, `{"late":true}`))
		requireCode(t, err, 409, CodeLeaseLost)
		_, err = tb.svc.Heartbeat(tb.ctx, HeartbeatRequest{WorkerID: workerA, JobID: old.JobID, LeaseToken: old.LeaseToken})
		requireCode(t, err, 409, CodeLeaseLost)
		_, err = tb.svc.Fail(tb.ctx, failOf(old, workerA, true))
		requireCode(t, err, 409, CodeLeaseLost)

		unchanged := tb.job(t, j.JobID)
		require.Equal(t, requeued.UpdatedAt, unchanged.UpdatedAt)
		require.Nil(t, unchanged.Result)
		as := tb.attempts(t, j.JobID)
		require.Len(t, as, 1)
		require.Equal(t, domain.AttemptExpired, as[0].Status)
		require.Empty(t, tb.hooks.succeeded)

		// The requeue's message brings the job to the next worker.
		next := tb.mustClaim(t, workerB)
		require.Equal(t, j.JobID, next.JobID)
		_, err = tb.svc.Complete(tb.ctx, completeOf(next, workerB, `{"n":2}`))
		require.NoError(t, err)
		require.JSONEq(t, `{"n":2}`, string(tb.job(t, j.JobID).Result))
	})
}

func TestFail_MaxAttemptsDeadLetters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{MaxAttempts: 3}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		for attempt := 1; attempt <= 3; attempt++ {
			c := tb.mustClaim(t, workerA)
			resp, err := tb.svc.Fail(tb.ctx, failOf(c, workerA, true))
			require.NoError(t, err)
			last := attempt == 3
			require.Equal(t, FailResponse{OK: true, Ack: true, Requeued: !last, DLQ: last}, resp, "attempt %d", attempt)
			// A repeat gets the same answer.
			again, err := tb.svc.Fail(tb.ctx, failOf(c, workerA, true))
			require.NoError(t, err)
			require.Equal(t, resp, again)
		}
		require.False(t, tb.claim(t, workerA).Claimed)

		dead := tb.job(t, j.JobID)
		require.Equal(t, domain.JobDeadLettered, dead.Status)
		require.Equal(t, 3, dead.AttemptCount)
		require.NotNil(t, dead.NotifiedAt)
		require.Equal(t, []string{j.JobID}, tb.hooks.deadLettered)
		_, completed, failed := tb.acts.calls()
		require.Empty(t, completed)
		require.Equal(t, []string{j.JobID}, failed)
		require.Len(t, tb.tr.ackedIDs(), 3)
		require.Zero(t, tb.tr.live())
	})
}

func TestFail_NotRetryableDeadLettersAtOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{MaxAttempts: 3}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		resp, err := tb.svc.Fail(tb.ctx, failOf(tb.mustClaim(t, workerA), workerA, false))
		require.NoError(t, err)
		require.Equal(t, FailResponse{OK: true, Ack: true, DLQ: true}, resp)
		require.Equal(t, domain.JobDeadLettered, tb.job(t, j.JobID).Status)
		require.Equal(t, []string{j.JobID}, tb.hooks.deadLettered)
	})
}

func TestFail_BackoffRequeueGetsItsMessageWhenDue(t *testing.T) {
	t.Parallel()
	cfg := Config{Backoff: func(int) time.Duration { return 30 * time.Second }}
	forEachBackend(t, cfg, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		resp, err := tb.svc.Fail(tb.ctx, failOf(tb.mustClaim(t, workerA), workerA, true))
		require.NoError(t, err)
		require.True(t, resp.Requeued)
		require.False(t, tb.claim(t, workerA).Claimed, "no message before the backoff")

		r := NewReaper(tb.svc)
		c, err := r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Zero(t, c.Republished)

		tb.clock.Advance(31 * time.Second)
		c, err = r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, c.Republished)
		require.Equal(t, j.JobID, tb.mustClaim(t, workerA).JobID)
	})
}

func TestComplete_AckOnlyAfterCommit(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		c := tb.mustClaim(t, workerA)
		tb.hooks.errSucceed = errInjected

		_, err := tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{"n":1}`))
		require.ErrorIs(t, err, errInjected)
		require.Empty(t, tb.tr.ackedIDs(), "no acknowledgement without a commit")
		rolledBack := tb.job(t, j.JobID)
		require.Equal(t, domain.JobRunning, rolledBack.Status)
		require.Nil(t, rolledBack.Result)
		_, completed, _ := tb.acts.calls()
		require.Empty(t, completed)

		tb.hooks.errSucceed = nil
		_, err = tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{"n":1}`))
		require.NoError(t, err)
		require.Equal(t, []string{c.Stream.MessageID}, tb.tr.ackedIDs())
	})
}

func TestComplete_AnotherWorkersAttemptIsForbidden(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		c := tb.mustClaim(t, workerA)

		_, err := tb.svc.Complete(tb.ctx, completeOf(c, workerB, `{}`))
		requireCode(t, err, 403, CodeForbidden)
		_, err = tb.svc.Heartbeat(tb.ctx, HeartbeatRequest{WorkerID: workerB, JobID: c.JobID, LeaseToken: c.LeaseToken})
		requireCode(t, err, 403, CodeForbidden)
		_, err = tb.svc.Heartbeat(tb.ctx, HeartbeatRequest{WorkerID: workerB, JobID: c.JobID, LeaseToken: newLeaseToken()})
		requireCode(t, err, 403, CodeForbidden)

		unknown := completeOf(c, workerA, `{}`)
		unknown.AttemptID = newUUID()
		_, err = tb.svc.Complete(tb.ctx, unknown)
		requireCode(t, err, 404, CodeNotFound)
		unknown.JobID = newUUID()
		_, err = tb.svc.Complete(tb.ctx, unknown)
		requireCode(t, err, 404, CodeNotFound)

		wrong := completeOf(c, workerA, `{}`)
		wrong.LeaseToken = newLeaseToken()
		_, err = tb.svc.Complete(tb.ctx, wrong)
		requireCode(t, err, 409, CodeLeaseLost)

		require.Equal(t, domain.JobRunning, tb.job(t, j.JobID).Status)
		require.Empty(t, tb.tr.ackedIDs())
		require.Zero(t, tb.hooks.renewed)
	})
}

func TestHeartbeat_ExtendsTheLeaseAndHeartbeatsTheActivity(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		tb.enqueue(t, "wo-1")
		c := tb.mustClaim(t, workerA)
		tb.clock.Advance(testTTL / 2)
		resp, err := tb.svc.Heartbeat(tb.ctx, HeartbeatRequest{WorkerID: workerA, JobID: c.JobID, LeaseToken: c.LeaseToken})
		require.NoError(t, err)
		require.True(t, resp.OK)
		require.True(t, resp.LeaseExpiresAt.Equal(tb.clock.Now().Add(testTTL)), "lease runs a TTL from the heartbeat")
		require.Equal(t, 1, tb.hooks.renewed)
		heartbeats, _, _ := tb.acts.calls()
		require.Equal(t, 1, heartbeats)

		// Past the first TTL, the lease still holds thanks to the heartbeat.
		tb.clock.Advance(testTTL/2 + time.Second)
		rc, err := NewReaper(tb.svc).RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Zero(t, rc.Expired)

		tb.acts.setErr(ErrActivityGone)
		_, err = tb.svc.Heartbeat(tb.ctx, HeartbeatRequest{WorkerID: workerA, JobID: c.JobID, LeaseToken: c.LeaseToken})
		requireCode(t, err, 409, CodeCancelled)
	})
}

func TestEnqueue_IdempotentByWorkOrder(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		again, err := tb.svc.Enqueue(tb.ctx, EnqueueParams{JobType: "PATCH_DIAZOTROPH", Stream: testStream,
			Payload: json.RawMessage(`{"work_order_id":"wo-1"}`), WorkOrderID: "wo-1",
			Activity: &domain.ActivityRef{WorkflowID: "lifecycle-o1", RunID: "run-2", ActivityID: "5"}})
		require.NoError(t, err)
		require.Equal(t, j.JobID, again.JobID)
		require.Equal(t, "run-2", tb.job(t, j.JobID).Activity.RunID)
		require.Len(t, tb.tr.enqueued, 1, "one message")
	})
}

func TestReaper_RewritesLostMessages(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		a := tb.enqueue(t, "wo-1")
		b := tb.enqueue(t, "wo-2")
		// An enqueuer that died between the row and the message.
		now := tb.clock.Now()
		orphan, _, err := tb.st.CreateJob(tb.ctx, &domain.Job{JobID: newUUID(), JobType: "PATCH_DIAZOTROPH",
			Stream: testStream, Status: domain.JobQueued, Payload: json.RawMessage(`{}`), MaxAttempts: 3,
			EnqueueID: newUUID(), AvailableAt: now, CreatedAt: now, UpdatedAt: now})
		require.NoError(t, err)
		tb.tr.flush() // Redis lost everything

		r := NewReaper(tb.svc)
		c, err := r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 2, c.Republished, "the orphan's enqueuer may still write its message")

		tb.clock.Advance(DefaultMessageGrace)
		c, err = r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, c.Republished)
		c, err = r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Zero(t, c.Republished)

		claimed := map[string]bool{}
		for range 3 {
			claimed[tb.mustClaim(t, workerA).JobID] = true
		}
		require.Equal(t, map[string]bool{a.JobID: true, b.JobID: true, orphan.JobID: true}, claimed)
	})
}

func TestReaper_ExpiredLastAttemptDeadLetters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{MaxAttempts: 1}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		tb.mustClaim(t, workerA)
		tb.clock.Advance(testTTL + time.Second)
		c, err := NewReaper(tb.svc).RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, c.Expired)
		require.Equal(t, 1, c.DeadLettered)
		dead := tb.job(t, j.JobID)
		require.Equal(t, domain.JobDeadLettered, dead.Status)
		require.Equal(t, CodeLeaseExpired, dead.Error.Code)
		require.Equal(t, []string{j.JobID}, tb.hooks.deadLettered)
		_, _, failed := tb.acts.calls()
		require.Equal(t, []string{j.JobID}, failed)
	})
}

func TestReaper_NotifiesOutcomesTemporalMissed(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		c := tb.mustClaim(t, workerA)
		tb.acts.setErr(errInjected) // Temporal unreachable
		resp, err := tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{}`))
		require.NoError(t, err, "the outcome is durable")
		require.Equal(t, CompleteResponse{OK: true, Ack: true}, resp)
		require.Nil(t, tb.job(t, j.JobID).NotifiedAt)

		r := NewReaper(tb.svc)
		rc, err := r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rc.Failed)
		require.Zero(t, rc.Notified)

		tb.acts.setErr(nil)
		rc, err = r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rc.Notified)
		require.NotNil(t, tb.job(t, j.JobID).NotifiedAt)
		_, completed, _ := tb.acts.calls()
		require.Equal(t, []string{j.JobID}, completed)

		rc, err = r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Zero(t, rc.Notified)
	})
}

func TestReaper_HeartbeatsActivitiesOfQueuedJobs(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		tb.enqueue(t, "wo-1")
		r := NewReaper(tb.svc)
		c, err := r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, c.Heartbeats)

		tb.acts.setErr(ErrActivityGone)
		c, err = r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Zero(t, c.Heartbeats)
		require.Zero(t, c.Failed, "a gone activity is left alone, not a failure")
	})
}

func TestReaper_OneLeads(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		cfg := tb.svc.Config()
		cfg.InstanceID = "cp-2"
		other := New(tb.st, tb.tr, tb.acts, tb.hooks, cfg)
		r1, r2 := NewReaper(tb.svc), NewReaper(other)

		c1, err := r1.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.True(t, c1.Leader)
		c2, err := r2.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.False(t, c2.Leader)
		require.Zero(t, c2.Batches, "a standby reads nothing")

		c1, err = r1.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.True(t, c1.Leader, "the leader renews")

		r1.Stop() // releases the leadership
		c2, err = r2.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.True(t, c2.Leader)
		r2.Stop()
	})
}

func TestReaper_StartPassesUntilStopped(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{ReaperInterval: 10 * time.Millisecond}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		tb.mustClaim(t, workerA)
		tb.clock.Advance(testTTL + time.Second)
		r := NewReaper(tb.svc)
		r.Start(tb.ctx)
		defer r.Stop()
		require.Eventually(t, func() bool {
			got, err := tb.st.GetJob(tb.ctx, j.JobID)
			return err == nil && got.Status == domain.JobQueued
		}, 10*time.Second, 10*time.Millisecond)
	})
}

func TestEnqueue_TransportDownLeavesTheMessageToTheReaper(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		tb.svc.tr = failingEnqueue{tb.tr}
		j := tb.enqueue(t, "wo-1")
		require.Empty(t, j.MessageID)
		tb.svc.tr = tb.tr
		tb.clock.Advance(DefaultMessageGrace)
		c, err := NewReaper(tb.svc).RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, c.Republished)
		require.Equal(t, j.JobID, tb.mustClaim(t, workerA).JobID)
	})
}

type failingEnqueue struct{ Transport }

func (failingEnqueue) Enqueue(context.Context, string, string, string) (string, error) {
	return "", errors.New("redis: connection refused")
}

func TestDefaultBackoff_DoublesAndCaps(t *testing.T) {
	t.Parallel()
	for attempt, want := range map[int]time.Duration{1: 5 * time.Second, 2: 10 * time.Second,
		3: 20 * time.Second, 7: 5 * time.Minute, 100: 5 * time.Minute} {
		require.Equal(t, want, DefaultBackoff(attempt), fmt.Sprint(attempt))
	}
}

func TestSettle_ResultsAndErrorsAreRedactedBeforeTheyAreWritten(t *testing.T) {
	t.Parallel()
	r := redact.New(redact.Secret{Name: "store.dsn", Value: "pw-canary-2024"})
	forEachBackend(t, Config{Redact: r}, func(t *testing.T, tb *testBundle) {
		j := tb.enqueue(t, "wo-1")
		c := tb.mustClaim(t, workerA)
		_, err := tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{"content":"dsn pw-canary-2024","exit":0}`))
		require.NoError(t, err)
		require.JSONEq(t, `{"content":"dsn [redacted:store.dsn]","exit":0}`, string(tb.job(t, j.JobID).Result))

		j2 := tb.enqueue(t, "wo-2")
		c2 := tb.mustClaim(t, workerA)
		f := failOf(c2, workerA, false)
		f.Error.Message = "connect to postgres://u:pw-canary-2024@db failed"
		_, err = tb.svc.Fail(tb.ctx, f)
		require.NoError(t, err)
		for _, a := range tb.attempts(t, j2.JobID) {
			require.NotNil(t, a.Error)
			require.NotContains(t, a.Error.Message, "pw-canary-2024")
			require.Contains(t, a.Error.Message, "[redacted:store.dsn]")
		}
	})
}
