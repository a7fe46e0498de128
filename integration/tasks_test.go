package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/internal/lifecycle/deadline"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workers"
	"github.com/azolla/azolla/workflows"
)

// The task-management tests (docs/protocol/tasks.md). Each test has its own track (the
// TrackWorkflow id is track-<name>, shared by the whole namespace) and its
// own deadlines task queue, so no other test's worker runs its monitor.

// setupTasks is setup with a track and a deadlines task queue of the
// test's own, in the in-process worker's configuration and in the
// environment of the azolla processes the test runs.
func setupTasks(t *testing.T, o setupOptions) *bundle {
	t.Helper()
	track, queue := "it-"+randomHex(4), "it-deadlines-"+randomHex(6)
	inner := o.configure
	o.configure = func(c *config.Config) {
		c.Tasks.Track, c.Deadlines.TaskQueue = track, queue
		if inner != nil {
			inner(c)
		}
	}
	b := setup(t, o)
	b.env = append(b.env, "AZOLLA_TASKS_TRACK="+track, "AZOLLA_DEADLINES_TASK_QUEUE="+queue)
	return b
}

// azolla runs the azolla binary in the test's world and returns its stdout,
// its stderr and its exit code.
func (b *bundle) azolla(t *testing.T, args ...string) (string, string, int) {
	cmd := exec.Command(azollaBin, args...)
	cmd.Env = b.workerEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Errorf("azolla %s: %v", strings.Join(args, " "), err)
		code = -1
	}
	return stdout.String(), stderr.String(), code
}

// holdTrack takes the track's TRACK claim as nobody's event: the scheduler
// of the track's next event waits (retrying) until release is called.
func (b *bundle) holdTrack(t *testing.T) (release func()) {
	t.Helper()
	return b.holdClaim(t, domain.ResourceTrack, domain.TrackResource(b.cfg.Tasks.Track))
}

// holdClaim takes a claim on the resource for the test, for ten minutes;
// release gives it up.
func (b *bundle) holdClaim(t *testing.T, resourceType, resourceID string) (release func()) {
	t.Helper()
	ctx := context.Background()
	c, ok, err := b.store.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: resourceType, ResourceID: resourceID,
		OwnerID: "it-holder", TTL: 10 * time.Minute, Now: time.Now()})
	require.NoError(t, err)
	require.True(t, ok, "claim %s %s is free", resourceType, resourceID)
	return func() {
		_, err := b.store.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: resourceType, ResourceID: resourceID,
			OwnerID: "it-holder", ClaimVersion: c.ClaimVersion, Now: time.Now()})
		require.NoError(t, err)
	}
}

// addCapture stores a PENDING capture with its CAPTURE_READY event, as
// `azolla capture add` does, without handing the event to the track.
func (b *bundle) addCapture(t *testing.T, content string) (captureID, eventID string) {
	t.Helper()
	id := "cap-it-" + randomHex(6)
	ev, err := storeCapture(context.Background(), b.store, id, "integration", content)
	require.NoError(t, err)
	return id, ev.EventID
}

// storeCapture stores PENDING capture id with its CAPTURE_READY event in
// one transaction, as `azolla capture add` does before it hands the event
// to the track.
func storeCapture(ctx context.Context, st store.Store, id, source, content string) (*domain.Event, error) {
	now := store.NowOr(time.Time{})
	cb := &domain.CaptureBuffer{CaptureBufferID: id, Source: source, Content: content,
		Status: domain.CapturePending, CreatedAt: now, UpdatedAt: now}
	var ev *domain.Event
	err := st.InTx(ctx, func(q store.Querier) error {
		if err := q.CreateCaptureBuffer(ctx, cb); err != nil {
			return err
		}
		var err error
		ev, _, err = store.EmitCaptureReady(ctx, q, cb.CaptureBufferID, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("add capture %s: %w", id, err)
	}
	return ev, nil
}

// waitTrackEvents waits until every event is processed and every
// workorder of the track has its run record; it returns the events and the
// track's workorders, oldest first.
func (b *bundle) waitTrackEvents(t *testing.T, eventIDs []string) (map[string]*domain.Event, []*domain.WorkOrder) {
	t.Helper()
	ctx := context.Background()
	events := map[string]*domain.Event{}
	var wos []*domain.WorkOrder
	require.Eventually(t, func() bool {
		for _, id := range eventIDs {
			ev, err := b.store.GetEvent(ctx, id)
			if err != nil || !ev.Processed {
				return false
			}
			events[id] = ev
		}
		var err error
		if wos, err = b.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{Track: b.cfg.Tasks.Track}); err != nil {
			return false
		}
		for _, w := range wos {
			if _, err := b.store.GetRunRecord(ctx, w.WorkOrderID); err != nil {
				return false
			}
		}
		return true
	}, 3*time.Minute, 100*time.Millisecond, "the track never processed its %d events", len(eventIDs))
	slices.SortFunc(wos, func(x, y *domain.WorkOrder) int {
		return x.CreatedAt.Compare(y.CreatedAt)
	})
	return events, wos
}

// requireOneWorkOrderPerScheduledEvent checks that the track's workorders
// are exactly one per SCHEDULED event, each with its one PASS run record.
func (b *bundle) requireOneWorkOrderPerScheduledEvent(t *testing.T, events map[string]*domain.Event, wos []*domain.WorkOrder) {
	t.Helper()
	ctx := context.Background()
	byEvent := map[string]int{}
	for _, w := range wos {
		byEvent[w.EventID]++
		rr, err := b.store.GetRunRecord(ctx, w.WorkOrderID)
		require.NoError(t, err)
		require.Equal(t, domain.GatePass, rr.GateResult, "%s %s: %s", w.DiazotrophType, w.WorkOrderID, rr.GateReason)
	}
	scheduled := 0
	for id, ev := range events {
		if ev.ProcessedReason == domain.ReasonScheduled {
			scheduled++
			require.Equal(t, 1, byEvent[id], "workorders of SCHEDULED event %s", id)
		} else {
			require.Zero(t, byEvent[id], "workorders of %s event %s", ev.ProcessedReason, id)
		}
	}
	require.Len(t, wos, scheduled, "one workorder per SCHEDULED event, and no other")
}

// requireCapturesTriaged checks that every capture is PROCESSED by a
// triage workorder of the track into one NEW objective of its own, and
// returns those objectives' ids.
func (b *bundle) requireCapturesTriaged(t *testing.T, n int) []string {
	t.Helper()
	ctx := context.Background()
	captures, err := b.store.ListCaptureBuffers(ctx, store.ListCaptureBuffersParams{})
	require.NoError(t, err)
	require.Len(t, captures, n)
	var ids []string
	for _, c := range captures {
		require.Equal(t, domain.CaptureProcessed, c.Status, "capture %s", c.CaptureBufferID)
		w, err := b.store.GetWorkOrder(ctx, c.WorkOrderID)
		require.NoError(t, err, "capture %s", c.CaptureBufferID)
		require.Equal(t, triage.Type, w.DiazotrophType)
		require.Len(t, c.ObjectiveIDs, 1, "capture %s yields one proposal", c.CaptureBufferID)
		ids = append(ids, c.ObjectiveIDs...)
	}
	objectives, err := b.store.ListObjectives(ctx, store.ListObjectivesParams{})
	require.NoError(t, err)
	var got []string
	for _, o := range objectives {
		require.Equal(t, domain.StatusNew, o.Status, "objective %s", o.ObjectiveID)
		got = append(got, o.ObjectiveID)
	}
	require.ElementsMatch(t, ids, got, "one objective per capture, and no other")
	return ids
}

// Twenty captures and three manifest requests arrive at once, through the
// command line, while the track is held (its TRACK claim taken by the
// test), so all of them wait in the track together. Once it is let go, the
// track runs the event it had already picked, then triage before any other
// manifest: one triage round takes every capture, the other capture events
// are ALREADY_TAKEN, and never are two workorders active together.
func TestTrack_ConcurrentCapturesAndManifestsAreSerializedTriageFirst(t *testing.T) {
	t.Parallel()
	const nCaptures, nManifests = 20, 3
	b := setupTasks(t, setupOptions{})
	ctx := context.Background()
	release := b.holdTrack(t)

	var wg sync.WaitGroup
	for i := range nCaptures + nManifests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"manifest", "request", "--scope", fmt.Sprintf("week %d", i)}
			if i < nCaptures {
				args = []string{"capture", "add", fmt.Sprintf("Fix the flaky release check number %d", i)}
			}
			out, errOut, code := b.azolla(t, args...)
			if code != 0 || strings.TrimSpace(out) == "" {
				t.Errorf("azolla %s: exit %d: %s%s", strings.Join(args, " "), code, out, errOut)
			} else if errOut != "" {
				// Handed over by the poller then: still right.
				t.Logf("azolla %s: %s", strings.Join(args, " "), errOut)
			}
		}()
	}
	wg.Wait()
	require.False(t, t.Failed())

	// Every event waits in the track, one of them picked (its scheduler
	// waits for the track's claim).
	var held workflows.TrackState
	require.Eventually(t, func() bool {
		var err error
		held, err = b.starter.TrackState(ctx, b.cfg.Tasks.Track)
		return err == nil && held.Active != nil &&
			1+len(held.WaitingTriage)+len(held.WaitingManifest) == nCaptures+nManifests
	}, 90*time.Second, 100*time.Millisecond, "the track never held every event (last %+v)", &held)
	first := *held.Active
	t.Logf("the track picked %s %s before it was let go", first.EventType, first.EventID)
	eventIDs := append(append([]string{first.EventID}, held.WaitingTriage...), held.WaitingManifest...)
	release()

	events, wos := b.waitTrackEvents(t, eventIDs)
	var scheduledCaptures int
	for id, ev := range events {
		switch ev.EventType {
		case domain.EventCaptureReady:
			require.Contains(t, []string{domain.ReasonScheduled, domain.ReasonAlreadyTaken}, ev.ProcessedReason, "event %s", id)
			if ev.ProcessedReason == domain.ReasonScheduled {
				scheduledCaptures++
			}
		case domain.EventManifestRequested:
			require.Equal(t, domain.ReasonScheduled, ev.ProcessedReason, "event %s", id)
		default:
			t.Fatalf("event %s is a %s", id, ev.EventType)
		}
	}
	require.Equal(t, 1, scheduledCaptures, "one triage round takes all %d captures", nCaptures)
	b.requireOneWorkOrderPerScheduledEvent(t, events, wos)

	// Triage first: after the event picked before the track was let go,
	// the triage ran before every manifest that waited with it.
	var order []string
	for _, w := range wos {
		order = append(order, w.DiazotrophType)
	}
	want := []string{triage.Type, manifest.Type, manifest.Type, manifest.Type}
	if first.EventType == domain.EventManifestRequested {
		want = []string{manifest.Type, triage.Type, manifest.Type, manifest.Type}
	}
	require.Equal(t, want, order, "workorders by creation (the track had picked %s %s)", first.EventType, first.EventID)
	require.Equal(t, "wo-"+first.EventID, wos[0].WorkOrderID, "the picked event ran first")

	ids := b.requireCapturesTriaged(t, nCaptures)
	for _, id := range ids {
		b.waitStep(t, id, workflows.StepAwaitingApproval)
	}
	b.requireAuditClean(t)
	out, errOut, code := b.azolla(t, "verify")
	require.Equal(t, 0, code, "azolla verify: %s%s", out, errOut)
	require.Contains(t, out, "0 violations")
	b.recordTrackHistory(t, "track")
}

// A worker process is SIGKILLed while a triage workorder is active: the
// workorder is scheduled, its captures taken, and its Run waits between
// attempts (the test holds the workorder's claim, as another runner
// would). A second worker takes the track over: each capture is processed
// once, into one objective, and each workorder has one run record.
func TestTrack_WorkerKilledMidTriageDuplicatesNothing(t *testing.T) {
	t.Parallel()
	const nCaptures = 20
	b := setupTasks(t, setupOptions{noWorker: true, configure: func(c *config.Config) { c.Tasks.TriageMaxCaptures = 5 }})
	b.env = append(b.env, "AZOLLA_TASKS_TRIAGE_MAX_CAPTURES=5")
	ctx := context.Background()
	var eventIDs []string
	var releases []func()
	for i := range nCaptures {
		_, ev := b.addCapture(t, fmt.Sprintf("Review the on-call handbook, part %d", i))
		eventIDs = append(eventIDs, ev)
		// A triage workorder is wo-<event id>: its Run cannot take it.
		releases = append(releases, b.holdClaim(t, domain.ResourceWorkOrder, "wo-"+ev))
	}

	// The first worker's poller hands the events to the track.
	first := b.workerProcess(t, "first")
	trackID := workflows.TrackWorkflowID(b.cfg.Tasks.Track)
	require.Eventually(t, func() bool {
		d, err := b.client.DescribeWorkflowExecution(ctx, trackID, "")
		if err != nil {
			return false
		}
		for _, pa := range d.GetPendingActivities() {
			// Between two attempts of Run, with time to spare before the
			// next: no step of the track is in flight on the first worker.
			if pa.GetActivityType().GetName() == "Run" && pa.GetAttempt() >= 2 &&
				pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED &&
				time.Until(pa.GetScheduledTime().AsTime()) > 300*time.Millisecond {
				return true
			}
		}
		return false
	}, 90*time.Second, 20*time.Millisecond, "the track's Run never waited for its workorder")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()

	wos, err := b.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{Track: b.cfg.Tasks.Track})
	require.NoError(t, err)
	require.Len(t, wos, 1, "one triage workorder when the worker died")
	require.Equal(t, triage.Type, wos[0].DiazotrophType)
	_, err = b.store.GetRunRecord(ctx, wos[0].WorkOrderID)
	require.ErrorIs(t, err, domain.ErrNotFound, "the workorder was active when the worker died")

	for _, r := range releases {
		r()
	}
	b.workerProcess(t, "second")
	events, wos := b.waitTrackEvents(t, eventIDs)
	b.requireOneWorkOrderPerScheduledEvent(t, events, wos)
	require.Len(t, wos, nCaptures/5, "rounds of five captures")
	for _, ev := range events {
		require.Contains(t, []string{domain.ReasonScheduled, domain.ReasonAlreadyTaken}, ev.ProcessedReason, "event %s", ev.EventID)
	}
	ids := b.requireCapturesTriaged(t, nCaptures)
	for _, id := range ids {
		require.Equal(t, 1, lifecycleRunsWhenStarted(t, b, id), "lifecycles of %s", id)
	}
	out, errOut, code := b.azolla(t, "verify")
	require.Equal(t, 0, code, "azolla verify: %s%s", out, errOut)
	require.Contains(t, out, "0 violations")
}

// lifecycleRunsWhenStarted waits until the objective has its lifecycle,
// waiting for approval, and counts its runs.
func lifecycleRunsWhenStarted(t *testing.T, b *bundle, id string) int {
	t.Helper()
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	return lifecycleRuns(t, b, id)
}

// The deadline monitor run twice over an objective past its due date
// writes its OVERDUE pause once, and the objective's lifecycle, waiting for
// approval, carries AzollaOverdue=true until it ends (rejected here).
func TestDeadline_MonitorRunTwiceWritesOneOverduePause(t *testing.T) {
	t.Parallel()
	b := setupTasks(t, setupOptions{})
	ctx := context.Background()
	id := uniqueID("overdue")
	due := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	b.create(t, id, func(o *domain.Objective) { o.DueAt = &due })
	b.waitStep(t, id, workflows.StepAwaitingApproval)

	var runs []client.WorkflowRun
	for range 2 {
		run, err := b.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "it-deadline-monitor-" + randomHex(4),
			TaskQueue: b.cfg.Deadlines.TaskQueue, WorkflowRunTimeout: 2 * time.Minute}, workflows.DeadlineMonitorWorkflowName)
		require.NoError(t, err)
		var res workflows.DeadlineMonitorResult
		require.NoError(t, run.Get(ctx, &res))
		require.Contains(t, res.Overdue, id)
		runs = append(runs, run)
	}

	pauses, err := b.store.ListPauseStates(ctx, id)
	require.NoError(t, err)
	var overdue []*domain.PauseState
	for _, p := range pauses {
		if p.Reason == domain.PauseOverdue {
			overdue = append(overdue, p)
		}
	}
	require.Len(t, overdue, 1, "one OVERDUE pause for the objective and its deadline")
	require.Equal(t, deadline.PauseID(id, due), overdue[0].PauseStateID)
	require.NotNil(t, overdue[0].DeadlineAt)
	require.True(t, due.Equal(*overdue[0].DeadlineAt), "deadline %s, want %s", overdue[0].DeadlineAt, due)

	wid := workflows.ObjectiveWorkflowID(id)
	require.Eventually(t, func() bool {
		resp, err := b.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf(`WorkflowId = %q AND %s = true`, wid, workflows.AttrOverdue.GetName())})
		return err == nil && len(resp.GetExecutions()) == 1
	}, 60*time.Second, 200*time.Millisecond, "the lifecycle never showed %s = true", workflows.AttrOverdue.GetName())
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	b.requireAuditClean(t)
	b.recordHistory(t, "deadline_run1", runs[0].GetID(), runs[0].GetRunID())

	_, err = b.starter.Decide(ctx, id, workflows.Reject, workflows.Decision{By: "tester", Comment: "too late"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		resp, err := b.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf(`WorkflowId = %q AND %s = false`, wid, workflows.AttrOverdue.GetName())})
		return err == nil && len(resp.GetExecutions()) == 1
	}, 60*time.Second, 200*time.Millisecond, "the rejected lifecycle still shows %s = true", workflows.AttrOverdue.GetName())
}

// A manifest whose substrate (a PostgreSQL server, from the worker's
// config file) cannot be reached is processed BLOCKED: a MANIFEST BLOCKED
// pause says why, nothing is written for it but that, and the inbox lists
// it.
func TestManifest_UnreachableSubstrateIsBlocked(t *testing.T) {
	t.Parallel()
	b := setupTasks(t, setupOptions{noWorker: true})
	ctx := context.Background()
	conf := fmt.Sprintf(`tasks:
  substrate: down
substrates:
  down:
    driver: postgres
    dsn: postgres://azolla:secret@127.0.0.1:%d/azolla?sslmode=disable&connect_timeout=2
`, freePort())
	require.NoError(t, os.WriteFile(filepath.Join(b.cfg.DataDir, "azolla.yaml"), []byte(conf), 0o600))
	b.workerProcess(t, "blocked")

	out, errOut, code := b.azolla(t, "manifest", "request", "--scope", "this week")
	require.Equal(t, 0, code, "%s%s", out, errOut)
	eventID := strings.TrimSpace(out)
	require.True(t, strings.HasPrefix(eventID, "ev-manifest-"), "stdout is the event id: %q", out)

	events, wos := b.waitTrackEvents(t, []string{eventID})
	require.Equal(t, domain.ReasonBlocked, events[eventID].ProcessedReason)
	require.Empty(t, wos, "no workorder for a blocked manifest")
	_, err := b.store.GetWorkOrderByEvent(ctx, eventID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	_, err = b.store.GetContextSnapshot(ctx, "cs-"+eventID)
	require.ErrorIs(t, err, domain.ErrNotFound, "no snapshot for a blocked manifest")

	p, err := b.store.GetPauseState(ctx, pause.SubjectID(domain.SubjectManifest, eventID, domain.PauseBlocked))
	require.NoError(t, err)
	require.Equal(t, domain.PauseBlocked, p.Reason)
	require.Equal(t, domain.SubjectManifest, p.Subject())
	require.NotEmpty(t, p.PrioritizedActions)
	require.Contains(t, p.PrioritizedActions[0], "Manifest not written")
	require.Contains(t, p.PrioritizedActions[0], "unreachable")
	require.NotContains(t, strings.Join(p.PrioritizedActions, "\n"), "secret", "the DSN's password is not shown")

	out, errOut, code = b.azolla(t, "inbox")
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Contains(t, out, eventID)
	require.Contains(t, out, "Manifest not written")
	out, errOut, code = b.azolla(t, "verify")
	require.Equal(t, 0, code, "azolla verify: %s%s", out, errOut)
	require.Contains(t, out, "0 violations")
}

// The deadline monitor's Schedule, in a namespace of the test's own (every
// worker of the package applies it in "default"): created, then unchanged,
// then updated to a new interval, by ApplyDeadlineSchedule and by
// `azolla schedules apply`.
func TestSchedules_ApplyCreatesThenUpdates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := "it-schedules-" + randomHex(4)
	nc, err := client.NewNamespaceClient(client.Options{HostPort: server.FrontendAddress(), Logger: quietSDKLogger{}})
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: ns,
		WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)}))
	c, err := client.Dial(client.Options{HostPort: server.FrontendAddress(), Namespace: ns, Logger: quietSDKLogger{}})
	require.NoError(t, err)
	defer c.Close()

	cfg := config.DefaultFor(func(string) string { return "" })
	cfg.Temporal.Address, cfg.Temporal.Namespace = server.FrontendAddress(), ns
	apply := func() string {
		what, err := workers.ApplyDeadlineSchedule(ctx, c, cfg)
		require.NoError(t, err)
		return what
	}
	// The new namespace reaches the frontend's cache within seconds.
	var what string
	require.Eventually(t, func() bool {
		what, err = workers.ApplyDeadlineSchedule(ctx, c, cfg)
		return err == nil
	}, 60*time.Second, 250*time.Millisecond, "the schedule could not be applied in %s: %v", ns, &err)
	h := c.ScheduleClient().GetHandle(ctx, workflows.DeadlineScheduleID)
	t.Cleanup(func() { _ = h.Delete(context.Background()) })
	require.Equal(t, workers.ScheduleCreated, what)
	require.Equal(t, workers.ScheduleUnchanged, apply())

	cfg.Deadlines.Interval = 2 * time.Minute
	require.Equal(t, workers.ScheduleUpdated, apply())
	require.Equal(t, workers.ScheduleUnchanged, apply())
	requireInterval := func(want time.Duration) {
		d, err := h.Describe(ctx)
		require.NoError(t, err)
		require.Len(t, d.Schedule.Spec.Intervals, 1)
		require.Equal(t, want, d.Schedule.Spec.Intervals[0].Every)
		a, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction)
		require.True(t, ok)
		require.Equal(t, cfg.Deadlines.TaskQueue, a.TaskQueue)
	}
	requireInterval(2 * time.Minute)

	b := &bundle{cfg: cfg}
	b.cfg.DataDir = t.TempDir()
	b.cfg.Temporal.TaskQueue = config.DefaultTaskQueue
	b.env = []string{"AZOLLA_TEMPORAL_NAMESPACE=" + ns, "AZOLLA_DEADLINES_INTERVAL=3m"}
	out, errOut, code := b.azolla(t, "schedules", "apply")
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Equal(t, fmt.Sprintf("schedule %s updated: every 3m0s on task queue %s\n", workflows.DeadlineScheduleID,
		cfg.Deadlines.TaskQueue), out)
	requireInterval(3 * time.Minute)
	out, errOut, code = b.azolla(t, "schedules", "apply")
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Contains(t, out, " unchanged: every 3m0s")
}

// recordTrackHistory records the track's current run, as it stands once the
// track is idle and no workflow task is pending, as <scenario>_run1.json
// (when AZOLLA_RECORD_HISTORIES names a directory): a track keeps running,
// and the history of a run still open replays as far as it goes.
func (b *bundle) recordTrackHistory(t *testing.T, scenario string) {
	if os.Getenv(recordEnv) == "" {
		return
	}
	ctx := context.Background()
	id := workflows.TrackWorkflowID(b.cfg.Tasks.Track)
	require.Eventually(t, func() bool {
		st, err := b.starter.TrackState(ctx, b.cfg.Tasks.Track)
		return err == nil && st.Active == nil && len(st.WaitingTriage)+len(st.WaitingManifest) == 0
	}, 60*time.Second, 100*time.Millisecond, "the track never went idle")
	var runID string
	require.Eventually(t, func() bool {
		d, err := b.client.DescribeWorkflowExecution(ctx, id, "")
		if err != nil || d.GetPendingWorkflowTask() != nil {
			return false
		}
		runID = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		return true
	}, 30*time.Second, 50*time.Millisecond, "the track's workflow task never completed")
	b.recordHistory(t, scenario+"_run1", id, runID)
}
