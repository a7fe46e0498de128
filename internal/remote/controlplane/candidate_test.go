package controlplane

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// candidateRequest is a request of workorder wo of an objective with
// attempts.
func candidateRequest(wo string, attempts int) diazotroph.Request {
	return diazotroph.Request{
		WorkOrder: domain.WorkOrder{WorkOrderID: wo, ObjectiveID: "o1", DiazotrophType: diazotroph.PatchType,
			ContextSnapshotID: "snap-1", BranchName: "azolla/o1", BudgetMS: 1500, Status: domain.WorkOrderCreated},
		Snapshot:  domain.ContextSnapshot{ContextSnapshotID: "snap-1", ObjectiveID: "o1", FullPromptText: "do it"},
		Objective: domain.Objective{ObjectiveID: "o1", Title: "t", Repository: "r", Attempts: &attempts},
		Budget:    1500 * time.Millisecond,
	}
}

func candidateParams(t *testing.T, wo string, payloadK, k int) EnqueueParams {
	t.Helper()
	b, err := json.Marshal(NewCandidatePayload(candidateRequest(wo, 3), payloadK))
	require.NoError(t, err)
	return EnqueueParams{JobType: diazotroph.PatchType, Stream: testStream, Payload: b, WorkOrderID: wo,
		Candidate: k, Activity: testActivity}
}

func TestCandidatePayload_RoundTripsAndValidatesTheNumber(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(NewCandidatePayload(candidateRequest("wo-1", 3), 2))
	require.NoError(t, err)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &raw))
	require.Contains(t, raw, "candidate")
	require.NotContains(t, string(b), "activity", "nothing of Temporal's")
	p, err := DecodeJobPayload(b)
	require.NoError(t, err)
	require.NoError(t, p.Validate())
	require.Equal(t, 2, p.Candidate)
	require.Equal(t, candidateRequest("wo-1", 3), p.Request())

	// A workorder's own payload reads as candidate 0.
	own, err := json.Marshal(NewWorkPayload(candidateRequest("wo-1", 3)))
	require.NoError(t, err)
	p, err = DecodeJobPayload(own)
	require.NoError(t, err)
	require.Zero(t, p.Candidate)
	_, err = DecodeJobPayload([]byte(`{"candidate": 1, "extra": true}`))
	require.ErrorContains(t, err, "extra")

	for _, tc := range []struct{ attempts, k int }{{3, 0}, {3, 4}, {3, -1}, {1, 1}} {
		err := NewCandidatePayload(candidateRequest("wo-1", tc.attempts), tc.k).Validate()
		require.ErrorContains(t, err, "is not one of the objective's", "candidate %d of %d", tc.k, tc.attempts)
	}
}

func TestCandidateWorkResult_ValidateNamesEveryProblem(t *testing.T) {
	t.Parallel()
	ok := CandidateWorkResult{Candidate: 2, Generator: "command", RunnerStatus: domain.RunnerOK, FinishedAt: time.Now()}
	require.NoError(t, ok.Validate(2))
	err := CandidateWorkResult{Candidate: 3, Generator: "two\nlines", RunnerStatus: "MAYBE"}.Validate(2)
	require.Error(t, err)
	for _, want := range []string{"candidate 3 is not the job's (2)", `"MAYBE"`, `"two\nlines"`, "finished_at"} {
		require.Contains(t, err.Error(), want)
	}
}

func TestEnqueue_OneJobPerCandidateBesideTheWorkOrdersOwn(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		own := tb.enqueue(t, "wo-1")
		ids := map[string]bool{own.JobID: true}
		for k := 1; k <= 3; k++ {
			j, err := tb.svc.Enqueue(tb.ctx, candidateParams(t, "wo-1", k, k))
			require.NoError(t, err)
			require.Equal(t, k, j.Candidate)
			ids[j.JobID] = true
			again, err := tb.svc.Enqueue(tb.ctx, candidateParams(t, "wo-1", k, k))
			require.NoError(t, err)
			require.Equal(t, j.JobID, again.JobID, "idempotent by (workorder, candidate)")
			got, err := tb.svc.Job(tb.ctx, "wo-1", k)
			require.NoError(t, err)
			require.Equal(t, j.JobID, got.JobID)
		}
		require.Len(t, ids, 4)
		require.Len(t, tb.tr.enqueued, 4, "one message per job")
	})
}

func TestEnqueue_ACandidateJobWhosePayloadIsNotItsIsRefusedAndNothingWritten(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{}, func(t *testing.T, tb *testBundle) {
		wrongWO := candidateParams(t, "wo-1", 1, 1)
		wrongWO.WorkOrderID = "wo-2"
		noWO := candidateParams(t, "wo-1", 1, 1)
		noWO.WorkOrderID = ""
		notAPayload := candidateParams(t, "wo-1", 1, 1)
		notAPayload.Payload = json.RawMessage(`{"work_order_id":"wo-1"}`)
		for name, p := range map[string]EnqueueParams{
			"another candidate's payload": candidateParams(t, "wo-1", 2, 1),
			"out of the attempts":         candidateParams(t, "wo-1", 4, 4),
			"another workorder's payload": wrongWO,
			"no workorder":                noWO,
			"not a candidate's payload":   notAPayload,
		} {
			_, err := tb.svc.Enqueue(tb.ctx, p)
			var e *Error
			require.ErrorAs(t, err, &e, name)
			require.Equal(t, CodeInvalid, e.Code, name)
		}
		all, err := tb.st.ListJobs(tb.ctx, store.ListJobsParams{})
		require.NoError(t, err)
		require.Empty(t, all)
		require.Empty(t, tb.tr.enqueued)
	})
}

// A candidate job is gone once its candidate's record is settled (the
// selection recorded it CANCELLED): a claim skips it, a heartbeat and a
// complete are refused with activity_cancelled and write nothing, and the
// reaper dead-letters a queued one.
func TestJob_GoneOnceItsCandidateIsSettled(t *testing.T) {
	t.Parallel()
	forEachBackend(t, Config{MaxAttempts: 3}, func(t *testing.T, tb *testBundle) {
		w := storetest.Scheduled(t, tb.st, "o1")
		_, _, err := tb.st.CreateWorkOrder(tb.ctx, w)
		require.NoError(t, err)
		tb.svc = New(tb.st, tb.tr, tb.acts, tb.hooks, tb.svc.Config())
		put := func(k int, status string) {
			_, err := tb.st.PutCandidate(tb.ctx, &domain.Candidate{WorkOrderID: w.WorkOrderID, Attempt: k,
				Generator: "command", Status: status, GateResults: []domain.CandidateGateResult{},
				CreatedAt: tb.clock.Now(), UpdatedAt: tb.clock.Now()})
			require.NoError(t, err)
		}
		put(1, domain.CandidateRunning)
		put(2, domain.CandidateRunning)
		running, err := tb.svc.Enqueue(tb.ctx, candidateParams(t, w.WorkOrderID, 1, 1))
		require.NoError(t, err)
		c := tb.mustClaim(t, workerA)
		require.Equal(t, running.JobID, c.JobID)
		queued, err := tb.svc.Enqueue(tb.ctx, candidateParams(t, w.WorkOrderID, 2, 2))
		require.NoError(t, err)
		put(1, domain.CandidateCancelled)
		put(2, domain.CandidateCancelled)

		_, err = tb.svc.Heartbeat(tb.ctx, HeartbeatRequest{WorkerID: workerA, JobID: c.JobID, LeaseToken: c.LeaseToken})
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, CodeCancelled, e.Code)
		_, err = tb.svc.Complete(tb.ctx, completeOf(c, workerA, `{"candidate":1}`))
		require.ErrorAs(t, err, &e)
		require.Equal(t, CodeCancelled, e.Code)
		require.True(t, strings.Contains(e.Message, "candidate 1 of workorder") && strings.Contains(e.Message, "CANCELLED"),
			e.Message)
		require.Equal(t, domain.JobRunning, tb.job(t, running.JobID).Status, "nothing of the completion was written")
		require.Empty(t, tb.hooks.succeeded)

		require.False(t, tb.claim(t, workerB).Claimed, "the queued candidate is not started")
		_, err = NewReaper(tb.svc).RunOnce(tb.ctx)
		require.NoError(t, err)
		dj := tb.job(t, queued.JobID)
		require.Equal(t, domain.JobDeadLettered, dj.Status)
		require.Equal(t, CodeRunGone, dj.Error.Code)
		require.Equal(t, http.StatusConflict, e.Status)
	})
}
