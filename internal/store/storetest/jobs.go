package storetest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// The conformance suite of the control plane's job protocol: claims, heartbeats,
// settles and the reaper's expiry. Messages and worker tokens are in
// jobmessages.go.

// JobTTL is the lease the suite's claims take.
const JobTTL = time.Minute

// NewUUID returns a random version-4 UUID in canonical form.
func NewUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// NewLeaseToken returns 256 random bits, base64url without padding.
func NewLeaseToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Job returns a valid QUEUED job of workorder wo ("" for none) created at T0.
func Job(wo string) *domain.Job {
	return &domain.Job{JobID: NewUUID(), JobType: "PATCH_DIAZOTROPH", Stream: "azolla:jobs:patch",
		Payload: json.RawMessage(`{"work_order_id": "` + wo + `", "b": [2, 1]}`), MaxAttempts: 3,
		WorkOrderID: wo, EnqueueID: NewUUID(), CreatedAt: T0, UpdatedAt: T0}
}

// startParams claims j's current enqueue for worker at now.
func startParams(j *domain.Job, worker string, now time.Time) store.StartJobAttemptParams {
	return store.StartJobAttemptParams{JobID: j.JobID, EnqueueID: j.EnqueueID, Stream: j.Stream,
		MessageID: "00000000000000000001", WorkerID: worker, AttemptID: NewUUID(), LeaseToken: NewLeaseToken(),
		TTL: JobTTL, Now: now}
}

// settleParams settles a started attempt as SUCCEEDED at now.
func settleParams(st *store.StartedJobAttempt, now time.Time) store.SettleJobAttemptParams {
	return store.SettleJobAttemptParams{JobID: st.Job.JobID, AttemptID: st.Attempt.AttemptID,
		WorkerID: st.Lease.WorkerID, LeaseToken: st.Lease.LeaseToken, Status: domain.AttemptSucceeded,
		Result: json.RawMessage(`{"bundle": "wo-1"}`), Now: now}
}

// failParams settles a started attempt as FAILED at now, going to next.
func failParams(st *store.StartedJobAttempt, next store.JobNext, now time.Time) store.SettleJobAttemptParams {
	p := settleParams(st, now)
	p.Status, p.Result, p.Next = domain.AttemptFailed, nil, next
	p.Error = &domain.JobError{Code: "APPLY_FAILED", Message: "patch does not apply", Retryable: true}
	return p
}

// jobState is everything stored about one job.
type jobState struct {
	Job      *domain.Job
	Attempts []*domain.JobAttempt
	Leases   []*domain.JobLease
}

func loadJob(t testing.TB, s store.Store, jobID string) jobState {
	t.Helper()
	ctx := context.Background()
	j, err := s.GetJob(ctx, jobID)
	require.NoError(t, err)
	as, err := s.ListJobAttempts(ctx, jobID)
	require.NoError(t, err)
	ls, err := s.ListJobLeases(ctx, jobID)
	require.NoError(t, err)
	return jobState{j, as, ls}
}

// createJob stores a fresh job and returns it.
func createJob(t testing.TB, s store.Store, wo string) *domain.Job {
	t.Helper()
	j, created, err := s.CreateJob(context.Background(), Job(wo))
	require.NoError(t, err)
	require.True(t, created)
	return j
}

// started stores a job and claims it at T0.
func started(t testing.TB, s store.Store, wo string) *store.StartedJobAttempt {
	t.Helper()
	j := createJob(t, s, wo)
	st, err := s.StartJobAttempt(context.Background(), startParams(j, "worker-1", T0))
	require.NoError(t, err)
	return st
}

func requireStale(t testing.TB, err error) {
	t.Helper()
	var se *domain.JobStaleError
	require.ErrorAs(t, err, &se, "want a stale job, got %v", err)
	require.ErrorIs(t, err, domain.ErrJobStale)
	require.NotEmpty(t, se.Reason)
}

func requireLeaseLost(t testing.TB, err error, token string) {
	t.Helper()
	var le *domain.JobLeaseError
	require.ErrorAs(t, err, &le, "want a refused lease, got %v", err)
	require.ErrorIs(t, err, domain.ErrJobLeaseLost)
	require.NotContains(t, err.Error(), token, "the token never appears in an error")
}

func exerciseJobs(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("Job_CreateIsIdempotentByJobAndByWorkOrder", func(t *testing.T) { testCreateJob(t, open(t)) })
	t.Run("Job_InvalidRecordsRefusedNamingFieldAndNothingWritten", func(t *testing.T) { testInvalidJobRecords(t, open(t)) })
	t.Run("Job_OnePerCandidateBesideTheWorkOrdersOwn", func(t *testing.T) { testCandidateJobs(t, open(t)) })
	t.Run("Job_RacingEnqueuersOfACandidateMakeOne", func(t *testing.T) { testCandidateJobRace(t, open(t)) })
	t.Run("Job_ActivityMessageAndNotification", func(t *testing.T) { testJobNotification(t, open(t)) })
	t.Run("Claim_StartsAttemptAndLease", func(t *testing.T) { testClaim(t, open(t)) })
	t.Run("Claim_StaleJobRefusedAndNothingWritten", func(t *testing.T) { testClaimStale(t, open(t)) })
	t.Run("Claim_ConcurrentClaimsOneWins", func(t *testing.T) { testClaimRace(t, open(t)) })
	t.Run("Renew_OnlyTheLiveTokenExtends", func(t *testing.T) { testRenew(t, open(t)) })
	t.Run("Settle_SuccessInOneTransactionAndRepeatWritesNothing", func(t *testing.T) { testSettle(t, open(t)) })
	t.Run("Settle_RefusedWithoutTheLiveLease", func(t *testing.T) { testSettleRefused(t, open(t)) })
	t.Run("Settle_FailureRequeuesThenDeadLetters", func(t *testing.T) { testSettleFailure(t, open(t)) })
	t.Run("Expire_OnlyExpiredRunningAttempts", func(t *testing.T) { testExpire(t, open(t)) })
	exerciseJobMessages(t, open)
}

func testCreateJob(t *testing.T, s store.Store) {
	ctx := context.Background()
	j := Job("wo-1")
	first, created, err := s.CreateJob(ctx, j)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, domain.JobQueued, first.Status)
	require.Equal(t, T0, first.AvailableAt, "available at once by default")
	got, err := s.GetJob(ctx, j.JobID)
	require.NoError(t, err)
	require.Equal(t, first, got)
	require.JSONEq(t, `{"work_order_id": "wo-1", "b": [2, 1]}`, string(got.Payload))

	again := *j
	again.Payload = json.RawMessage(`{"other": true}`)
	stored, created, err := s.CreateJob(ctx, &again)
	require.NoError(t, err)
	require.False(t, created, "same job_id")
	require.Equal(t, first, stored)

	sameWO := Job("wo-1")
	stored, created, err = s.CreateJob(ctx, sameWO)
	require.NoError(t, err)
	require.False(t, created, "same work_order_id")
	require.Equal(t, first, stored)
	_, err = s.GetJob(ctx, sameWO.JobID)
	require.ErrorIs(t, err, domain.ErrNotFound)

	// Jobs without a workorder do not collide on the missing one.
	createJob(t, s, "")
	createJob(t, s, "")
	byWO, err := s.GetJobByWorkOrder(ctx, "wo-1")
	require.NoError(t, err)
	require.Equal(t, first, byWO)
	_, err = s.GetJobByWorkOrder(ctx, "wo-none")
	require.ErrorIs(t, err, domain.ErrNotFound)
	var nf *domain.NotFoundError
	_, err = s.GetJob(ctx, NewUUID())
	require.ErrorAs(t, err, &nf)

	running := Job("wo-2")
	running.Status = domain.JobRunning
	_, _, err = s.CreateJob(ctx, running)
	require.ErrorIs(t, err, domain.ErrInvalid, "a job is created QUEUED")

	all, err := s.ListJobs(ctx, store.ListJobsParams{})
	require.NoError(t, err)
	require.Len(t, all, 3)
	page, err := s.ListJobs(ctx, store.ListJobsParams{Status: domain.JobQueued, Limit: 2})
	require.NoError(t, err)
	require.Len(t, page, 2)
	rest, err := s.ListJobs(ctx, store.ListJobsParams{Status: domain.JobQueued,
		After: domain.Cursor{CreatedAt: page[1].CreatedAt, ID: page[1].JobID}})
	require.NoError(t, err)
	require.Len(t, rest, 1)
	require.NotContains(t, []string{page[0].JobID, page[1].JobID}, rest[0].JobID)
	one, err := s.ListJobs(ctx, store.ListJobsParams{WorkOrderID: "wo-1"})
	require.NoError(t, err)
	require.Equal(t, []*domain.Job{first}, one)
}

func testInvalidJobRecords(t *testing.T, s store.Store) {
	ctx := context.Background()
	bad := Job("wo-1")
	bad.JobID = "job-1"
	_, _, err := s.CreateJob(ctx, bad)
	requireViolation(t, err, "/job_id")
	bad = Job("wo-1")
	bad.Stream = "jobs\n"
	_, _, err = s.CreateJob(ctx, bad)
	requireViolation(t, err, "/stream")
	bad = Job("wo-1")
	bad.Payload = json.RawMessage(`[1]`)
	_, _, err = s.CreateJob(ctx, bad)
	requireViolation(t, err, "/payload")
	all, err := s.ListJobs(ctx, store.ListJobsParams{})
	require.NoError(t, err)
	require.Empty(t, all, "refused jobs write nothing")

	j := createJob(t, s, "wo-1")
	before := loadJob(t, s, j.JobID)
	p := startParams(j, "worker 1", T0)
	_, err = s.StartJobAttempt(ctx, p)
	requireViolation(t, err, "/worker_id")
	p = startParams(j, "worker-1", T0)
	p.LeaseToken = "short"
	_, err = s.StartJobAttempt(ctx, p)
	requireViolation(t, err, "/lease_token")
	p = startParams(j, "worker-1", T0)
	p.MessageID = ""
	_, err = s.StartJobAttempt(ctx, p)
	requireViolation(t, err, "/message_id")
	require.Equal(t, before, loadJob(t, s, j.JobID), "refused claims write nothing")

	st, err := s.StartJobAttempt(ctx, startParams(j, "worker-1", T0))
	require.NoError(t, err)
	before = loadJob(t, s, j.JobID)
	sp := settleParams(st, T0.Add(time.Second))
	sp.Result = json.RawMessage(`"done"`)
	_, err = s.SettleJobAttempt(ctx, sp)
	requireViolation(t, err, "/result")
	fp := failParams(st, store.JobNext{Status: domain.JobDeadLettered}, T0.Add(time.Second))
	fp.Error.Code = ""
	_, err = s.SettleJobAttempt(ctx, fp)
	requireViolation(t, err, "/error/code")
	fp = failParams(st, store.JobNext{Status: domain.JobQueued, EnqueueID: "again"}, T0.Add(time.Second))
	_, err = s.SettleJobAttempt(ctx, fp)
	requireViolation(t, err, "/enqueue_id")
	with := func(p store.SettleJobAttemptParams, f func(*store.SettleJobAttemptParams)) store.SettleJobAttemptParams {
		f(&p)
		return p
	}
	for _, p := range []store.SettleJobAttemptParams{
		failParams(st, store.JobNext{Status: domain.JobQueued, EnqueueID: j.EnqueueID}, T0),
		with(failParams(st, store.JobNext{}, T0), func(p *store.SettleJobAttemptParams) { p.Error = nil }),
		with(settleParams(st, T0), func(p *store.SettleJobAttemptParams) { p.Next.Status = domain.JobFailed }),
		with(settleParams(st, T0), func(p *store.SettleJobAttemptParams) { p.Status = domain.AttemptExpired }),
		failParams(st, store.JobNext{Status: domain.JobRunning}, T0),
		failParams(st, store.JobNext{Status: domain.JobFailed, EnqueueID: NewUUID()}, T0),
	} {
		_, err = s.SettleJobAttempt(ctx, p)
		require.ErrorIs(t, err, domain.ErrInvalid)
	}
	_, err = s.RenewJobLease(ctx, store.RenewJobLeaseParams{JobID: j.JobID, LeaseToken: st.Lease.LeaseToken, Now: T0})
	require.ErrorIs(t, err, domain.ErrInvalid, "a lease needs a positive TTL")
	require.Equal(t, before, loadJob(t, s, j.JobID), "refused settles write nothing")
}

func testJobNotification(t *testing.T, s store.Store) {
	ctx := context.Background()
	queued := createJob(t, s, "wo-queued")
	ref := domain.ActivityRef{WorkflowID: "azolla/obj-1", RunID: "", ActivityID: "7"}
	withRef, err := s.SetJobActivity(ctx, queued.JobID, ref, T0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, &ref, withRef.Activity)
	require.Equal(t, withRef, loadJob(t, s, queued.JobID).Job)
	_, err = s.SetJobActivity(ctx, NewUUID(), ref, T0)
	require.ErrorIs(t, err, domain.ErrNotFound)
	_, err = s.SetJobActivity(ctx, queued.JobID, domain.ActivityRef{WorkflowID: "w\x1b[2J", ActivityID: "7"}, T0)
	requireViolation(t, err, "/activity/workflow_id")

	changed, err := s.SetJobMessage(ctx, store.SetJobMessageParams{JobID: queued.JobID, EnqueueID: queued.EnqueueID,
		MessageID: "1763912345123-0", Now: T0.Add(2 * time.Second)})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "1763912345123-0", loadJob(t, s, queued.JobID).Job.MessageID)
	changed, err = s.SetJobMessage(ctx, store.SetJobMessageParams{JobID: queued.JobID, EnqueueID: NewUUID(), MessageID: "9-0"})
	require.NoError(t, err)
	require.False(t, changed, "another enqueue's message is not the job's")
	require.Equal(t, "1763912345123-0", loadJob(t, s, queued.JobID).Job.MessageID)
	_, err = s.SetJobMessage(ctx, store.SetJobMessageParams{JobID: NewUUID(), EnqueueID: NewUUID(), MessageID: "9-0"})
	require.ErrorIs(t, err, domain.ErrNotFound)

	// Settled with an activity: listed until notified. Settled without
	// one, or not settled: never listed.
	done := started(t, s, "wo-done")
	_, err = s.SetJobActivity(ctx, done.Job.JobID, ref, T0)
	require.NoError(t, err)
	_, err = s.SettleJobAttempt(ctx, settleParams(done, T0.Add(time.Second)))
	require.NoError(t, err)
	quiet := started(t, s, "wo-quiet")
	_, err = s.SettleJobAttempt(ctx, settleParams(quiet, T0.Add(time.Second)))
	require.NoError(t, err)
	unnotified, err := s.ListJobs(ctx, store.ListJobsParams{Unnotified: true})
	require.NoError(t, err)
	require.Len(t, unnotified, 1)
	require.Equal(t, done.Job.JobID, unnotified[0].JobID)

	requireStale(t, s.MarkJobNotified(ctx, queued.JobID, T0))
	require.Nil(t, loadJob(t, s, queued.JobID).Job.NotifiedAt)
	require.ErrorIs(t, s.MarkJobNotified(ctx, NewUUID(), T0), domain.ErrNotFound)
	require.NoError(t, s.MarkJobNotified(ctx, done.Job.JobID, T0.Add(time.Minute)))
	require.NoError(t, s.MarkJobNotified(ctx, done.Job.JobID, T0.Add(time.Hour)), "marking again is no error")
	got := loadJob(t, s, done.Job.JobID).Job
	require.Equal(t, T0.Add(time.Minute), *got.NotifiedAt, "the first mark stands")
	unnotified, err = s.ListJobs(ctx, store.ListJobsParams{Unnotified: true})
	require.NoError(t, err)
	require.Empty(t, unnotified)
}

func testClaim(t *testing.T, s store.Store) {
	ctx := context.Background()
	j := createJob(t, s, "wo-1")
	p := startParams(j, "worker-1", T0.Add(time.Second))

	// OnStart runs in the claim's transaction: its error undoes the claim
	// and the callback's own write.
	boom := errors.New("boom")
	p.OnStart = func(q store.Querier, st *store.StartedJobAttempt) error {
		require.NoError(t, q.CreateCaptureBuffer(ctx, capture("cap-start")))
		return boom
	}
	_, err := s.StartJobAttempt(ctx, p)
	require.ErrorIs(t, err, boom)
	require.Equal(t, jobState{Job: j}, loadJob(t, s, j.JobID))
	_, err = s.GetCaptureBuffer(ctx, "cap-start")
	require.ErrorIs(t, err, domain.ErrNotFound)

	var seen *store.StartedJobAttempt
	p.OnStart = func(q store.Querier, st *store.StartedJobAttempt) error {
		seen = st
		return q.CreateCaptureBuffer(ctx, capture("cap-start"))
	}
	st, err := s.StartJobAttempt(ctx, p)
	require.NoError(t, err)
	require.Same(t, st, seen)
	_, err = s.GetCaptureBuffer(ctx, "cap-start")
	require.NoError(t, err, "OnStart's write commits with the claim")

	now := T0.Add(time.Second)
	require.Equal(t, domain.JobRunning, st.Job.Status)
	require.Equal(t, 1, st.Job.AttemptCount)
	require.Equal(t, now, st.Job.UpdatedAt)
	require.Equal(t, p.MessageID, st.Job.MessageID, "a claim records a message the enqueuer had not")
	require.Equal(t, &domain.JobAttempt{AttemptID: p.AttemptID, JobID: j.JobID, WorkerID: "worker-1", AttemptNumber: 1,
		Status: domain.AttemptRunning, Stream: j.Stream, MessageID: p.MessageID, StartedAt: now}, st.Attempt)
	require.Equal(t, &domain.JobLease{JobID: j.JobID, AttemptID: p.AttemptID, WorkerID: "worker-1", LeaseToken: p.LeaseToken,
		LeaseExpiresAt: now.Add(JobTTL), HeartbeatAt: now, CreatedAt: now}, st.Lease)
	require.Equal(t, jobState{st.Job, []*domain.JobAttempt{st.Attempt}, []*domain.JobLease{st.Lease}}, loadJob(t, s, j.JobID),
		"the claim returns what it stored")
	require.True(t, st.Lease.Live(now))
}

func testClaimStale(t *testing.T, s store.Store) {
	ctx := context.Background()
	later := Job("wo-later")
	later.AvailableAt = T0.Add(time.Minute)
	later, _, err := s.CreateJob(ctx, later)
	require.NoError(t, err)
	running := started(t, s, "wo-running")
	settled := started(t, s, "wo-settled")
	_, err = s.SettleJobAttempt(ctx, settleParams(settled, T0.Add(time.Second)))
	require.NoError(t, err)
	queued := createJob(t, s, "wo-queued")

	old := startParams(queued, "worker-2", T0.Add(time.Second))
	old.EnqueueID = NewUUID()
	cases := []struct {
		name string
		job  string
		p    store.StartJobAttemptParams
	}{
		{"running job", running.Job.JobID, startParams(running.Job, "worker-2", T0.Add(time.Second))},
		{"settled job", settled.Job.JobID, startParams(settled.Job, "worker-2", T0.Add(time.Minute))},
		{"other enqueue", queued.JobID, old},
		{"before available_at", later.JobID, startParams(later, "worker-2", T0.Add(time.Minute-time.Microsecond))},
	}
	for _, tc := range cases {
		before := loadJob(t, s, tc.job)
		_, err := s.StartJobAttempt(ctx, tc.p)
		requireStale(t, err)
		require.Equal(t, before, loadJob(t, s, tc.job), "%s: nothing written", tc.name)
	}
	_, err = s.StartJobAttempt(ctx, startParams(later, "worker-2", T0.Add(time.Minute)))
	require.NoError(t, err, "available at available_at")
	_, err = s.StartJobAttempt(ctx, startParams(&domain.Job{JobID: NewUUID(), EnqueueID: NewUUID(), Stream: "s"}, "worker-2", T0))
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func testClaimRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	j := createJob(t, s, "wo-1")
	const racers = 8
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Go(func() {
			_, errs[i] = s.StartJobAttempt(ctx, startParams(j, fmt.Sprintf("worker-%d", i), T0))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		requireStale(t, err)
	}
	require.Equal(t, 1, won)
	got := loadJob(t, s, j.JobID)
	require.Len(t, got.Attempts, 1)
	require.Len(t, got.Leases, 1)
	require.Equal(t, 1, got.Job.AttemptCount)
}

func testRenew(t *testing.T, s store.Store) {
	ctx := context.Background()
	st := started(t, s, "wo-1")
	token := st.Lease.LeaseToken
	renew := func(attemptID, worker, token string, now time.Time) store.RenewJobLeaseParams {
		return store.RenewJobLeaseParams{JobID: st.Job.JobID, AttemptID: attemptID, WorkerID: worker,
			LeaseToken: token, TTL: JobTTL, Now: now}
	}

	at := T0.Add(20 * time.Second)
	l, err := s.RenewJobLease(ctx, renew(st.Attempt.AttemptID, "worker-1", token, at))
	require.NoError(t, err)
	require.Equal(t, at.Add(JobTTL), l.LeaseExpiresAt)
	require.Equal(t, at, l.HeartbeatAt)
	require.Equal(t, []*domain.JobLease{l}, loadJob(t, s, st.Job.JobID).Leases)

	at = T0.Add(40 * time.Second)
	var seenJob *domain.Job
	p := renew("", "", token, at)
	p.OnRenew = func(q store.Querier, j *domain.Job, l *domain.JobLease) error { seenJob = j; return nil }
	l, err = s.RenewJobLease(ctx, p)
	require.NoError(t, err, "no attempt id: the job's running attempt")
	require.Equal(t, st.Attempt.AttemptID, l.AttemptID)
	require.Equal(t, at.Add(JobTTL), l.LeaseExpiresAt)
	require.Equal(t, st.Job.JobID, seenJob.JobID)

	boom := errors.New("boom")
	p = renew("", "worker-1", token, at.Add(time.Second))
	p.OnRenew = func(store.Querier, *domain.Job, *domain.JobLease) error { return boom }
	before := loadJob(t, s, st.Job.JobID)
	_, err = s.RenewJobLease(ctx, p)
	require.ErrorIs(t, err, boom)
	require.Equal(t, before, loadJob(t, s, st.Job.JobID), "OnRenew's error undoes the renewal")

	wrong := NewLeaseToken()
	for _, p := range []store.RenewJobLeaseParams{
		renew(st.Attempt.AttemptID, "worker-1", wrong, at),
		renew("", "worker-1", wrong, at),
		renew(st.Attempt.AttemptID, "worker-1", "", at),
		renew(st.Attempt.AttemptID, "worker-2", token, at),
		renew(st.Attempt.AttemptID, "worker-1", token, l.LeaseExpiresAt),
		renew("", "", token, l.LeaseExpiresAt.Add(time.Hour)),
	} {
		_, err := s.RenewJobLease(ctx, p)
		requireLeaseLost(t, err, token)
		require.Equal(t, before, loadJob(t, s, st.Job.JobID), "a refused renewal changes nothing")
	}
	_, err = s.RenewJobLease(ctx, renew(NewUUID(), "worker-1", token, at))
	require.ErrorIs(t, err, domain.ErrNotFound, "unknown attempt")
	other := started(t, s, "wo-2")
	_, err = s.RenewJobLease(ctx, renew(other.Attempt.AttemptID, "worker-1", other.Lease.LeaseToken, at))
	require.ErrorIs(t, err, domain.ErrNotFound, "another job's attempt")
	p = renew("", "worker-1", token, at)
	p.JobID = NewUUID()
	_, err = s.RenewJobLease(ctx, p)
	require.ErrorIs(t, err, domain.ErrNotFound, "unknown job")

	// Released by its settle: refused, with the right token too.
	_, err = s.SettleJobAttempt(ctx, settleParams(st, at))
	require.NoError(t, err)
	for _, id := range []string{st.Attempt.AttemptID, ""} {
		_, err = s.RenewJobLease(ctx, renew(id, "worker-1", token, at.Add(time.Second)))
		requireLeaseLost(t, err, token)
	}
	queued := createJob(t, s, "wo-3")
	_, err = s.RenewJobLease(ctx, store.RenewJobLeaseParams{JobID: queued.JobID, LeaseToken: token, TTL: JobTTL, Now: at})
	requireLeaseLost(t, err, token)
}

func testSettle(t *testing.T, s store.Store) {
	ctx := context.Background()
	st := started(t, s, "wo-1")
	at := T0.Add(30 * time.Second)

	// OnSettle's error undoes the result, both statuses, the release and
	// the callback's own write.
	boom := errors.New("boom")
	p := settleParams(st, at)
	p.OnSettle = func(q store.Querier, j *domain.Job) error {
		require.NoError(t, q.CreateCaptureBuffer(ctx, capture("cap-settle")))
		return boom
	}
	before := loadJob(t, s, st.Job.JobID)
	_, err := s.SettleJobAttempt(ctx, p)
	require.ErrorIs(t, err, boom)
	require.Equal(t, before, loadJob(t, s, st.Job.JobID))
	_, err = s.GetCaptureBuffer(ctx, "cap-settle")
	require.ErrorIs(t, err, domain.ErrNotFound)

	var seen *domain.Job
	p.OnSettle = func(q store.Querier, j *domain.Job) error {
		seen = j
		return q.CreateCaptureBuffer(ctx, capture("cap-settle"))
	}
	done, err := s.SettleJobAttempt(ctx, p)
	require.NoError(t, err)
	require.False(t, done.Repeat)
	require.Same(t, done.Job, seen)
	_, err = s.GetCaptureBuffer(ctx, "cap-settle")
	require.NoError(t, err, "OnSettle's write commits with the settle")
	require.Equal(t, domain.JobSucceeded, done.Job.Status)
	require.JSONEq(t, `{"bundle": "wo-1"}`, string(done.Job.Result))
	require.Equal(t, at, done.Job.UpdatedAt)
	require.Equal(t, domain.AttemptSucceeded, done.Attempt.Status)
	require.Equal(t, domain.JobSucceeded, done.Attempt.NextStatus)
	require.Equal(t, at, *done.Attempt.FinishedAt)
	after := loadJob(t, s, st.Job.JobID)
	require.Equal(t, done.Job, after.Job)
	require.Equal(t, []*domain.JobAttempt{done.Attempt}, after.Attempts)
	require.Equal(t, at, *after.Leases[0].ReleasedAt)
	require.False(t, after.Leases[0].Live(at))

	// A repeat, even one that now says FAILED, gets the first outcome and
	// writes nothing; OnSettle does not run.
	for _, p := range []store.SettleJobAttemptParams{
		settleParams(st, at.Add(time.Minute)),
		failParams(st, store.JobNext{Status: domain.JobDeadLettered}, at.Add(time.Hour)),
	} {
		p.OnSettle = func(store.Querier, *domain.Job) error { return boom }
		again, err := s.SettleJobAttempt(ctx, p)
		require.NoError(t, err)
		require.True(t, again.Repeat)
		require.Equal(t, after.Job, again.Job)
		require.Equal(t, done.Attempt, again.Attempt)
		require.Equal(t, after, loadJob(t, s, st.Job.JobID), "a repeat writes nothing")
	}
	// The token still guards a repeat.
	p = settleParams(st, at)
	p.LeaseToken = NewLeaseToken()
	_, err = s.SettleJobAttempt(ctx, p)
	requireLeaseLost(t, err, st.Lease.LeaseToken)
}

func testSettleRefused(t *testing.T, s store.Store) {
	ctx := context.Background()
	st := started(t, s, "wo-1")
	token := st.Lease.LeaseToken
	wrongToken := settleParams(st, T0.Add(time.Second))
	wrongToken.LeaseToken = NewLeaseToken()
	wrongWorker := settleParams(st, T0.Add(time.Second))
	wrongWorker.WorkerID = "worker-2"
	before := loadJob(t, s, st.Job.JobID)
	for _, p := range []store.SettleJobAttemptParams{
		wrongToken, wrongWorker,
		settleParams(st, st.Lease.LeaseExpiresAt), // expired, not reaped yet
	} {
		_, err := s.SettleJobAttempt(ctx, p)
		requireLeaseLost(t, err, token)
		require.Equal(t, before, loadJob(t, s, st.Job.JobID), "a refused settle writes nothing")
	}
	unknown := settleParams(st, T0)
	unknown.AttemptID = NewUUID()
	_, err := s.SettleJobAttempt(ctx, unknown)
	require.ErrorIs(t, err, domain.ErrNotFound)

	// The reaper expired the attempt and requeued the job: the late
	// worker's settle is refused and the requeue stands.
	reapedAt := st.Lease.LeaseExpiresAt.Add(time.Second)
	_, err = s.ExpireJobAttempt(ctx, store.ExpireJobAttemptParams{JobID: st.Job.JobID, AttemptID: st.Attempt.AttemptID,
		Next: store.JobNext{Status: domain.JobQueued, EnqueueID: NewUUID()}, Now: reapedAt})
	require.NoError(t, err)
	reaped := loadJob(t, s, st.Job.JobID)
	for _, p := range []store.SettleJobAttemptParams{
		settleParams(st, reapedAt),
		failParams(st, store.JobNext{Status: domain.JobDeadLettered}, reapedAt),
	} {
		_, err = s.SettleJobAttempt(ctx, p)
		requireLeaseLost(t, err, token)
		require.Contains(t, err.Error(), domain.AttemptExpired)
		require.Equal(t, reaped, loadJob(t, s, st.Job.JobID))
	}
}

func testSettleFailure(t *testing.T, s store.Store) {
	ctx := context.Background()
	first := started(t, s, "wo-1")
	requeue := store.JobNext{Status: domain.JobQueued, EnqueueID: NewUUID(), AvailableAt: T0.Add(time.Minute)}
	failed, err := s.SettleJobAttempt(ctx, failParams(first, requeue, T0.Add(time.Second)))
	require.NoError(t, err)
	require.Equal(t, domain.JobQueued, failed.Job.Status)
	require.Equal(t, requeue.EnqueueID, failed.Job.EnqueueID)
	require.Equal(t, requeue.AvailableAt, failed.Job.AvailableAt)
	require.Empty(t, failed.Job.MessageID, "the new enqueue has no message yet")
	require.Equal(t, "APPLY_FAILED", failed.Job.Error.Code)
	require.Equal(t, domain.AttemptFailed, failed.Attempt.Status)
	require.Equal(t, domain.JobQueued, failed.Attempt.NextStatus)
	require.Equal(t, failed.Job, loadJob(t, s, first.Job.JobID).Job)

	// The old enqueue's message is stale; the new one waits for its time.
	_, err = s.StartJobAttempt(ctx, startParams(first.Job, "worker-2", T0.Add(time.Minute)))
	requireStale(t, err)
	_, err = s.StartJobAttempt(ctx, startParams(failed.Job, "worker-2", T0.Add(59*time.Second)))
	requireStale(t, err)
	second, err := s.StartJobAttempt(ctx, startParams(failed.Job, "worker-2", T0.Add(time.Minute)))
	require.NoError(t, err)
	require.Equal(t, 2, second.Attempt.AttemptNumber)
	require.Equal(t, 2, second.Job.AttemptCount)

	// A repeat of the first failure still answers "requeued".
	again, err := s.SettleJobAttempt(ctx, failParams(first, requeue, T0.Add(2*time.Minute)))
	require.NoError(t, err)
	require.True(t, again.Repeat)
	require.Equal(t, domain.JobQueued, again.Attempt.NextStatus)
	require.Equal(t, domain.JobRunning, again.Job.Status, "the job as it is now")

	p := failParams(second, store.JobNext{Status: domain.JobDeadLettered}, T0.Add(90*time.Second))
	p.Error.Retryable = false
	dead, err := s.SettleJobAttempt(ctx, p)
	require.NoError(t, err)
	require.Equal(t, domain.JobDeadLettered, dead.Job.Status)
	require.Equal(t, domain.JobDeadLettered, dead.Attempt.NextStatus)
	require.False(t, dead.Job.Error.Retryable)
	got := loadJob(t, s, first.Job.JobID)
	require.Len(t, got.Attempts, 2)
	for _, l := range got.Leases {
		require.NotNil(t, l.ReleasedAt, "no live lease on a settled job")
	}
	_, err = s.StartJobAttempt(ctx, startParams(dead.Job, "worker-3", T0.Add(time.Hour)))
	requireStale(t, err)
}

func testExpire(t *testing.T, s store.Store) {
	ctx := context.Background()
	st := started(t, s, "wo-1")
	other := started(t, s, "wo-2")
	_, err := s.SettleJobAttempt(ctx, settleParams(other, T0.Add(time.Second)))
	require.NoError(t, err)
	expiry := st.Lease.LeaseExpiresAt
	expire := func(now time.Time) store.ExpireJobAttemptParams {
		return store.ExpireJobAttemptParams{JobID: st.Job.JobID, AttemptID: st.Attempt.AttemptID,
			Error: &domain.JobError{Code: "LEASE_EXPIRED", Message: "no heartbeat", Retryable: true},
			Next:  store.JobNext{Status: domain.JobQueued, EnqueueID: NewUUID(), AvailableAt: now.Add(time.Second)}, Now: now}
	}

	leases, err := s.ListExpiredJobLeases(ctx, store.ExpiredJobLeasesParams{Now: expiry.Add(-time.Microsecond)})
	require.NoError(t, err)
	require.Empty(t, leases)
	before := loadJob(t, s, st.Job.JobID)
	_, err = s.ExpireJobAttempt(ctx, expire(expiry.Add(-time.Microsecond)))
	requireStale(t, err)
	require.Equal(t, before, loadJob(t, s, st.Job.JobID), "a live lease is not expired")

	leases, err = s.ListExpiredJobLeases(ctx, store.ExpiredJobLeasesParams{Now: expiry, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []*domain.JobLease{st.Lease}, leases, "expired at lease_expires_at; the settled job's lease is released")

	boom := errors.New("boom")
	p := expire(expiry)
	p.OnExpire = func(store.Querier, *domain.Job) error { return boom }
	_, err = s.ExpireJobAttempt(ctx, p)
	require.ErrorIs(t, err, boom)
	require.Equal(t, before, loadJob(t, s, st.Job.JobID), "OnExpire's error undoes the expiry")

	p = expire(expiry)
	j, err := s.ExpireJobAttempt(ctx, p)
	require.NoError(t, err)
	require.Equal(t, domain.JobQueued, j.Status)
	require.Equal(t, p.Next.EnqueueID, j.EnqueueID)
	require.Equal(t, "LEASE_EXPIRED", j.Error.Code)
	got := loadJob(t, s, st.Job.JobID)
	require.Equal(t, j, got.Job)
	require.Equal(t, domain.AttemptExpired, got.Attempts[0].Status)
	require.Equal(t, domain.JobQueued, got.Attempts[0].NextStatus)
	require.Equal(t, expiry, *got.Leases[0].ReleasedAt)
	leases, err = s.ListExpiredJobLeases(ctx, store.ExpiredJobLeasesParams{Now: expiry.Add(time.Hour)})
	require.NoError(t, err)
	require.Empty(t, leases)

	_, err = s.ExpireJobAttempt(ctx, expire(expiry.Add(time.Minute)))
	requireStale(t, err)
	_, err = s.ExpireJobAttempt(ctx, store.ExpireJobAttemptParams{JobID: other.Job.JobID, AttemptID: other.Attempt.AttemptID,
		Next: store.JobNext{Status: domain.JobDeadLettered}, Now: expiry.Add(time.Hour)})
	requireStale(t, err)
	_, err = s.ExpireJobAttempt(ctx, store.ExpireJobAttemptParams{JobID: other.Job.JobID, AttemptID: other.Attempt.AttemptID,
		Next: store.JobNext{Status: domain.JobSucceeded}, Now: expiry.Add(time.Hour)})
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.Equal(t, got, loadJob(t, s, st.Job.JobID))
}

// capture is a valid capture buffer, written by the suite's callbacks to
// see whether they committed.
func capture(id string) *domain.CaptureBuffer {
	return &domain.CaptureBuffer{CaptureBufferID: id, Source: "storetest", Content: "x",
		Status: domain.CapturePending, CreatedAt: T0, UpdatedAt: T0}
}
