package controlplane

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// bundleHooks writes the workorder's output bundle when a complete
// settles, as the lifecycle's hooks do, so a test can tell whether a
// refused complete wrote one.
type bundleHooks struct{ *recordingHooks }

func (h bundleHooks) OnSucceed(ctx context.Context, q store.Querier, j *domain.Job) error {
	if _, _, err := q.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: j.WorkOrderID, Title: "late",
		Content: "diff", RunnerStatus: domain.RunnerOK, CreatedAt: j.UpdatedAt}); err != nil {
		return err
	}
	return h.recordingHooks.OnSucceed(ctx, q, j)
}

// workOrderJob stores a workorder of objective id and enqueues its job,
// with the service rebuilt on bundleHooks and transport tr (nil: tb.tr).
func (tb *testBundle) workOrderJob(t *testing.T, id string, tr Transport) *domain.Job {
	t.Helper()
	w := storetest.Scheduled(t, tb.st, id)
	_, _, err := tb.st.CreateWorkOrder(tb.ctx, w)
	require.NoError(t, err)
	if tr == nil {
		tr = tb.tr
	}
	tb.svc = New(tb.st, tr, tb.acts, bundleHooks{tb.hooks}, tb.svc.Config())
	return tb.enqueue(t, w.WorkOrderID)
}

// judge writes the gate's verdict on the job's workorder, as the gate does
// once the Run activity has failed for good (timed out, cancelled).
func (tb *testBundle) judge(t *testing.T, j *domain.Job) {
	t.Helper()
	now := tb.clock.Now()
	_, err := tb.st.UpsertRunRecord(tb.ctx, &domain.RunRecord{WorkOrderID: j.WorkOrderID, ObjectiveID: "o1",
		GateResult: domain.GateFail, GateReason: "run produced no output bundle: activity timed out",
		CreatedAt: now, UpdatedAt: now})
	require.NoError(t, err)
}

func (tb *testBundle) requireNoBundle(t *testing.T, j *domain.Job) {
	t.Helper()
	_, err := tb.st.GetOutputBundle(tb.ctx, j.WorkOrderID)
	require.ErrorIs(t, err, domain.ErrNotFound, "no output bundle after the gate's verdict")
}

func TestComplete_AfterTheGatesVerdictIsRefusedWritesNothingAndTheReaperDeadLetters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{MaxAttempts: 3}, func(t *testing.T, tb *testBundle) {
		j := tb.workOrderJob(t, "o1", nil)
		hb := setupHTTP(t, tb)
		c := tb.mustClaim(t, workerA)
		tb.judge(t, j)
		running := tb.job(t, j.JobID)

		for range 2 { // a retried complete is refused the same way
			status, body := hb.post(t, PathComplete, hb.tokenA, mustJSON(t, completeOf(c, workerA, `{"late":true}`)))
			require.Equal(t, http.StatusConflict, status, string(body))
			var e ErrorResponse
			require.NoError(t, json.Unmarshal(body, &e))
			require.Equal(t, CodeCancelled, e.Error.Code)
			for _, want := range []string{"no longer waits", j.WorkOrderID, "gate's verdict (FAIL)", "nothing was written"} {
				require.Contains(t, e.Error.Message, want)
			}
		}
		tb.requireNoBundle(t, j)
		after := tb.job(t, j.JobID)
		require.Equal(t, domain.JobRunning, after.Status)
		require.Nil(t, after.Result)
		require.Equal(t, running.UpdatedAt, after.UpdatedAt)
		require.Equal(t, domain.AttemptRunning, tb.attempts(t, j.JobID)[0].Status)
		require.Empty(t, tb.hooks.succeeded)
		require.Empty(t, tb.tr.ackedIDs())
		_, completed, _ := tb.acts.calls()
		require.Empty(t, completed)

		// The worker gave up; its lease lapses. Attempts remain, but the
		// job is not requeued.
		tb.clock.Advance(testTTL + time.Second)
		rc, err := NewReaper(tb.svc).RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rc.Expired)
		require.Zero(t, rc.Requeued)
		require.Equal(t, 1, rc.DeadLettered)
		require.Equal(t, 1, rc.RunGone)
		dead := tb.job(t, j.JobID)
		require.Equal(t, domain.JobDeadLettered, dead.Status)
		require.Equal(t, CodeRunGone, dead.Error.Code)
		require.Contains(t, dead.Error.Message, "run activity gone")
		require.Equal(t, []string{j.JobID}, tb.hooks.deadLettered)
		_, _, failed := tb.acts.calls()
		require.Equal(t, []string{j.JobID}, failed)
		require.Len(t, tb.tr.enqueued, 1, "no message for a requeue")
		require.Zero(t, tb.tr.live())

		_, err = tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{"late":true}`))
		requireCode(t, err, http.StatusConflict, CodeLeaseLost)
		tb.requireNoBundle(t, j)
	})
}

func TestComplete_BeforeTheGatesVerdictWritesTheBundle(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.workOrderJob(t, "o1", nil)
		c := tb.mustClaim(t, workerA)
		_, err := tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{"n":1}`))
		require.NoError(t, err)
		b, err := tb.st.GetOutputBundle(tb.ctx, j.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, "late", b.Title)
		require.Equal(t, domain.JobSucceeded, tb.job(t, j.JobID).Status)
	})
}

func TestReaper_DeadLettersAQueuedJobWhoseRunIsGone(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.workOrderJob(t, "o1", nil)
		r := NewReaper(tb.svc)

		// Temporal's "not found" alone is no proof: a Run activity between
		// two attempts is not found either, and comes back for the job.
		tb.acts.setErr(ErrActivityGone)
		rc, err := r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Zero(t, rc.DeadLettered)
		require.Equal(t, domain.JobQueued, tb.job(t, j.JobID).Status)

		tb.judge(t, j)
		rc, err = r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rc.DeadLettered)
		require.Equal(t, 1, rc.RunGone)
		require.Zero(t, rc.Failed)
		dead := tb.job(t, j.JobID)
		require.Equal(t, domain.JobDeadLettered, dead.Status)
		require.Equal(t, CodeRunGone, dead.Error.Code)
		require.Contains(t, dead.Error.Message, "before any worker ran it")
		require.NotNil(t, dead.NotifiedAt, "a gone activity has no one to tell")
		as := tb.attempts(t, j.JobID)
		require.Len(t, as, 1)
		require.Equal(t, domain.AttemptFailed, as[0].Status)
		require.True(t, strings.HasPrefix(as[0].WorkerID, "control-plane-reaper/"), as[0].WorkerID)
		require.Equal(t, []string{j.MessageID}, tb.tr.ackedIDs())
		require.Equal(t, []string{j.JobID}, tb.hooks.deadLettered)
		require.Zero(t, tb.hooks.started, "nothing ran, nothing was claimed")

		require.False(t, tb.claim(t, workerA).Claimed)
		rc, err = r.RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Zero(t, rc.DeadLettered, "settled once")
		require.Len(t, tb.attempts(t, j.JobID), 1)
	})
}

func TestReaper_DeadLettersAQueuedJobWithoutAMessage(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.workOrderJob(t, "o1", failingEnqueue{tb.tr})
		require.Empty(t, j.MessageID)
		tb.svc.tr = tb.tr
		tb.judge(t, j)
		tb.clock.Advance(DefaultMessageGrace) // past when a missing message is written again
		rc, err := NewReaper(tb.svc).RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rc.RunGone)
		require.Zero(t, rc.Republished, "no message for a job that will never run")
		require.Equal(t, domain.JobDeadLettered, tb.job(t, j.JobID).Status)
	})
}

func TestClaim_DoesNotStartAJobWhoseRunIsGone(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.workOrderJob(t, "o1", nil)
		tb.judge(t, j)
		require.False(t, tb.claim(t, workerA).Claimed)
		require.Zero(t, tb.hooks.started)
		require.Empty(t, tb.attempts(t, j.JobID))
		require.Equal(t, []string{j.MessageID}, tb.tr.ackedIDs(), "the message goes")

		rc, err := NewReaper(tb.svc).RunOnce(tb.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rc.RunGone)
		require.Zero(t, rc.Republished)
		require.Equal(t, domain.JobDeadLettered, tb.job(t, j.JobID).Status)
	})
}

func TestHeartbeat_RefusedOnceTheGateHasJudged(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		j := tb.workOrderJob(t, "o1", nil)
		c := tb.mustClaim(t, workerA)
		before, err := tb.st.ListJobLeases(tb.ctx, j.JobID)
		require.NoError(t, err)
		tb.judge(t, j)
		tb.clock.Advance(time.Second)

		_, err = tb.svc.Heartbeat(tb.ctx, HeartbeatRequest{WorkerID: workerA, JobID: c.JobID, LeaseToken: c.LeaseToken})
		requireCode(t, err, http.StatusConflict, CodeCancelled)
		after, err := tb.st.ListJobLeases(tb.ctx, j.JobID)
		require.NoError(t, err)
		require.True(t, before[0].LeaseExpiresAt.Equal(after[0].LeaseExpiresAt), "the lease is not extended")
		require.Zero(t, tb.hooks.renewed)
	})
}

func TestFail_ARetryableFailureOfAJobWhoseRunIsGoneDeadLetters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{MaxAttempts: 3}, func(t *testing.T, tb *testBundle) {
		j := tb.workOrderJob(t, "o1", nil)
		c := tb.mustClaim(t, workerA)
		tb.judge(t, j)
		resp, err := tb.svc.Fail(tb.ctx, failOf(c, workerA, true))
		require.NoError(t, err)
		require.Equal(t, FailResponse{OK: true, Ack: true, DLQ: true}, resp)
		dead := tb.job(t, j.JobID)
		require.Equal(t, domain.JobDeadLettered, dead.Status)
		require.Equal(t, CodeRunGone, dead.Error.Code)
		require.Contains(t, dead.Error.Message, "TEST_FAILED: 2 tests failed")
		require.Len(t, tb.tr.enqueued, 1, "not requeued")
	})
}
