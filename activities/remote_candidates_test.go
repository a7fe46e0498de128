package activities_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store"
)

// enqueuedCandidate runs candidate k remotely: outside an activity,
// RunCandidate enqueues its job and says it cannot wait for it.
func (rb *remoteBundle) enqueuedCandidate(t *testing.T, wo *activities.WorkOrderRef, k int) *domain.Job {
	t.Helper()
	ctx := context.Background()
	_, err := rb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: k})
	require.ErrorContains(t, err, "only an activity waits for it")
	j, err := rb.svc.Job(ctx, wo.WorkOrderID, k)
	require.NoError(t, err)
	require.Equal(t, k, j.Candidate)
	c, err := rb.store.GetCandidate(ctx, wo.WorkOrderID, k)
	require.NoError(t, err)
	require.Equal(t, domain.CandidateRunning, c.Status, "recorded RUNNING once its job is enqueued")
	return j
}

// candidateResult is a remote worker's result for candidate k.
func candidateResult(t *testing.T, k int, patchText string, passed ...bool) json.RawMessage {
	t.Helper()
	cost := 0.25
	r := controlplane.CandidateWorkResult{Candidate: k, Generator: "openai", RunnerStatus: domain.RunnerOK,
		Patch: patchText, Report: &domain.RunReport{CostUSD: &cost}, FinishedAt: time.Unix(2000, 0).UTC()}
	for i, p := range passed {
		r.Gate = append(r.Gate, domain.CandidateGateResult{Command: "check-" + string(rune('a'+i)), Passed: p,
			Detail: "line one\nline two"})
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return b
}

func (rb *remoteBundle) completeCandidate(t *testing.T, resp controlplane.ClaimResponse, result json.RawMessage) error {
	t.Helper()
	_, err := rb.svc.Complete(context.Background(), controlplane.CompleteRequest{WorkerID: "builder-1",
		JobID: resp.JobID, AttemptID: resp.AttemptID, LeaseToken: resp.LeaseToken, Stream: resp.Stream.Name,
		MessageID: resp.Stream.MessageID, Result: result})
	return err
}

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	var ce *controlplane.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, code, ce.Code, "%v", err)
}

func TestRunCandidateRemote_EachCandidateIsAJobOfItsOwnUnderItsOwnClaim(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		rb := setupRemote(t, tb)
		ctx := context.Background()
		f := &fakeCandidates{}
		tb.cands.Runner = f
		wo := tb.bestOfN(t, 3, nil)
		jobs := map[int]*domain.Job{}
		for k := 1; k <= 3; k++ {
			jobs[k] = rb.enqueuedCandidate(t, wo, k)
			var p controlplane.CandidatePayload
			require.NoError(t, json.Unmarshal(jobs[k].Payload, &p))
			require.NoError(t, p.Validate())
			require.Equal(t, k, p.Candidate)
			require.Equal(t, wo.WorkOrderID, p.WorkOrder.WorkOrderID)
		}
		// A retried RunCandidate finds its job: none is added.
		again := rb.enqueuedCandidate(t, wo, 2)
		require.Equal(t, jobs[2].JobID, again.JobID)
		all, err := rb.store.ListJobs(ctx, store.ListJobsParams{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Len(t, all, 3, "one job per candidate, none for the workorder")
		_, err = rb.store.GetJobByWorkOrder(ctx, wo.WorkOrderID)
		require.ErrorIs(t, err, domain.ErrNotFound)
		require.Empty(t, f.ran, "a remote candidate never runs in the worker")

		for k := 1; k <= 3; k++ {
			resp := rb.claim(t, "builder-1")
			j, err := rb.store.GetJob(ctx, resp.JobID)
			require.NoError(t, err)
			k := j.Candidate
			// The claim takes the candidate's own claim, not the workorder's.
			c, err := rb.store.GetClaim(ctx, domain.ResourceCandidate, wo.WorkOrderID+"-c"+string(rune('0'+k)))
			require.NoError(t, err)
			require.Equal(t, "remote:"+j.JobID+"/1", c.OwnerID)
			_, err = rb.store.GetClaim(ctx, domain.ResourceWorkOrder, wo.WorkOrderID)
			require.ErrorIs(t, err, domain.ErrNotFound)
			_, err = rb.svc.Heartbeat(ctx, controlplane.HeartbeatRequest{WorkerID: "builder-1", JobID: resp.JobID,
				LeaseToken: resp.LeaseToken})
			require.NoError(t, err)
			renewed, err := rb.store.GetClaim(ctx, domain.ResourceCandidate, c.ResourceID)
			require.NoError(t, err)
			require.Equal(t, c.ClaimVersion+1, renewed.ClaimVersion)

			// Another candidate's result is refused and writes nothing.
			requireCode(t, rb.completeCandidate(t, resp, candidateResult(t, k%3+1, "diff --git a/x b/x\n+x\n")),
				controlplane.CodeInvalid)
			rec, err := rb.store.GetCandidate(ctx, wo.WorkOrderID, k)
			require.NoError(t, err)
			require.Equal(t, domain.CandidateRunning, rec.Status)

			passed := []bool{k >= 2, k == 2}
			text := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+" + string(rune('0'+k)) + "\n"
			require.NoError(t, rb.completeCandidate(t, resp, candidateResult(t, k, text, passed...)))
			rec, err = rb.store.GetCandidate(ctx, wo.WorkOrderID, k)
			require.NoError(t, err)
			require.Equal(t, domain.CandidateDone, rec.Status)
			require.Equal(t, "openai", rec.Generator, "the remote worker's generator")
			require.Equal(t, text, rec.Patch)
			require.Equal(t, domain.PatchSHA256(text), rec.PatchSHA256)
			require.Equal(t, 2, *rec.DiffLines, "computed from the patch where it is recorded")
			require.Len(t, rec.GateResults, 2)
			require.Equal(t, "line one; line two", rec.GateResults[0].Detail)
			tb.requireReleased(t, domain.ResourceCandidate, c.ResourceID)

			// RunCandidate again (a retried activity) answers from the record.
			r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: k})
			require.NoError(t, err)
			require.Equal(t, domain.CandidateDone, r.Status)
			require.Equal(t, k == 2, r.PassedAll)
			out, err := activities.RemoteOutcomes{Store: rb.store}.Outcome(ctx, mustJob(t, rb, resp.JobID))
			require.NoError(t, err)
			require.NoError(t, out.Failure)
			require.Equal(t, r, out.Result, "the activity is completed with what a retry would answer")
		}

		// Delivery is local, from the recorded patch.
		run, err := tb.cands.SelectCandidate(ctx, activities.SelectInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		require.Equal(t, domain.RunnerOK, run.RunnerStatus)
		require.Equal(t, 2, f.delivered.Attempt)
		b, err := tb.store.GetOutputBundle(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+2\n", b.Content)
		sp, err := tb.store.ObjectiveSpend(ctx, "obj-1")
		require.NoError(t, err)
		require.InDelta(t, 0.75, sp.USD, 1e-9, "every remote candidate's cost counts")
		for _, j := range jobs {
			require.Equal(t, domain.JobSucceeded, mustJob(t, rb, j.JobID).Status)
		}
		_, err = tb.steps.Gate(ctx, activities.GateInput{WorkOrderID: wo.WorkOrderID})
		require.NoError(t, err)
		tb.requireAuditClean(t)
	})
}

func mustJob(t *testing.T, rb *remoteBundle, id string) *domain.Job {
	t.Helper()
	j, err := rb.store.GetJob(context.Background(), id)
	require.NoError(t, err)
	return j
}

func TestRunCandidateRemote_ADeadLetteredJobRecordsTheCandidateFailed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		rb := setupRemote(t, tb)
		ctx := context.Background()
		tb.cands.Runner = &fakeCandidates{}
		wo := tb.bestOfN(t, 2, nil)
		rb.enqueuedCandidate(t, wo, 1)
		resp := rb.claim(t, "builder-1")
		ans, err := rb.svc.Fail(ctx, controlplane.FailRequest{WorkerID: "builder-1", JobID: resp.JobID,
			AttemptID: resp.AttemptID, LeaseToken: resp.LeaseToken, Stream: resp.Stream.Name,
			MessageID: resp.Stream.MessageID, Error: domain.JobError{Code: "invalid_payload", Message: "cannot read it"}})
		require.NoError(t, err)
		require.True(t, ans.DLQ)
		tb.requireReleased(t, domain.ResourceCandidate, wo.WorkOrderID+"-c1")
		rec, err := rb.store.GetCandidate(ctx, wo.WorkOrderID, 1)
		require.NoError(t, err)
		require.Equal(t, domain.CandidateFailed, rec.Status)
		require.Contains(t, rec.Why, "DEAD_LETTERED after 1 attempt(s): invalid_payload: cannot read it")

		// The activity is told the candidate failed, as a local one's
		// failed run is: a result, not an error.
		r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 1})
		require.NoError(t, err)
		require.Equal(t, domain.CandidateFailed, r.Status)
		out, err := activities.RemoteOutcomes{Store: rb.store}.Outcome(ctx, mustJob(t, rb, resp.JobID))
		require.NoError(t, err)
		require.NoError(t, out.Failure)
		require.Equal(t, r, out.Result)
	})
}

// A candidate the workflow cancelled (another won first) is recorded
// CANCELLED by the selection; its job can no longer write anything: a
// late completion is refused, a queued job is dead-lettered unrun.
func TestRunCandidateRemote_ACancelledCandidatesJobWritesNothingMore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		rb := setupRemote(t, tb)
		ctx := context.Background()
		tb.cands.Runner = &fakeCandidates{}
		wo := tb.bestOfN(t, 3, nil)
		rb.enqueuedCandidate(t, wo, 1)
		first := rb.claim(t, "builder-1")
		require.NoError(t, rb.completeCandidate(t, first, candidateResult(t, 1, "")), "no patch")
		rb.enqueuedCandidate(t, wo, 2)
		running := rb.claim(t, "builder-1")
		queued := rb.enqueuedCandidate(t, wo, 3)

		_, err := tb.cands.SelectCandidate(ctx, activities.SelectInput{WorkOrderID: wo.WorkOrderID, EarlyStopped: true})
		require.NoError(t, err)
		for _, k := range []int{2, 3} {
			rec, err := rb.store.GetCandidate(ctx, wo.WorkOrderID, k)
			require.NoError(t, err)
			require.Equal(t, domain.CandidateCancelled, rec.Status, "candidate %d", k)
		}

		_, err = rb.svc.Heartbeat(ctx, controlplane.HeartbeatRequest{WorkerID: "builder-1", JobID: running.JobID,
			LeaseToken: running.LeaseToken})
		requireCode(t, err, controlplane.CodeCancelled)
		err = rb.completeCandidate(t, running, candidateResult(t, 2, "diff --git a/x b/x\n+late\n", true))
		requireCode(t, err, controlplane.CodeCancelled)
		rec, err := rb.store.GetCandidate(ctx, wo.WorkOrderID, 2)
		require.NoError(t, err)
		require.Equal(t, domain.CandidateCancelled, rec.Status, "a late completion overwrites nothing")
		require.Empty(t, rec.Patch)

		counts, err := controlplane.NewReaper(rb.svc).RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts.RunGone, "the queued candidate's job is dead-lettered unrun")
		dj := mustJob(t, rb, queued.JobID)
		require.Equal(t, domain.JobDeadLettered, dj.Status)
		require.Equal(t, controlplane.CodeRunGone, dj.Error.Code)
		rec, err = rb.store.GetCandidate(ctx, wo.WorkOrderID, 3)
		require.NoError(t, err)
		require.Equal(t, domain.CandidateCancelled, rec.Status, "it stays as the selection recorded it")
		r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 3})
		require.NoError(t, err)
		require.Equal(t, domain.CandidateCancelled, r.Status)
	})
}

func TestRunCandidateRemote_NotEnqueuedOnceTheBudgetIsSpent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		rb := setupRemote(t, tb)
		ctx := context.Background()
		tb.cands.Runner = &fakeCandidates{}
		budget := 0.2
		wo := tb.bestOfN(t, 2, &budget)
		rb.enqueuedCandidate(t, wo, 1)
		resp := rb.claim(t, "builder-1")
		require.NoError(t, rb.completeCandidate(t, resp, candidateResult(t, 1, "diff --git a/x b/x\n+a\n", true)))
		out, err := activities.RemoteOutcomes{Store: rb.store}.Outcome(ctx, mustJob(t, rb, resp.JobID))
		require.NoError(t, err)
		require.True(t, out.Result.(activities.CandidateResult).BudgetSpent, "its $0.25 used up the $0.20")

		r, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: 2})
		require.NoError(t, err)
		require.Equal(t, domain.CandidateSkipped, r.Status)
		_, err = rb.svc.Job(ctx, wo.WorkOrderID, 2)
		require.ErrorIs(t, err, domain.ErrNotFound, "a skipped candidate gets no job")
	})
}

func TestRunCandidateRemote_ACandidateTheWorkOrderHasNotIsRefusedAndNothingWritten(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tb *testBundle) {
		rb := setupRemote(t, tb)
		ctx := context.Background()
		tb.cands.Runner = &fakeCandidates{}
		wo := tb.bestOfN(t, 2, nil)
		for _, k := range []int{0, 3} {
			_, err := tb.cands.RunCandidate(ctx, activities.CandidateInput{WorkOrderID: wo.WorkOrderID, Attempt: k})
			requirePermanent(t, err, activities.ErrTypeInvalidCandidate)
			require.ErrorContains(t, err, "not one of the objective's 2 attempt(s)")
		}
		all, err := rb.store.ListJobs(ctx, store.ListJobsParams{})
		require.NoError(t, err)
		require.Empty(t, all)
		cs, err := rb.store.ListCandidates(ctx, wo.WorkOrderID)
		require.NoError(t, err)
		require.Empty(t, cs)
	})
}
