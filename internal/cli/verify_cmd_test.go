package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/audit"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream/redistest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlite"
	"github.com/azolla/azolla/internal/store/storetest"
)

// verify runs `azolla verify args...` with env.
func verify(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	return azolla(t, env, append([]string{"verify"}, args...)...)
}

// migratedStore migrates a store in a new data dir and opens it for the
// test to fill; the returned env points azolla at it.
func migratedStore(t *testing.T) (store.Store, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"AZOLLA_DATA_DIR": dir}
	res := azolla(t, env, "migrate")
	require.Equal(t, 0, res.code, res.stderr)
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, "azolla.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, env
}

// executedAt is when executed runs its workorder.
var executedAt = storetest.T0.Add(time.Minute)

// executed writes objective id through scheduling and a run whose output
// bundle is b (its workorder id and time filled in), and returns the
// workorder, EXECUTED and waiting for the gate, with the objective
// IN_PROGRESS.
func executed(t *testing.T, s store.Store, id string, b domain.OutputBundle) *domain.WorkOrder {
	t.Helper()
	ctx, at := context.Background(), executedAt
	wo := storetest.Scheduled(t, s, id)
	for _, to := range []domain.Status{domain.StatusTodo, domain.StatusInProgress} {
		_, err := s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: id, To: to, Now: at})
		require.NoError(t, err)
	}
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	_, err = s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: wo.EventID, Reason: domain.ReasonScheduled, Now: at})
	require.NoError(t, err)
	b.WorkOrderID, b.CreatedAt = wo.WorkOrderID, at
	_, _, err = s.CreateOutputBundle(ctx, &b)
	require.NoError(t, err)
	_, _, err = s.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: wo.WorkOrderID, Now: at})
	require.NoError(t, err)
	return wo
}

// passedObjective writes objective id through the lifecycle to a PASS.
func passedObjective(t *testing.T, s store.Store, id string) {
	t.Helper()
	ctx, at := context.Background(), executedAt
	wo := executed(t, s, id, domain.OutputBundle{Title: "Fix", Content: "diff --git a/x b/x\n", RunnerStatus: domain.RunnerOK})
	_, err := s.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: id,
		GateResult: domain.GatePass, GateReason: "checked", CreatedAt: at, UpdatedAt: at})
	require.NoError(t, err)
	_, err = s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: id, To: domain.StatusDone, Now: at})
	require.NoError(t, err)
	require.NoError(t, s.CreatePauseState(ctx, &domain.PauseState{PauseStateID: "ps-" + id, ObjectiveID: id,
		WorkOrderID: wo.WorkOrderID, Reason: domain.PauseRunComplete, PrioritizedActions: []string{"Review"}, CreatedAt: at}))
}

// doneWithoutVerdict writes an objective DONE that no gate passed.
func doneWithoutVerdict(t *testing.T, s store.Store, id string) {
	t.Helper()
	require.NoError(t, s.CreateObjective(context.Background(), storetest.Objective(id)))
	_, err := s.TransitionObjective(context.Background(), store.TransitionObjectiveParams{ObjectiveID: id, To: domain.StatusDone})
	require.NoError(t, err)
}

func TestVerifyCleanStorePrintsTheSummaryAndExitsZero(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	passedObjective(t, s, "obj-1")
	res := verify(t, env)
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, fmt.Sprintf(`^verify: %d rules, \d+ items checked, 0 violations\n$`, len(audit.Rules())), res.stdout)
	require.Empty(t, res.stderr)
}

func TestVerifyPrintsEachViolationOnALineAndExitsOne(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	passedObjective(t, s, "obj-1")
	doneWithoutVerdict(t, s, "obj-2")
	doneWithoutVerdict(t, s, "obj-3")
	res := verify(t, env)
	require.Equal(t, 1, res.code, res.stderr)
	require.Regexp(t, regexp.MustCompile(`^`+
		`objective-status  objective obj-2  is DONE without a PASS run_record for any of its workorders\n`+
		`objective-status  objective obj-3  is DONE without a PASS run_record for any of its workorders\n`+
		`verify: \d+ rules, \d+ items checked, 2 violations\n$`), res.stdout)
	require.Equal(t, "azolla: verify found 2 violations\n", res.stderr)
}

func TestVerifyJSONMirrorsTheReport(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	passedObjective(t, s, "obj-1")
	doneWithoutVerdict(t, s, "obj-2")
	res := verify(t, env, "--output", "json")
	require.Equal(t, 1, res.code, res.stderr)
	var rep audit.Report
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rep), res.stdout)
	want, err := audit.Run(t.Context(), s, time.Time{}, audit.WithMessages(audit.StoreMessages{Store: s}))
	require.NoError(t, err)
	require.Equal(t, *want, rep)
	require.Equal(t, []audit.Violation{{Rule: audit.RuleObjectiveStatus, Resource: "objective obj-2",
		Message: "is DONE without a PASS run_record for any of its workorders"}}, rep.Violations)
	require.Equal(t, "azolla: verify found 1 violation\n", res.stderr)
}

func TestVerifyGraceSparesAClaimHeartbeatingNow(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	passedObjective(t, s, "obj-1")
	// A worker that wrote the terminal state and has not yet released.
	_, ok, err := s.AcquireClaim(t.Context(), store.AcquireClaimParams{ResourceType: domain.ResourceEvent,
		ResourceID: "ev-obj-1", OwnerID: "w1", TTL: time.Hour})
	require.NoError(t, err)
	require.True(t, ok)

	res := verify(t, env)
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stdout, "no-live-claim-on-finished  claim EVENT ev-obj-1  is live (owner w1")

	res = verify(t, env, "--grace", "10m")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "0 violations")
}

func TestVerifyWithoutAStoreSaysToMigrateAndCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	res := verify(t, map[string]string{"AZOLLA_DATA_DIR": dir})
	require.Equal(t, 1, res.code)
	require.Equal(t, "azolla: no sqlite store at "+filepath.Join(dir, "azolla.db")+"; run 'azolla migrate' to create it\n", res.stderr)
	require.NoDirExists(t, dir)
}

func TestVerifyRefusesBadFlagsAndConfigWithStatusTwo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unknown output", nil, []string{"--output", "yaml"}, `--output must be "text" or "json", got "yaml"`},
		{"negative grace", nil, []string{"--grace", "-1s"}, "--grace must not be negative, got -1s"},
		{"bad grace", nil, []string{"--grace", "soon"}, `invalid argument "soon" for "--grace" flag`},
		{"invalid config", map[string]string{"AZOLLA_STORE_DRIVER": "postgres"}, nil, `store.dsn: required when store.driver is "postgres"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"AZOLLA_DATA_DIR": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			res := verify(t, env, tt.args...)
			require.Equal(t, 2, res.code, res.stderr)
			require.Contains(t, res.stderr, tt.want)
		})
	}
}

// runningJob writes a job claimed from the database transport: RUNNING,
// its message pending.
func runningJob(t *testing.T, s store.Store, jobID string) *store.StartedJobAttempt {
	t.Helper()
	ctx, at := t.Context(), time.Now().Add(-time.Second)
	enqueue := "00000000-0000-4000-9000-000000000001"
	_, _, err := s.CreateJob(ctx, &domain.Job{JobID: jobID, JobType: "PATCH_DIAZOTROPH", Stream: "patch",
		Payload: []byte(`{}`), MaxAttempts: 3, EnqueueID: enqueue, CreatedAt: at, UpdatedAt: at})
	require.NoError(t, err)
	_, err = s.EnqueueJobMessage(ctx, &domain.JobMessage{Stream: "patch", JobID: jobID, EnqueueID: enqueue, CreatedAt: at})
	require.NoError(t, err)
	m, err := s.ReceiveJobMessage(ctx, store.ReceiveJobMessageParams{Streams: []string{"patch"}, Consumer: "cp", Now: at})
	require.NoError(t, err)
	require.NotNil(t, m)
	st, err := s.StartJobAttempt(ctx, store.StartJobAttemptParams{JobID: jobID, EnqueueID: enqueue, Stream: m.Stream,
		MessageID: m.MessageID, WorkerID: "remote-1", AttemptID: "00000000-0000-4000-a000-000000000001",
		LeaseToken: "tok0000000000000000000000000000000000000001", TTL: time.Hour, Now: at})
	require.NoError(t, err)
	return st
}

// Without Redis configured, verify asks the database transport: a RUNNING
// job's message acknowledged before its job settled is reported.
func TestVerifyAsksTheDatabaseTransportAboutRunningJobs(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	id := "00000000-0000-4000-8000-000000000001"
	st := runningJob(t, s, id)
	res := verify(t, env)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.NotContains(t, res.stdout, "skipped")

	require.NoError(t, s.AckJobMessage(t.Context(), st.Attempt.Stream, st.Attempt.MessageID))
	res = verify(t, env)
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stdout, audit.RuleJobMessagePending+"  job "+id+"  is RUNNING, but message "+st.Attempt.MessageID)
}

// With control_plane.redis_url set, verify needs Redis: the database's
// messages say nothing of the jobs then.
func TestVerifyWithRedisConfiguredNeedsRedis(t *testing.T) {
	t.Parallel()
	_, env := migratedStore(t)
	env["AZOLLA_CONTROL_PLANE_REDIS_URL"] = "redis://:hunter2@127.0.0.1:1/0" // nothing listens there
	res := verify(t, env)
	require.Equal(t, exitUnavailable, res.code, res.stdout+res.stderr)
	require.Empty(t, res.stdout)
	require.Contains(t, res.stderr, "azolla: verify: open the control plane's Redis transport: ")
	require.NotContains(t, res.stderr, "hunter2", "the URL's password is never printed")
}

// With Redis configured, verify asks Redis: a RUNNING job's message pending
// in its consumer group is fine, one acknowledged before the job settled is
// reported.
func TestVerifyAsksRedisAboutRunningJobs(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	ctx := t.Context()
	// The transport verify opens: default key prefix and group.
	tr, err := redisstream.New(ctx, redisstream.Options{URL: url, LeaseTTL: time.Minute})
	require.NoError(t, err)
	defer tr.Close()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	stream := "verify_test_" + hex.EncodeToString(b)
	t.Cleanup(func() { tr.Client().Del(context.Background(), tr.Key(stream)) })

	s, env := migratedStore(t)
	env["AZOLLA_CONTROL_PLANE_REDIS_URL"] = url
	id, enqueue, at := "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-9000-000000000001", time.Now()
	_, _, err = s.CreateJob(ctx, &domain.Job{JobID: id, JobType: "PATCH_DIAZOTROPH", Stream: stream,
		Payload: []byte(`{}`), MaxAttempts: 3, EnqueueID: enqueue, CreatedAt: at, UpdatedAt: at})
	require.NoError(t, err)
	_, err = tr.Enqueue(ctx, stream, id, enqueue)
	require.NoError(t, err)
	m, err := tr.Receive(ctx, "cp", []string{stream}, 0)
	require.NoError(t, err)
	require.NotNil(t, m)
	_, err = s.StartJobAttempt(ctx, store.StartJobAttemptParams{JobID: id, EnqueueID: enqueue, Stream: m.Stream,
		MessageID: m.MessageID, WorkerID: "remote-1", AttemptID: "00000000-0000-4000-a000-000000000001",
		LeaseToken: "tok0000000000000000000000000000000000000001", TTL: time.Hour, Now: at})
	require.NoError(t, err)

	res := verify(t, env)
	require.Equal(t, 0, res.code, res.stdout+res.stderr)
	require.NotContains(t, res.stdout, "skipped")

	require.NoError(t, tr.Ack(ctx, m.Stream, m.MessageID))
	res = verify(t, env)
	require.Equal(t, 1, res.code, res.stderr)
	require.Contains(t, res.stdout, audit.RuleJobMessagePending+"  job "+id+"  is RUNNING, but message "+m.MessageID+
		" of stream "+stream)
}
