package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// CandidateJob returns a valid QUEUED job of candidate k of workorder wo.
func CandidateJob(wo string, k int) *domain.Job {
	j := Job(wo)
	j.Candidate = k
	return j
}

// testCandidateJobs: a workorder has at most one job of its own and one per
// candidate, and the two kinds do not collide (docs/remote-workers.md).
func testCandidateJobs(t *testing.T, s store.Store) {
	ctx := context.Background()
	own := createJob(t, s, "wo-1")
	var cands []*domain.Job
	for k := 1; k <= 3; k++ {
		c, created, err := s.CreateJob(ctx, CandidateJob("wo-1", k))
		require.NoError(t, err)
		require.True(t, created, "candidate %d has a job of its own beside the workorder's", k)
		require.Equal(t, k, c.Candidate)
		cands = append(cands, c)
	}

	again, created, err := s.CreateJob(ctx, CandidateJob("wo-1", 2))
	require.NoError(t, err)
	require.False(t, created, "same (workorder, candidate)")
	require.Equal(t, cands[1], again)
	sameWO, created, err := s.CreateJob(ctx, Job("wo-1"))
	require.NoError(t, err)
	require.False(t, created, "the workorder's own job is still unique")
	require.Equal(t, own, sameWO)

	byWO, err := s.GetJobByWorkOrder(ctx, "wo-1")
	require.NoError(t, err)
	require.Equal(t, own, byWO, "the workorder's own job, not a candidate's")
	got, err := s.GetCandidateJob(ctx, "wo-1", 3)
	require.NoError(t, err)
	require.Equal(t, cands[2], got)
	_, err = s.GetCandidateJob(ctx, "wo-1", 4)
	require.ErrorIs(t, err, domain.ErrNotFound)
	_, err = s.GetCandidateJob(ctx, "wo-2", 1)
	require.ErrorIs(t, err, domain.ErrNotFound)
	all, err := s.ListJobs(ctx, store.ListJobsParams{WorkOrderID: "wo-1"})
	require.NoError(t, err)
	require.Len(t, all, 4)

	// A candidate's job without its workorder, or with a number out of
	// range, is refused and writes nothing.
	for _, bad := range []*domain.Job{CandidateJob("", 1), CandidateJob("wo-3", 21), CandidateJob("wo-3", -1)} {
		_, _, err := s.CreateJob(ctx, bad)
		var ve *schemas.ValidationError
		require.ErrorAs(t, err, &ve, "candidate %d of %q", bad.Candidate, bad.WorkOrderID)
		require.Contains(t, err.Error(), "candidate")
	}
	all, err = s.ListJobs(ctx, store.ListJobsParams{})
	require.NoError(t, err)
	require.Len(t, all, 4)

	// A settled candidate's job reads back with its number.
	st, err := s.StartJobAttempt(ctx, startParams(cands[0], "worker-1", T0))
	require.NoError(t, err)
	require.Equal(t, 1, st.Job.Candidate)
	res, err := s.SettleJobAttempt(ctx, settleParams(st, T0))
	require.NoError(t, err)
	require.Equal(t, domain.JobSucceeded, res.Job.Status)
	require.Equal(t, 1, res.Job.Candidate)
}

// testCandidateJobRace: enqueuers racing for one candidate make one job.
func testCandidateJobRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	const racers = 8
	ids := make([]string, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			j, _, err := s.CreateJob(ctx, CandidateJob("wo-1", 2))
			if err == nil {
				ids[i] = j.JobID
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		require.Equal(t, ids[0], id, "every racer gets the one job")
	}
	require.NotEmpty(t, ids[0])
	all, err := s.ListJobs(ctx, store.ListJobsParams{})
	require.NoError(t, err)
	require.Len(t, all, 1)
}
