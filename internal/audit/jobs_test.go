package audit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
)

// The job fixtures: job n has id jobID(n) and a stream of its own, so that
// receiving from it takes its message and no other.
const (
	jobSucceeded = 1 // claimed, completed, message acknowledged
	jobRunning   = 2 // claimed an instant before the audit, lease live
	jobQueued    = 3 // enqueued, never claimed
	jobDead      = 4 // failed for good: DEAD_LETTERED
	jobRequeued  = 5 // lease expired, attempt EXPIRED, requeued, claimed again
)

func jobID(n int) string     { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
func enqueueID(n int) string { return fmt.Sprintf("00000000-0000-4000-9000-%012d", n) }
func attemptID(n, try int) string {
	return fmt.Sprintf("00000000-0000-4000-a%03d-%012d", try, n)
}
func leaseToken(n, try int) string { return fmt.Sprintf("tok%040d", n*10+try) }
func jobStream(n int) string       { return fmt.Sprintf("jobs-%d", n) }

// enqueueJob writes job n QUEUED with its message in the database
// transport, as the control plane's Enqueue does.
func enqueueJob(t *testing.T, s store.Store, n int, enqueue string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	if enqueue == enqueueID(n) {
		_, created, err := s.CreateJob(ctx, &domain.Job{JobID: jobID(n), JobType: "PATCH_DIAZOTROPH", Stream: jobStream(n),
			Payload: []byte(`{}`), MaxAttempts: 2, EnqueueID: enqueue, CreatedAt: at, UpdatedAt: at})
		require.NoError(t, err)
		require.True(t, created)
	}
	m, err := s.EnqueueJobMessage(ctx, &domain.JobMessage{Stream: jobStream(n), JobID: jobID(n), EnqueueID: enqueue, CreatedAt: at})
	require.NoError(t, err)
	_, err = s.SetJobMessage(ctx, store.SetJobMessageParams{JobID: jobID(n), EnqueueID: enqueue, MessageID: m.MessageID, Now: at})
	require.NoError(t, err)
}

// claimJob receives job n's message and starts attempt try under a
// one-minute lease, as the claim handler does.
func claimJob(t *testing.T, s store.Store, n, try int, enqueue string, at time.Time) *store.StartedJobAttempt {
	t.Helper()
	ctx := context.Background()
	m, err := s.ReceiveJobMessage(ctx, store.ReceiveJobMessageParams{Streams: []string{jobStream(n)}, Consumer: "cp-1", Now: at})
	require.NoError(t, err)
	require.NotNil(t, m)
	st, err := s.StartJobAttempt(ctx, store.StartJobAttemptParams{JobID: jobID(n), EnqueueID: enqueue, Stream: m.Stream,
		MessageID: m.MessageID, WorkerID: "remote-1", AttemptID: attemptID(n, try), LeaseToken: leaseToken(n, try),
		TTL: time.Minute, Now: at})
	require.NoError(t, err)
	return st
}

// settleJob closes attempt try with status and the job's next status, then
// acknowledges the message: the commit first, the acknowledgement after.
func settleJob(t *testing.T, s store.Store, st *store.StartedJobAttempt, status string, next store.JobNext, at time.Time) {
	t.Helper()
	ctx := context.Background()
	p := store.SettleJobAttemptParams{JobID: st.Job.JobID, AttemptID: st.Attempt.AttemptID, LeaseToken: st.Lease.LeaseToken,
		Status: status, Next: next, Now: at}
	if status == domain.AttemptSucceeded {
		p.Result = []byte(`{}`)
	} else {
		p.Error = &domain.JobError{Code: "RUN_FAILED", Message: "it broke", Retryable: next.Status == domain.JobQueued}
	}
	_, err := s.SettleJobAttempt(ctx, p)
	require.NoError(t, err)
	require.NoError(t, s.AckJobMessage(ctx, st.Attempt.Stream, st.Attempt.MessageID))
}

// jobsEveryState leaves one job in each state the control plane leaves
// them in, all of them consistent.
func jobsEveryState(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	at := T0.Add(time.Minute)

	enqueueJob(t, s, jobSucceeded, enqueueID(jobSucceeded), at)
	settleJob(t, s, claimJob(t, s, jobSucceeded, 1, enqueueID(jobSucceeded), at), domain.AttemptSucceeded, store.JobNext{}, at)

	enqueueJob(t, s, jobRunning, enqueueID(jobRunning), at)
	claimJob(t, s, jobRunning, 1, enqueueID(jobRunning), now.Add(-10*time.Second))

	enqueueJob(t, s, jobQueued, enqueueID(jobQueued), at)

	enqueueJob(t, s, jobDead, enqueueID(jobDead), at)
	settleJob(t, s, claimJob(t, s, jobDead, 1, enqueueID(jobDead), at), domain.AttemptFailed,
		store.JobNext{Status: domain.JobDeadLettered}, at)

	// The reaper's repair: the first attempt's lease lapsed, so it is
	// EXPIRED and the job requeued under a new enqueue; a second worker
	// holds it now.
	enqueueJob(t, s, jobRequeued, enqueueID(jobRequeued), at)
	first := claimJob(t, s, jobRequeued, 1, enqueueID(jobRequeued), at)
	again := enqueueID(100 + jobRequeued)
	_, err := s.ExpireJobAttempt(ctx, store.ExpireJobAttemptParams{JobID: first.Job.JobID, AttemptID: first.Attempt.AttemptID,
		Error: &domain.JobError{Code: "LEASE_EXPIRED", Message: "no heartbeat", Retryable: true},
		Next:  store.JobNext{Status: domain.JobQueued, EnqueueID: again}, Now: at.Add(2 * time.Minute)})
	require.NoError(t, err)
	require.NoError(t, s.AckJobMessage(ctx, first.Attempt.Stream, first.Attempt.MessageID))
	enqueueJob(t, s, jobRequeued, again, at.Add(2*time.Minute))
	claimJob(t, s, jobRequeued, 2, again, now.Add(-5*time.Second))
}

// withStoreMessages is the audit option verify gives on the database
// transport.
func withStoreMessages(s store.Store) audit.Option {
	return audit.WithMessages(audit.StoreMessages{Store: s})
}

var jobRules = []string{audit.RuleJobOneOpenAttempt, audit.RuleJobSucceededOnce, audit.RuleJobNoLiveLeaseWhenSettled,
	audit.RuleJobMessagePending, audit.RuleJobSchema}

func TestRun_JobsInEveryStateReportNothing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
		jobsEveryState(t, s)
		rep := audited(t, s, withStoreMessages(s))
		require.Empty(t, rep.Violations)
		require.Empty(t, rep.Skipped)
		for _, rule := range []string{audit.RuleJobOneOpenAttempt, audit.RuleJobSucceededOnce, audit.RuleJobNoLiveLeaseWhenSettled} {
			require.Equal(t, 5, rep.Checked[rule], "rule %s: one item per job", rule)
		}
		require.Equal(t, 2, rep.Checked[audit.RuleJobMessagePending], "one item per RUNNING attempt")
		require.Equal(t, 5+5+5, rep.Checked[audit.RuleJobSchema], "5 jobs, 5 attempts, 5 leases")
	})
}

func TestRun_JobRulesRunAfterTheOthers(t *testing.T) {
	t.Parallel()
	all := audit.Rules()
	require.Equal(t, jobRules, all[len(all)-len(jobRules):])
}

// Each case starts from jobsEveryState and breaks one guarantee, with raw
// SQL: the store refuses every one of these states.
func TestRun_ReportsEachBrokenJobGuarantee(t *testing.T) {
	t.Parallel()
	type want struct{ rule, resource string }
	job := func(n int) string { return "job " + jobID(n) }
	tests := []struct {
		name    string
		corrupt func(t *testing.T, s *sqlstore.Store)
		want    []want
	}{
		// job-one-open-attempt
		{"two RUNNING attempts", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `DROP INDEX job_attempts_one_running`)
			insertAttempt(t, s, jobRunning, 2, domain.AttemptRunning)
		}, []want{{audit.RuleJobOneOpenAttempt, job(jobRunning)}}},
		{"RUNNING job without a RUNNING attempt", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE job_attempts SET status = 'EXPIRED', finished_at = $1, next_status = 'QUEUED' WHERE job_id = $2`,
				s.EncodeTime(now), jobID(jobRunning))
		}, []want{{audit.RuleJobOneOpenAttempt, job(jobRunning)}}},
		{"QUEUED job with a RUNNING attempt", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE jobs SET status = 'QUEUED' WHERE job_id = $1`, jobID(jobRunning))
		}, []want{{audit.RuleJobOneOpenAttempt, job(jobRunning)}}},

		// job-succeeded-once
		{"SUCCEEDED job without a SUCCEEDED attempt", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE job_attempts SET status = 'FAILED' WHERE job_id = $1`, jobID(jobSucceeded))
		}, []want{{audit.RuleJobSucceededOnce, job(jobSucceeded)}}},
		{"SUCCEEDED job with two SUCCEEDED attempts", func(t *testing.T, s *sqlstore.Store) {
			insertAttempt(t, s, jobSucceeded, 2, domain.AttemptSucceeded)
		}, []want{{audit.RuleJobSucceededOnce, job(jobSucceeded)}}},
		{"DEAD_LETTERED job with a SUCCEEDED attempt", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE job_attempts SET status = 'SUCCEEDED' WHERE job_id = $1`, jobID(jobDead))
		}, []want{{audit.RuleJobSucceededOnce, job(jobDead)}}},

		// job-no-live-lease-when-settled
		{"live lease on a SUCCEEDED job", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE job_leases SET released_at = NULL, lease_expires_at = $1 WHERE job_id = $2`,
				s.EncodeTime(now.Add(time.Minute)), jobID(jobSucceeded))
		}, []want{{audit.RuleJobNoLiveLeaseWhenSettled, job(jobSucceeded)}}},
		{"two live leases on a RUNNING job", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE job_leases SET released_at = NULL, lease_expires_at = $1 WHERE job_id = $2`,
				s.EncodeTime(now.Add(time.Minute)), jobID(jobRequeued))
		}, []want{{audit.RuleJobNoLiveLeaseWhenSettled, job(jobRequeued)}}},
		{"live lease of a closed attempt on a QUEUED job", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE jobs SET status = 'QUEUED' WHERE job_id = $1`, jobID(jobRequeued))
			raw(t, s, `UPDATE job_attempts SET status = 'EXPIRED', finished_at = $1, next_status = 'QUEUED' WHERE job_id = $2`,
				s.EncodeTime(now), jobID(jobRequeued))
		}, []want{{audit.RuleJobNoLiveLeaseWhenSettled, job(jobRequeued)}}},

		// job-message-pending-while-running
		{"message of a RUNNING attempt acknowledged", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `DELETE FROM job_messages WHERE job_id = $1`, jobID(jobRunning))
		}, []want{{audit.RuleJobMessagePending, job(jobRunning)}}},
		{"message of a RUNNING attempt back to undelivered", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE job_messages SET delivered_at = NULL, consumer = NULL WHERE job_id = $1`, jobID(jobRequeued))
		}, []want{{audit.RuleJobMessagePending, job(jobRequeued)}}},

		// job-schema
		{"job with an empty job_type", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE jobs SET job_type = '' WHERE job_id = $1`, jobID(jobQueued))
		}, []want{{audit.RuleJobSchema, job(jobQueued)}}},
		{"attempt whose worker has whitespace", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE job_attempts SET worker_id = 'two words' WHERE attempt_id = $1`, attemptID(jobDead, 1))
		}, []want{{audit.RuleJobSchema, "job_attempt " + attemptID(jobDead, 1)}}},
		{"lease with a short token", func(t *testing.T, s *sqlstore.Store) {
			raw(t, s, `UPDATE job_leases SET lease_token = 'short-secret' WHERE attempt_id = $1`, attemptID(jobSucceeded, 1))
		}, []want{{audit.RuleJobSchema, "job_lease " + attemptID(jobSucceeded, 1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, s *sqlstore.Store) {
				jobsEveryState(t, s)
				require.Empty(t, audited(t, s, withStoreMessages(s)).Violations, "the starting point is consistent")
				tt.corrupt(t, s)
				rep := audited(t, s, withStoreMessages(s))
				for _, w := range tt.want {
					requireReported(t, rep, w.rule, w.resource)
				}
			})
		})
	}
}

func TestRun_WithoutTransportSkipsTheMessageRuleAndSaysSo(t *testing.T) {
	t.Parallel()
	s := storetest.NewSQLite(t)
	jobsEveryState(t, s)
	raw(t, s, `DELETE FROM job_messages WHERE job_id = $1`, jobID(jobRunning))
	rep := audited(t, s)
	require.Empty(t, rep.Violations)
	require.Equal(t, []string{"job-message-pending-while-running: no transport given"}, rep.Skipped)
	require.Zero(t, rep.Checked[audit.RuleJobMessagePending])
	require.Contains(t, rep.Checked, audit.RuleJobMessagePending)
}

// fakeMessages answers every State with state, after running before (if
// set), and records what it was asked.
type fakeMessages struct {
	state  controlplane.MessageState
	err    error
	before func()
	asked  []string
}

func (f *fakeMessages) State(_ context.Context, stream, messageID string) (controlplane.MessageState, error) {
	f.asked = append(f.asked, stream+"/"+messageID)
	if f.before != nil {
		f.before()
	}
	return f.state, f.err
}

func TestRun_MessageRuleAsksTheTransportAboutEachRunningAttempt(t *testing.T) {
	t.Parallel()
	s := storetest.NewSQLite(t)
	jobsEveryState(t, s)
	running, err := s.ListJobAttempts(context.Background(), jobID(jobRunning))
	require.NoError(t, err)

	pending := &fakeMessages{state: controlplane.MessageState{Exists: true, Pending: true}}
	require.Empty(t, audited(t, s, audit.WithMessages(pending)).Violations)
	require.Len(t, pending.asked, 2)
	require.Contains(t, pending.asked, running[0].Stream+"/"+running[0].MessageID)

	unpending := &fakeMessages{state: controlplane.MessageState{Exists: true}}
	rep := audited(t, s, audit.WithMessages(unpending))
	requireReported(t, rep, audit.RuleJobMessagePending, "job "+jobID(jobRunning))
	requireReported(t, rep, audit.RuleJobMessagePending, "job "+jobID(jobRequeued))
	require.Len(t, rep.Violations, 2)
	require.Contains(t, rep.Violations[0].Message, "not pending")

	gone := &fakeMessages{}
	rep = audited(t, s, audit.WithMessages(gone))
	require.Len(t, rep.Violations, 2)
	require.Contains(t, rep.Violations[0].Message, "gone from the transport")
}

// A settle commits, then acknowledges: a job settled between the audit's
// read of it and its read of the transport is not reported.
func TestRun_MessageRuleSparesAJobSettledMeanwhile(t *testing.T) {
	t.Parallel()
	s := storetest.NewSQLite(t)
	jobsEveryState(t, s)
	ctx := context.Background()
	settled := false
	m := &fakeMessages{before: func() {
		if settled {
			return
		}
		settled = true
		for _, n := range []int{jobRunning, jobRequeued} {
			as, err := s.ListJobAttempts(ctx, jobID(n))
			require.NoError(t, err)
			a := as[len(as)-1]
			_, err = s.SettleJobAttempt(ctx, store.SettleJobAttemptParams{JobID: a.JobID, AttemptID: a.AttemptID,
				LeaseToken: leaseToken(n, a.AttemptNumber), Status: domain.AttemptSucceeded, Result: []byte(`{}`), Now: now})
			require.NoError(t, err)
			require.NoError(t, s.AckJobMessage(ctx, a.Stream, a.MessageID))
		}
	}}
	rep := audited(t, s, audit.WithMessages(m))
	require.Empty(t, rep.Violations)
	require.Len(t, m.asked, 2, "both RUNNING attempts were asked about before the re-read")
}

func TestRun_TransportErrorFailsTheAudit(t *testing.T) {
	t.Parallel()
	s := storetest.NewSQLite(t)
	jobsEveryState(t, s)
	boom := errors.New("redis: connection refused")
	_, err := audit.Run(context.Background(), s, now, audit.WithMessages(&fakeMessages{err: boom}))
	require.ErrorIs(t, err, boom)
}

func TestStoreMessages_StateOfTheDatabaseTransport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewSQLite(t)
	m := audit.StoreMessages{Store: s}
	enqueueJob(t, s, 1, enqueueID(1), T0)
	j, err := s.GetJob(ctx, jobID(1))
	require.NoError(t, err)

	st, err := m.State(ctx, jobStream(1), j.MessageID)
	require.NoError(t, err)
	require.Equal(t, controlplane.MessageState{Exists: true}, st, "written, not delivered")

	claimJob(t, s, 1, 1, enqueueID(1), T0)
	st, err = m.State(ctx, jobStream(1), j.MessageID)
	require.NoError(t, err)
	require.Equal(t, controlplane.MessageState{Exists: true, Pending: true}, st)

	require.NoError(t, s.AckJobMessage(ctx, jobStream(1), j.MessageID))
	st, err = m.State(ctx, jobStream(1), j.MessageID)
	require.NoError(t, err)
	require.Equal(t, controlplane.MessageState{}, st, "acknowledged")
}

// A Querier that offers no jobs gets the other rules and says what it
// skipped.
func TestRun_QuerierWithoutJobsSkipsTheJobRules(t *testing.T) {
	t.Parallel()
	s := storetest.NewSQLite(t)
	jobsEveryState(t, s)
	rep := audited(t, struct{ store.Querier }{s})
	require.Contains(t, rep.Skipped, "job rules: the store offers no jobs (store.JobStore)")
	for _, rule := range jobRules {
		require.Zero(t, rep.Checked[rule], rule)
	}
}

// insertAttempt writes attempt try of job n with status, bypassing the
// store, claimed from the job's current message.
func insertAttempt(t *testing.T, s *sqlstore.Store, n, try int, status string) {
	t.Helper()
	finished, next := any(nil), any(nil)
	if status != domain.AttemptRunning {
		finished, next = s.EncodeTime(now), domain.JobSucceeded
	}
	raw(t, s, `INSERT INTO job_attempts (attempt_id, job_id, worker_id, attempt_number, status, stream, message_id,
		started_at, finished_at, next_status) VALUES ($1, $2, 'remote-2', $3, $4, $5, '99', $6, $7, $8)`,
		attemptID(n, try), jobID(n), try, status, jobStream(n), s.EncodeTime(now.Add(-time.Second)), finished, next)
}
