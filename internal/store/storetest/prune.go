package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// ExercisePruneFinished is the conformance suite of store retention
// (store.PruneFinishedParams): what only served a finished step goes once
// its use ended before the cutoff, and everything else stays. That the
// audit (`azolla verify`) is as clean after a pass as before is
// internal/audit's test, on WritePruneFixture.
func ExercisePruneFinished(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("PruneFinished_OnlyEndedUsesOfFinishedStepsGoAndVerifyStaysClean", func(t *testing.T) { testPruneFinished(t, open(t)) })
	t.Run("PruneFinished_WithoutCutoffRefused", func(t *testing.T) {
		_, err := open(t).PruneFinished(context.Background(), store.PruneFinishedParams{})
		require.Error(t, err)
	})
}

// pruneCutoff is the suite's retention cutoff: T0's lifecycle ended before
// it, the "recent" one after.
var pruneCutoff = T0.Add(time.Hour)

// claimed takes and, unless keep, releases a claim on (typ, id) at at.
func claimed(t testing.TB, s store.Querier, typ, id string, at time.Time, keep bool) {
	t.Helper()
	ctx := context.Background()
	c, ok, err := s.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: typ, ResourceID: id,
		OwnerID: "worker-1:" + id, TTL: time.Minute, Now: at})
	require.NoError(t, err)
	require.True(t, ok)
	if keep {
		return
	}
	_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: typ, ResourceID: id, OwnerID: c.OwnerID,
		ClaimVersion: c.ClaimVersion, Now: at.Add(30 * time.Second)})
	require.NoError(t, err)
}

// finishedLifecycle writes objective id through DONE at at, as the
// lifecycle does, with its event, workorder and candidate claims released.
func finishedLifecycle(t testing.TB, s store.Querier, id string, at time.Time) *domain.WorkOrder {
	t.Helper()
	ctx := context.Background()
	wo := PassedOn(t, s, id, "", at)
	_, err := s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: wo.EventID, Reason: domain.ReasonScheduled, Now: at})
	require.NoError(t, err)
	c := Candidate(wo.WorkOrderID, 1, 2)
	c.Patch = "diff --git a/x b/x\n"
	_, err = s.PutCandidate(ctx, c)
	require.NoError(t, err)
	_, err = s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: wo.WorkOrderID, Attempt: 1, Why: "passed", Now: at})
	require.NoError(t, err)
	claimed(t, s, domain.ResourceEvent, wo.EventID, at, false)
	claimed(t, s, domain.ResourceWorkOrder, wo.WorkOrderID, at, false)
	claimed(t, s, domain.ResourceCandidate, wo.WorkOrderID+"-c1", at, false)
	return wo
}

// settledJob stores a job of wo, claims it and settles it SUCCEEDED at at,
// and leaves a duplicate message of it behind.
func settledJob(t testing.TB, s store.Store, wo string, at time.Time) *domain.Job {
	t.Helper()
	ctx := context.Background()
	j := Job(wo)
	j.CreatedAt, j.UpdatedAt = at, at
	j, _, err := s.CreateJob(ctx, j)
	require.NoError(t, err)
	st, err := s.StartJobAttempt(ctx, startParams(j, "worker-1", at))
	require.NoError(t, err)
	_, err = s.SettleJobAttempt(ctx, settleParams(st, at.Add(time.Second)))
	require.NoError(t, err)
	_, err = s.EnqueueJobMessage(ctx, &domain.JobMessage{Stream: j.Stream, JobID: j.JobID, EnqueueID: j.EnqueueID, CreatedAt: at})
	require.NoError(t, err)
	return j
}

// PruneFixture is what WritePruneFixture stored: work finished before
// Cutoff (Old, OldJob), work finished after it (Recent, RecentJob), and
// work not finished (Open, a workorder without its run_record; Waiting,
// an unprocessed event; Running, a job with its lease and message), all
// lapsed by Now.
type PruneFixture struct {
	Old, Recent, Open          *domain.WorkOrder
	Waiting                    *domain.Event
	OldJob, RecentJob, Running *domain.Job
	RunningMsg                 *domain.JobMessage
	Cutoff, Now                time.Time
}

// WritePruneFixture stores PruneFixture's work; a pass with Before Cutoff
// deletes 3 claims, 1 job lease and 1 job message of it.
func WritePruneFixture(t testing.TB, s store.Store) PruneFixture {
	t.Helper()
	ctx := context.Background()
	// Finished before the cutoff: its step claims and job lease go.
	old := finishedLifecycle(t, s, "obj-old", T0)
	oldJob := settledJob(t, s, old.WorkOrderID, T0)
	// Finished after it: kept until a later pass.
	recent := finishedLifecycle(t, s, "obj-recent", pruneCutoff.Add(time.Hour))
	recentJob := settledJob(t, s, recent.WorkOrderID, pruneCutoff.Add(time.Hour))
	// Not finished: an event not yet processed and a workorder without its
	// run_record keep their lapsed claims, as does a running job its lease
	// and message.
	open := ScheduledObjective(t, s, Objective("obj-open"), T0)
	_, _, err := s.CreateWorkOrder(ctx, open)
	require.NoError(t, err)
	_, err = s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: open.EventID, Reason: domain.ReasonScheduled, Now: T0})
	require.NoError(t, err)
	claimed(t, s, domain.ResourceWorkOrder, open.WorkOrderID, T0, false)
	require.NoError(t, s.CreateObjective(ctx, Objective("obj-wait")))
	waiting, _, err := s.EmitEvent(ctx, Event("ev-obj-wait", "obj-wait", 1, T0))
	require.NoError(t, err)
	claimed(t, s, domain.ResourceEvent, waiting.EventID, T0, true)
	running := Job(open.WorkOrderID)
	running.Stream = "azolla:jobs:running" // apart from the settled jobs' leftovers
	running, _, err = s.CreateJob(ctx, running)
	require.NoError(t, err)
	_, err = s.EnqueueJobMessage(ctx, &domain.JobMessage{Stream: running.Stream, JobID: running.JobID,
		EnqueueID: running.EnqueueID, CreatedAt: T0})
	require.NoError(t, err)
	// The worker's claim delivers the message it starts the attempt from.
	runningMsg := receive(t, s, "worker-2", 0, T0, running.Stream)
	require.Equal(t, running.JobID, runningMsg.JobID)
	start := startParams(running, "worker-2", T0)
	start.MessageID = runningMsg.MessageID
	_, err = s.StartJobAttempt(ctx, start)
	require.NoError(t, err)
	// Leadership claims are one row each, whatever the work: kept.
	claimed(t, s, domain.ResourcePoller, domain.PollerLeadership, T0, false)

	return PruneFixture{Old: old, Recent: recent, Open: open, Waiting: waiting, OldJob: oldJob, RecentJob: recentJob,
		Running: running, RunningMsg: runningMsg, Cutoff: pruneCutoff, Now: pruneCutoff.Add(3 * time.Hour)}
}

func testPruneFinished(t *testing.T, s store.Store) {
	ctx := context.Background()
	f := WritePruneFixture(t, s)
	recent, open, waiting := f.Recent, f.Open, f.Waiting

	counts, err := s.PruneFinished(ctx, store.PruneFinishedParams{Before: f.Cutoff, Batch: 1})
	require.NoError(t, err)
	require.Equal(t, store.PruneFinishedCounts{Claims: 3, JobLeases: 1, JobMessages: 1}, counts)

	claims, err := s.ListClaims(ctx, store.ListClaimsParams{})
	require.NoError(t, err)
	left := map[string]bool{}
	for _, c := range claims {
		left[c.ResourceType+" "+c.ResourceID] = true
	}
	require.Equal(t, map[string]bool{
		"EVENT " + recent.EventID: true, "WORKORDER " + recent.WorkOrderID: true, "CANDIDATE " + recent.WorkOrderID + "-c1": true,
		"EVENT " + waiting.EventID: true, "WORKORDER " + open.WorkOrderID: true,
		"POLLER " + domain.PollerLeadership: true,
	}, left)

	leases, err := s.ListJobLeases(ctx, f.OldJob.JobID)
	require.NoError(t, err)
	require.Empty(t, leases, "the settled job's lease is gone")
	attempts, err := s.ListJobAttempts(ctx, f.OldJob.JobID)
	require.NoError(t, err)
	require.Len(t, attempts, 1, "its winning attempt stays: job-succeeded-once reads it")
	for _, j := range []*domain.Job{f.RecentJob, f.Running} {
		leases, err := s.ListJobLeases(ctx, j.JobID)
		require.NoError(t, err)
		require.Len(t, leases, 1, "job %s keeps its lease", j.JobID)
	}
	_, err = s.GetJobMessage(ctx, f.RunningMsg.Stream, f.RunningMsg.MessageID)
	require.NoError(t, err, "the running job's message stays")

	again, err := s.PruneFinished(ctx, store.PruneFinishedParams{Before: f.Cutoff})
	require.NoError(t, err)
	require.Zero(t, again.Total(), "a second pass finds nothing")
	later, err := s.PruneFinished(ctx, store.PruneFinishedParams{Before: f.Now})
	require.NoError(t, err)
	require.Equal(t, store.PruneFinishedCounts{Claims: 3, JobLeases: 1, JobMessages: 1}, later,
		"the recent lifecycle's claims, lease and message once they are old too, and never the open work's")
}
