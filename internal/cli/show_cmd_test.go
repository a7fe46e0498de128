package cli

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

const (
	showJobID = "00000000-0000-4000-8000-000000000007"
	// showToken is the lease token of both attempts; show never prints it.
	showToken = "secretLeaseTokenxxxxxxxxxxxxxxxxxxxxxxxxxxx"
)

// remoteRetried gives objective id's workorder a job whose first attempt
// failed and was requeued and whose second attempt, by worker remote-2,
// runs now under a live lease.
func remoteRetried(t *testing.T, s store.Store, id string) (first, second time.Time) {
	t.Helper()
	ctx := t.Context()
	wo := executed(t, s, id, domain.OutputBundle{Title: "Fix", Content: "diff --git a/x b/x\n", RunnerStatus: domain.RunnerOK})
	first, second = time.Now().Add(-time.Hour).UTC().Truncate(time.Second), time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	_, created, err := s.CreateJob(ctx, &domain.Job{JobID: showJobID, JobType: "PATCH_DIAZOTROPH", Stream: "patch",
		Payload: []byte(`{}`), MaxAttempts: 3, WorkOrderID: wo.WorkOrderID, EnqueueID: "00000000-0000-4000-9000-000000000001",
		CreatedAt: first, UpdatedAt: first})
	require.NoError(t, err)
	require.True(t, created)
	claim := func(try int, enqueue, worker string, at time.Time) *store.StartedJobAttempt {
		m, err := s.EnqueueJobMessage(ctx, &domain.JobMessage{Stream: "patch", JobID: showJobID, EnqueueID: enqueue, CreatedAt: at})
		require.NoError(t, err)
		st, err := s.StartJobAttempt(ctx, store.StartJobAttemptParams{JobID: showJobID, EnqueueID: enqueue, Stream: "patch",
			MessageID: m.MessageID, WorkerID: worker, AttemptID: fmt.Sprintf("00000000-0000-4000-a000-%012d", try),
			LeaseToken: showToken, TTL: time.Hour, Now: at})
		require.NoError(t, err)
		return st
	}
	st := claim(1, "00000000-0000-4000-9000-000000000001", "remote-1", first)
	_, err = s.SettleJobAttempt(ctx, store.SettleJobAttemptParams{JobID: showJobID, AttemptID: st.Attempt.AttemptID,
		LeaseToken: showToken, Status: domain.AttemptFailed,
		Error: &domain.JobError{Code: "GATE_TIMEOUT", Message: "the diazotroph ran out of time", Retryable: true},
		Next:  store.JobNext{Status: domain.JobQueued, EnqueueID: "00000000-0000-4000-9000-000000000002"}, Now: first.Add(time.Minute)})
	require.NoError(t, err)
	claim(2, "00000000-0000-4000-9000-000000000002", "remote-2", second)
	return first, second
}

func TestObjectiveShow_PrintsTheJobItsAttemptsAndLeases(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	first, second := remoteRetried(t, s, "obj-1")

	res := azolla(t, env, "objective", "show", "obj-1")
	require.Equal(t, 0, res.code, res.stderr)
	rfc := func(t time.Time) string { return t.Format(time.RFC3339) }
	require.Contains(t, res.stdout, "\n  job       "+showJobID+"  RUNNING  stream patch  attempts 2/3\n"+
		"  error     GATE_TIMEOUT  the diazotroph ran out of time\n"+
		"  attempt   1  remote-1  FAILED  started "+rfc(first)+", finished "+rfc(first.Add(time.Minute))+"\n"+
		"    lease   remote-1  expires "+rfc(first.Add(time.Hour))+"  released "+rfc(first.Add(time.Minute))+"\n"+
		"  attempt   2  remote-2  RUNNING  started "+rfc(second)+"\n"+
		"    lease   remote-2  expires "+rfc(second.Add(time.Hour))+"  live\n")
	require.NotContains(t, res.stdout, showToken)

	res = azolla(t, env, "objective", "show", "obj-1", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stdout, showToken)
	require.NotContains(t, res.stdout, "lease_token")
	var d objectiveDetail
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &d))
	require.Len(t, d.Jobs, 1)
	require.Equal(t, showJobID, d.Jobs[0].Job.JobID)
	require.Equal(t, "wo-obj-1", d.Jobs[0].Job.WorkOrderID)
	require.Len(t, d.Jobs[0].Attempts, 2)
	require.Len(t, d.Jobs[0].Leases, 2)
	require.NotNil(t, d.Jobs[0].Leases[0].ReleasedAt)
	require.Nil(t, d.Jobs[0].Leases[1].ReleasedAt)
	require.Equal(t, "remote-2", d.Jobs[0].Leases[1].WorkerID)
}

func TestObjectiveShow_WithoutAJobPrintsNoneAndAnEmptyList(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	passedObjective(t, s, "obj-1")

	res := azolla(t, env, "objective", "show", "obj-1")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stdout, "  job ")

	res = azolla(t, env, "objective", "show", "obj-1", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, `"jobs": []`)
}

// Job rows written past the schema are still printed on safe lines.
func TestObjectiveShow_RendersHostileJobRowsVisibly(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	remoteRetried(t, s, "obj-1")
	errJSON, err := json.Marshal(domain.JobError{Code: "X" + hostile, Message: "line one\n" + hostile})
	require.NoError(t, err)
	rawSQL(t, env, "UPDATE jobs SET error = ?, stream = ? WHERE job_id = ?", string(errJSON), "s"+hostile, showJobID)
	rawSQL(t, env, "UPDATE job_attempts SET worker_id = ? WHERE attempt_number = 2", "w"+hostile)
	rawSQL(t, env, "UPDATE job_leases SET worker_id = ? WHERE released_at IS NULL", "w"+hostile)

	res := azolla(t, env, "objective", "show", "obj-1")
	require.Equal(t, 0, res.code, res.stderr)
	requireNoRawControls(t, res.stdout)
	require.Contains(t, res.stdout, "RUNNING  stream s"+escapedHostile+"  attempts 2/3\n")
	require.Contains(t, res.stdout, "  error     X"+escapedHostile+`  line one\x0a`+escapedHostile+"\n")
	require.Contains(t, res.stdout, "  attempt   2  w"+escapedHostile+"  RUNNING")
	require.Contains(t, res.stdout, "    lease   w"+escapedHostile+"  expires")
}

// A best-of-N workorder that ran remotely has a job per candidate: each is
// printed under the workorder with its number, in candidate order.
func TestObjectiveShow_PrintsEachCandidatesJob(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	wo := executed(t, s, "obj-1", domain.OutputBundle{Title: "Fix", Content: "diff --git a/x b/x\n", RunnerStatus: domain.RunnerOK})
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	for _, k := range []int{2, 1} {
		_, created, err := s.CreateJob(t.Context(), &domain.Job{JobID: fmt.Sprintf("00000000-0000-4000-b000-%012d", k),
			JobType: "PATCH_DIAZOTROPH", Stream: "patch", Payload: []byte(`{}`), MaxAttempts: 3, WorkOrderID: wo.WorkOrderID,
			Candidate: k, EnqueueID: fmt.Sprintf("00000000-0000-4000-9000-%012d", k), CreatedAt: at, UpdatedAt: at})
		require.NoError(t, err)
		require.True(t, created)
	}

	res := azolla(t, env, "objective", "show", "obj-1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "\n  job       00000000-0000-4000-b000-000000000001  QUEUED  candidate 1  stream patch  attempts 0/3\n"+
		"  job       00000000-0000-4000-b000-000000000002  QUEUED  candidate 2  stream patch  attempts 0/3\n")

	res = azolla(t, env, "objective", "show", "obj-1", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var d objectiveDetail
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &d))
	require.Len(t, d.Jobs, 2)
	require.Equal(t, 1, d.Jobs[0].Job.Candidate)
	require.Equal(t, 2, d.Jobs[1].Job.Candidate)
}

func TestObjectiveShow_NamesTheIssueAndTheLastCommand(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	it, o := storetest.IntakeObjective(12, "widgets-12")
	_, _, err := store.TakeIntake(t.Context(), s, it, o, nil, storetest.T0)
	require.NoError(t, err)
	_, err = s.RecordForgeCommand(t.Context(), &domain.ForgeCommand{Source: it.Source, CommentID: "4077",
		ObjectiveID: "widgets-12", Thread: "issue #12", Command: domain.CommandApprove, Author: "ana", Trusted: true,
		TrustReason: "write access to acme/widgets", Result: "approve: emitted ev-1", CreatedAt: storetest.T0})
	require.NoError(t, err)

	res := azolla(t, env, "objective", "show", "widgets-12")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "from        https://git.example.com/acme/widgets/issues/12 by ana\n")
	require.Contains(t, res.stdout, "command     /azolla approve by ana on issue #12: approve: emitted ev-1\n")

	res = azolla(t, env, "objective", "show", "widgets-12", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var d struct {
		Intake   domain.IntakeItem      `json:"intake"`
		Commands []*domain.ForgeCommand `json:"forge_commands"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &d))
	require.Equal(t, "12", d.Intake.ExternalID)
	require.Len(t, d.Commands, 1)
}

func TestObjectiveShow_ListsPartialWork(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	executed(t, s, "obj-partial", domain.OutputBundle{Title: "out of time", Notes: "budget of 5s exhausted",
		RunnerStatus: domain.RunnerBudgetExhausted, Metadata: domain.BundleMetadata{Partial: &domain.PartialWork{
			Ref: "refs/azolla/obj-partial/partial/wo-obj-partial-1", CommitSHA: "0123456789abcdef0123456789abcdef01234567",
			Files: []string{"x.go", "x_test.go"}, FilesChanged: 2, Bytes: 512}}})
	res := azolla(t, env, "objective", "show", "obj-partial")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "  partial   2 file(s), 512 bytes of diff: commit 0123456789abcdef0123456789abcdef01234567 "+
		"on refs/azolla/obj-partial/partial/wo-obj-partial-1 (x.go, x_test.go)\n")
}
