package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// T0 is the suite's fixed clock origin.
var T0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// Exercise runs the conformance suite against fresh stores from open.
func Exercise(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("Migrate_SecondRunAppliesNothing", func(t *testing.T) {
		s := open(t)
		applied, err := s.Migrate(context.Background())
		require.NoError(t, err)
		require.Empty(t, applied)
	})
	t.Run("Objective_CreateGetListTransition", func(t *testing.T) { testObjectives(t, open(t)) })
	t.Run("InvalidRecords_RefusedNamingFieldAndNothingWritten", func(t *testing.T) { testInvalidRecords(t, open(t)) })
	t.Run("Event_OnePerTransitionProcessedOnce", func(t *testing.T) { testEvents(t, open(t)) })
	t.Run("WorkOrder_OnePerEventEvenConcurrently", func(t *testing.T) { testWorkOrders(t, open(t)) })
	t.Run("OutputBundle_OnePerWorkOrder", func(t *testing.T) { testBundles(t, open(t)) })
	t.Run("RunRecord_UpsertByWorkOrder", func(t *testing.T) { testRunRecords(t, open(t)) })
	t.Run("PauseStatesAndCaptures", func(t *testing.T) { testPauseAndCaptures(t, open(t)) })
	t.Run("DecisionsAndYields", func(t *testing.T) { testDecisionsAndYields(t, open(t)) })
	t.Run("HandOver_KeysetPagesAndMarkOnce", func(t *testing.T) { testHandOver(t, open(t)) })
	t.Run("Migrate_RepairsSingleLineFields", func(t *testing.T) { testRepairSingleLineFields(t, open(t)) })
	exerciseClaims(t, open)
	exerciseJobs(t, open)
	exerciseCaptures(t, open)
	exerciseCaptureTriage(t, open)
	exerciseTracks(t, open)
	exercisePullRequests(t, open)
	exercisePullRequestFeedback(t, open)
	exerciseSpend(t, open)
	exerciseTranscripts(t, open)
	exerciseCandidates(t, open)
	exerciseIntake(t, open)
	ExercisePruneFinished(t, open)
}

// Objective returns a valid NEW ticket objective.
func Objective(id string) *domain.Objective {
	return &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "Fix " + id,
		AcceptanceCriteria: []string{"tests pass"}, Status: domain.StatusNew, Urgency: "NORMAL",
		CreatedAt: T0, UpdatedAt: T0}
}

// Event returns a valid unprocessed TICKET_READY event.
func Event(id, subject string, seq int64, at time.Time) *domain.Event {
	return &domain.Event{EventID: id, EventType: domain.EventTicketReady, SubjectID: subject, TransitionSeq: seq, CreatedAt: at}
}

// Scheduled writes an objective, event and snapshot and returns a workorder
// ready to be created for them.
func Scheduled(t testing.TB, q store.Querier, objectiveID string) *domain.WorkOrder {
	t.Helper()
	return ScheduledObjective(t, q, Objective(objectiveID), T0)
}

// ScheduledObjective is Scheduled for objective o, stored at at.
func ScheduledObjective(t testing.TB, q store.Querier, o *domain.Objective, at time.Time) *domain.WorkOrder {
	t.Helper()
	ctx, id := context.Background(), o.ObjectiveID
	require.NoError(t, q.CreateObjective(ctx, o))
	ev, _, err := q.EmitEvent(ctx, Event("ev-"+id, id, 1, at))
	require.NoError(t, err)
	snap := &domain.ContextSnapshot{ContextSnapshotID: "cs-" + id, ObjectiveID: id,
		FullPromptText: "Fix it", Metadata: domain.SnapshotMetadata{BaseBranch: "main"}, CreatedAt: at}
	require.NoError(t, q.CreateContextSnapshot(ctx, snap))
	return &domain.WorkOrder{WorkOrderID: "wo-" + id, EventID: ev.EventID, ObjectiveID: id,
		DiazotrophType: "PATCH_DIAZOTROPH", ContextSnapshotID: snap.ContextSnapshotID,
		BranchName: "azolla/" + id, BudgetMS: 60000, Status: domain.WorkOrderCreated, CreatedAt: at}
}

func testObjectives(t *testing.T, s store.Store) {
	ctx := context.Background()
	o := Objective("obj-1")
	o.Repository, o.BaseBranch = "/srv/repo", "main"
	o.Generator, o.Patch = "static", "diff --git a/f b/f\n"
	require.NoError(t, s.CreateObjective(ctx, o))
	require.ErrorIs(t, s.CreateObjective(ctx, Objective("obj-1")), domain.ErrAlreadyExists)
	require.NoError(t, s.CreateObjective(ctx, Objective("obj-2")))

	got, err := s.GetObjective(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, o, got)
	_, err = s.GetObjective(ctx, "nope")
	require.ErrorIs(t, err, domain.ErrNotFound)

	moved, err := s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "obj-1",
		From: []domain.Status{domain.StatusNew}, To: domain.StatusTodo, Now: T0.Add(time.Second)})
	require.NoError(t, err)
	require.Equal(t, int64(1), moved.StatusSeq)
	require.Equal(t, T0.Add(time.Second), moved.UpdatedAt)

	_, err = s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "obj-1",
		From: []domain.Status{domain.StatusNew}, To: domain.StatusTodo})
	var te *domain.TransitionError
	require.ErrorAs(t, err, &te)
	require.Equal(t, string(domain.StatusTodo), te.Current)

	_, err = s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "obj-1", To: "FINISHED"})
	requireViolation(t, err, "/status")
	got, err = s.GetObjective(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, moved, got, "a refused transition changes nothing")

	ref, blockers := domain.GateBlocker("wo-1"), []string{"needs a key"}
	blocked, err := s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "obj-1",
		To: domain.StatusBlocked, BlockerRef: &ref, Blockers: &blockers})
	require.NoError(t, err)
	got, err = s.GetObjective(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, blocked, got)
	require.Equal(t, blockers, got.Blockers)
	require.Equal(t, ref, got.BlockerRef)
	cleared, none := domain.BlockerRef(""), []string{}
	moved, err = s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "obj-1",
		From: []domain.Status{domain.StatusBlocked}, To: domain.StatusTodo, BlockerRef: &cleared, Blockers: &none})
	require.NoError(t, err)
	got, err = s.GetObjective(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, moved, got)
	require.Empty(t, got.Blockers)
	require.Empty(t, got.BlockerRef)
	require.Equal(t, int64(3), got.StatusSeq)

	todo, err := s.ListObjectives(ctx, store.ListObjectivesParams{Status: domain.StatusTodo})
	require.NoError(t, err)
	require.Len(t, todo, 1)
	all, err := s.ListObjectives(ctx, store.ListObjectivesParams{})
	require.NoError(t, err)
	require.Len(t, all, 2)
}

func testInvalidRecords(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, id := range []string{"../x", "-x", "a..b", "x.lock", "a b", ""} {
		err := s.CreateObjective(ctx, Objective(id))
		requireViolation(t, err, "/objective_id")
	}
	all, err := s.ListObjectives(ctx, store.ListObjectivesParams{})
	require.NoError(t, err)
	require.Empty(t, all)

	wo := Scheduled(t, s, "obj-1")
	bad := *wo
	bad.BranchName = "azolla/../../etc"
	_, _, err = s.CreateWorkOrder(ctx, &bad)
	requireViolation(t, err, "/branch_name")
	_, err = s.GetWorkOrderByEvent(ctx, wo.EventID)
	require.ErrorIs(t, err, domain.ErrNotFound)

	ev := Event("ev-bad", "obj-1", 2, T0)
	ev.EventType = "TICKET_MAYBE"
	_, _, err = s.EmitEvent(ctx, ev)
	requireViolation(t, err, "/event_type")
	_, err = s.GetEvent(ctx, "ev-bad")
	require.ErrorIs(t, err, domain.ErrNotFound)

	_, err = s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: wo.EventID, Reason: "WHATEVER"})
	requireViolation(t, err, "/processed_reason")
	got, err := s.GetEvent(ctx, wo.EventID)
	require.NoError(t, err)
	require.False(t, got.Processed)

	err = s.CreatePauseState(ctx, &domain.PauseState{PauseStateID: "ps-1", ObjectiveID: "obj-1", Reason: domain.PauseBlocked})
	requireViolation(t, err, "/prioritized_actions")
	_, err = s.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: "obj-1", GateResult: "MAYBE", GateReason: "x"})
	requireViolation(t, err, "/gate_result")
	_, err = s.GetRunRecord(ctx, wo.WorkOrderID)
	require.ErrorIs(t, err, domain.ErrNotFound)

	_, _, err = s.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: "TICKET", ResourceID: "x", OwnerID: "w1", TTL: time.Minute})
	requireViolation(t, err, "/resource_type")
	_, _, err = s.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: domain.ResourceEvent, ResourceID: "../x", OwnerID: "w1", TTL: time.Minute})
	requireViolation(t, err, "/resource_id")
	claims, err := s.ListClaims(ctx, store.ListClaimsParams{})
	require.NoError(t, err)
	require.Empty(t, claims)

	held, _, err := s.AcquireClaim(ctx, store.AcquireClaimParams{ResourceType: domain.ResourceEvent, ResourceID: "ev-ok", OwnerID: "w1", TTL: time.Minute, Now: T0})
	require.NoError(t, err)
	_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: "TICKET", ResourceID: "ev-ok", OwnerID: "w1", ClaimVersion: held.ClaimVersion, Now: T0})
	requireViolation(t, err, "/resource_type")
	_, err = s.ReleaseClaim(ctx, store.ReleaseClaimParams{ResourceType: domain.ResourceEvent, ResourceID: "ev-ok", OwnerID: "w1", ClaimVersion: -5, Now: T0})
	requireViolation(t, err, "/claim_version")
	_, err = s.RenewClaim(ctx, store.RenewClaimParams{ResourceType: domain.ResourceEvent, ResourceID: "ev-ok", OwnerID: "w 1", ClaimVersion: held.ClaimVersion, TTL: time.Minute, Now: T0})
	requireViolation(t, err, "/owner_id")
	claim, err := s.GetClaim(ctx, domain.ResourceEvent, "ev-ok")
	require.NoError(t, err)
	require.Equal(t, held, claim, "refused releases and renewals change nothing")
}

func testEvents(t *testing.T, s store.Store) {
	ctx := context.Background()
	first, created, err := s.EmitEvent(ctx, Event("ev-1", "obj-1", 1, T0))
	require.NoError(t, err)
	require.True(t, created)
	again, created, err := s.EmitEvent(ctx, Event("ev-1b", "obj-1", 1, T0.Add(time.Second)))
	require.NoError(t, err)
	require.False(t, created, "a second event for the same transition is not created")
	require.Equal(t, first, again)
	_, _, err = s.EmitEvent(ctx, Event("ev-2", "obj-1", 3, T0.Add(2*time.Second)))
	require.NoError(t, err)

	pending, err := s.ListUnprocessedEvents(ctx, store.ListEventsParams{EventType: domain.EventTicketReady})
	require.NoError(t, err)
	require.Equal(t, []string{"ev-1", "ev-2"}, eventIDs(pending), "oldest first")

	done, err := s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: "ev-1", Reason: domain.ReasonMissingTicket, Now: T0.Add(time.Minute)})
	require.NoError(t, err)
	require.True(t, done.Processed)
	_, err = s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: "ev-1", Reason: domain.ReasonScheduled})
	require.ErrorIs(t, err, domain.ErrAlreadyProcessed)
	got, err := s.GetEvent(ctx, "ev-1")
	require.NoError(t, err)
	require.Equal(t, done, got, "the first terminal reason stands")
	_, err = s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: "missing", Reason: domain.ReasonScheduled})
	require.ErrorIs(t, err, domain.ErrNotFound)

	pending, err = s.ListUnprocessedEvents(ctx, store.ListEventsParams{})
	require.NoError(t, err)
	require.Equal(t, []string{"ev-2"}, eventIDs(pending))
	all, err := s.ListEvents(ctx, store.ListEventsParams{SubjectID: "obj-1"})
	require.NoError(t, err)
	require.Len(t, all, 2)
}

func testWorkOrders(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := Scheduled(t, s, "obj-1")

	// Eight schedulers racing on one event: exactly one workorder results.
	const racers = 8
	var wg sync.WaitGroup
	results := make([]bool, racers)
	errs := make([]error, racers)
	for i := range racers {
		wg.Go(func() {
			w := *wo
			w.WorkOrderID = fmt.Sprintf("wo-race-%d", i)
			_, results[i], errs[i] = s.CreateWorkOrder(ctx, &w)
		})
	}
	wg.Wait()
	created := 0
	for i := range racers {
		require.NoError(t, errs[i])
		if results[i] {
			created++
		}
	}
	require.Equal(t, 1, created)
	list, err := s.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: "obj-1"})
	require.NoError(t, err)
	require.Len(t, list, 1)

	stored, createdAgain, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	require.False(t, createdAgain)
	require.Equal(t, list[0], stored)

	executed, changed, err := s.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: stored.WorkOrderID, Now: T0.Add(time.Minute)})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, domain.WorkOrderExecuted, executed.Status)
	again, changed, err := s.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: stored.WorkOrderID, Now: T0.Add(time.Hour)})
	require.NoError(t, err)
	require.False(t, changed, "re-marking an executed workorder is a no-op")
	require.Equal(t, executed, again)
	_, _, err = s.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: "wo-missing"})
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func testBundles(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := Scheduled(t, s, "obj-1")
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	b := &domain.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Fix", Content: "diff --git a/x b/x\n", Notes: "changed x",
		Metadata:     domain.BundleMetadata{BranchName: wo.BranchName, CommitSHA: "0123456789abcdef0123456789abcdef01234567"},
		RunnerStatus: domain.RunnerOK, CreatedAt: T0}
	first, created, err := s.CreateOutputBundle(ctx, b)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, b, first)
	second := *b
	second.Content = "something else"
	got, created, err := s.CreateOutputBundle(ctx, &second)
	require.NoError(t, err)
	require.False(t, created, "one output bundle per workorder")
	require.Equal(t, first, got)
}

func testRunRecords(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := Scheduled(t, s, "obj-1")
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	r := &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: "obj-1", GateResult: domain.GateFail,
		GateReason: "empty patch", CreatedAt: T0, UpdatedAt: T0}
	_, err = s.UpsertRunRecord(ctx, r)
	require.NoError(t, err)
	again := &domain.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: "obj-1", GateResult: domain.GatePass,
		GateReason: "patch applies", CommitSHA: "0123456789abcdef0123456789abcdef01234567",
		CreatedAt: T0.Add(time.Hour), UpdatedAt: T0.Add(time.Hour)}
	stored, err := s.UpsertRunRecord(ctx, again)
	require.NoError(t, err)
	require.Equal(t, domain.GatePass, stored.GateResult)
	require.Equal(t, T0, stored.CreatedAt, "the first write's created_at is kept")
	require.Equal(t, T0.Add(time.Hour), stored.UpdatedAt)
	got, err := s.GetRunRecord(ctx, wo.WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, stored, got)
}

// testDecisionsAndYields checks the human decision an event carries and the
// yields a snapshot freezes read back as written.
func testDecisionsAndYields(t *testing.T, s store.Store) {
	ctx := context.Background()
	require.NoError(t, s.CreateObjective(ctx, Objective("obj-1")))
	ev := Event("ev-1", "obj-1", 1, T0)
	ev.DecidedBy, ev.Comment = "ana", "the build needs the flag\nsee the log"
	stored, _, err := s.EmitEvent(ctx, ev)
	require.NoError(t, err)
	require.Equal(t, ev, stored)
	got, err := s.GetEvent(ctx, "ev-1")
	require.NoError(t, err)
	require.Equal(t, "ana", got.DecidedBy)
	require.Equal(t, ev.Comment, got.Comment)
	tooLong := Event("ev-2", "obj-1", 2, T0)
	tooLong.Comment = strings.Repeat("x", 4097)
	_, _, err = s.EmitEvent(ctx, tooLong)
	requireViolation(t, err, "/comment")

	snap := &domain.ContextSnapshot{ContextSnapshotID: "cs-1", ObjectiveID: "obj-1", FullPromptText: "Fix it",
		RelatedYieldRefs: []domain.YieldRef{
			{Kind: domain.YieldPreviousAttempt, Ref: "wo-obj-1-1", GateResult: domain.GateFail,
				GateReason: "gate command `make` exited 2", OutputTail: "main.go:3: undefined: x"},
			{Kind: domain.YieldHumanComment, Ref: "ev-1", By: "ana", Comment: "use the flag"},
		}, CreatedAt: T0}
	require.NoError(t, s.CreateContextSnapshot(ctx, snap))
	gotSnap, err := s.GetContextSnapshot(ctx, "cs-1")
	require.NoError(t, err)
	require.Equal(t, snap, gotSnap)

	noVerdict := &domain.ContextSnapshot{ContextSnapshotID: "cs-2", ObjectiveID: "obj-1", FullPromptText: "Fix it",
		RelatedYieldRefs: []domain.YieldRef{{Kind: domain.YieldPreviousAttempt, Ref: "wo-obj-1-1"}}, CreatedAt: T0}
	requireViolation(t, s.CreateContextSnapshot(ctx, noVerdict), "/related_yield_refs/0")
	_, err = s.GetContextSnapshot(ctx, "cs-2")
	require.ErrorIs(t, err, domain.ErrNotFound, "a refused snapshot writes nothing")
}

func testPauseAndCaptures(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i, reason := range []string{domain.PauseGateFailed, domain.PauseRunComplete} {
		require.NoError(t, s.CreatePauseState(ctx, &domain.PauseState{PauseStateID: fmt.Sprintf("ps-%d", i), ObjectiveID: "obj-1",
			Reason: reason, PrioritizedActions: []string{"Review", "Confirm"}, CreatedAt: T0.Add(time.Duration(i) * time.Minute)}))
	}
	ps, err := s.ListPauseStates(ctx, "obj-1")
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, domain.PauseRunComplete, ps[1].Reason)
	require.Equal(t, []string{"Review", "Confirm"}, ps[1].PrioritizedActions, "action order is kept")
	require.Nil(t, ps[1].ActionKinds, "a pause state written without kinds reads back without them")

	kinds := &domain.PauseState{PauseStateID: "ps-kinds", ObjectiveID: "obj-2", Reason: domain.PauseBlocked,
		PrioritizedActions: []string{"Resolve blockers for obj-2: x", "Re-emit TICKET_READY after resolution"},
		ActionKinds:        []string{"RESOLVE_BLOCKERS", "UNBLOCK"}, CreatedAt: T0}
	require.NoError(t, s.CreatePauseState(ctx, kinds))
	ps, err = s.ListPauseStates(ctx, "obj-2")
	require.NoError(t, err)
	require.Equal(t, []*domain.PauseState{kinds}, ps)
	bad := *kinds
	bad.PauseStateID, bad.ActionKinds = "ps-bad-kind", []string{"RESOLVE_BLOCKERS", "MAKE_COFFEE"}
	requireViolation(t, s.CreatePauseState(ctx, &bad), "/action_kinds/1")
	short := *kinds
	short.PauseStateID, short.ActionKinds = "ps-short", []string{"RESOLVE_BLOCKERS"}
	require.ErrorIs(t, s.CreatePauseState(ctx, &short), domain.ErrInvalid, "one kind per action")
	ps, err = s.ListPauseStates(ctx, "obj-2")
	require.NoError(t, err)
	require.Len(t, ps, 1, "refused pause states write nothing")

	c := &domain.CaptureBuffer{CaptureBufferID: "cap-1", Source: "cli", Content: "buy milk", Status: domain.CapturePending, CreatedAt: T0, UpdatedAt: T0}
	require.NoError(t, s.CreateCaptureBuffer(ctx, c))
	require.ErrorIs(t, s.CreateCaptureBuffer(ctx, c), domain.ErrAlreadyExists)
	got, err := s.GetCaptureBuffer(ctx, "cap-1")
	require.NoError(t, err)
	require.Equal(t, c, got)
	pending, err := s.ListCaptureBuffers(ctx, store.ListCaptureBuffersParams{Status: domain.CapturePending})
	require.NoError(t, err)
	require.Len(t, pending, 1)
}

// requireViolation asserts err is a schema violation naming pointer.
func requireViolation(t testing.TB, err error, pointer string) {
	t.Helper()
	var ve *schemas.ValidationError
	require.True(t, errors.As(err, &ve), "want a schema violation at %s, got %v", pointer, err)
	require.Contains(t, err.Error(), pointer)
}

func eventIDs(es []*domain.Event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.EventID
	}
	return out
}
