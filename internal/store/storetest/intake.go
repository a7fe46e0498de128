package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

func exerciseIntake(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("Intake_OneObjectivePerItemUnderRacingTakers", func(t *testing.T) { testIntakeRace(t, open(t)) })
	t.Run("Intake_CaptureAndItsEventOrNeither", func(t *testing.T) { testIntakeCapture(t, open(t)) })
	t.Run("Intake_ItemUpdatesKeepItsKey", func(t *testing.T) { testIntakeUpdate(t, open(t)) })
	t.Run("Intake_CommandRecordedOnce", func(t *testing.T) { testForgeCommands(t, open(t)) })
	t.Run("Intake_CursorAndObjectiveTextWhileNew", func(t *testing.T) { testIntakeCursorAndText(t, open(t)) })
}

// IssueSource is the suite's forge source.
const IssueSource = "gitea:https://git.example.com/acme/widgets"

// IntakeObjective is an item of IssueSource and the objective it becomes.
func IntakeObjective(number int, objectiveID string) (*domain.IntakeItem, *domain.Objective) {
	o := Objective(objectiveID)
	o.Description = "Steps to reproduce:\n1. open /login"
	o.Provenance = fmt.Sprintf("https://git.example.com/acme/widgets/issues/%d", number)
	return &domain.IntakeItem{Source: IssueSource, ExternalID: fmt.Sprint(number), Kind: domain.IntakeObjective,
		ObjectiveID: objectiveID, URL: o.Provenance, Author: "ana", Repository: "widgets", CreatedAt: T0,
		UpdatedAt: T0}, o
}

func testIntakeRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	const takers = 8
	var wg sync.WaitGroup
	created := make([]bool, takers)
	got := make([]*domain.IntakeItem, takers)
	errs := make([]error, takers)
	for i := range takers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each taker derives its own objective id, as pollers in two
			// processes would: one of them wins.
			it, o := IntakeObjective(12, fmt.Sprintf("widgets-12-taker-%d", i))
			got[i], created[i], errs[i] = store.TakeIntake(ctx, s, it, o, nil, T0)
		}()
	}
	wg.Wait()
	winners := 0
	for i := range takers {
		require.NoError(t, errs[i])
		require.Equal(t, got[0].ObjectiveID, got[i].ObjectiveID, "every taker sees the one objective")
		if created[i] {
			winners++
		}
	}
	require.Equal(t, 1, winners)
	objs, err := s.ListObjectives(ctx, store.ListObjectivesParams{})
	require.NoError(t, err)
	require.Len(t, objs, 1, "one objective for the item, whoever raced")
	require.Equal(t, got[0].ObjectiveID, objs[0].ObjectiveID)
	require.Equal(t, "Steps to reproduce:\n1. open /login", objs[0].Description)
	require.Equal(t, "https://git.example.com/acme/widgets/issues/12", objs[0].Provenance)

	of, err := s.IntakeItemOf(ctx, objs[0].ObjectiveID)
	require.NoError(t, err)
	require.Equal(t, "12", of.ExternalID)
	_, err = s.IntakeItemOf(ctx, "no-such")
	var nf *domain.NotFoundError
	require.ErrorAs(t, err, &nf)

	// An objective id taken by an unrelated objective is an error, and the
	// item is not recorded.
	require.NoError(t, s.CreateObjective(ctx, Objective("taken-id")))
	it, o := IntakeObjective(13, "taken-id")
	_, _, err = store.TakeIntake(ctx, s, it, o, nil, T0)
	require.ErrorIs(t, err, domain.ErrAlreadyExists)
	_, err = s.GetIntakeItem(ctx, IssueSource, "13")
	require.ErrorAs(t, err, &nf)
}

func testIntakeCapture(t *testing.T, s store.Store) {
	ctx := context.Background()
	it := &domain.IntakeItem{Source: "jira", ExternalID: "PROJ-7", Kind: domain.IntakeCapture, CaptureID: "cap-jira-proj-7",
		CreatedAt: T0, UpdatedAt: T0}
	c := Capture("cap-jira-proj-7", T0)
	_, created, err := store.TakeIntake(ctx, s, it, nil, c, T0)
	require.NoError(t, err)
	require.True(t, created)
	_, created, err = store.TakeIntake(ctx, s, it, nil, Capture("cap-jira-proj-7-again", T0), T0)
	require.NoError(t, err)
	require.False(t, created)
	evs, err := s.ListEvents(ctx, store.ListEventsParams{EventType: domain.EventCaptureReady})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	_, err = s.GetCaptureBuffer(ctx, "cap-jira-proj-7-again")
	require.Error(t, err, "the second taker wrote nothing")

	// An invalid capture leaves no item behind.
	bad := &domain.IntakeItem{Source: "jira", ExternalID: "PROJ-8", Kind: domain.IntakeCapture, CaptureID: "cap-8",
		CreatedAt: T0, UpdatedAt: T0}
	badCapture := Capture("cap-8", T0)
	badCapture.Status = "NOPE"
	_, _, err = store.TakeIntake(ctx, s, bad, nil, badCapture, T0)
	require.Error(t, err)
	var nf *domain.NotFoundError
	_, err = s.GetIntakeItem(ctx, "jira", "PROJ-8")
	require.ErrorAs(t, err, &nf)
}

func testIntakeUpdate(t *testing.T, s store.Store) {
	ctx := context.Background()
	it, o := IntakeObjective(3, "widgets-3")
	_, _, err := store.TakeIntake(ctx, s, it, o, nil, T0)
	require.NoError(t, err)
	edited := T0.Add(time.Minute)
	it.StatusCommentID, it.StatusDigest, it.Closed, it.EditedAt = "991", fmt.Sprintf("%064x", 7), true, &edited
	require.NoError(t, s.UpdateIntakeItem(ctx, it))
	got, err := s.GetIntakeItem(ctx, IssueSource, "3")
	require.NoError(t, err)
	require.Equal(t, "991", got.StatusCommentID)
	require.True(t, got.Closed)
	require.NotNil(t, got.EditedAt)
	require.True(t, edited.Equal(*got.EditedAt))
	require.Equal(t, "widgets-3", got.ObjectiveID)

	bad := *got
	bad.StatusDigest = "not hex"
	require.Error(t, s.UpdateIntakeItem(ctx, &bad))
	again, err := s.GetIntakeItem(ctx, IssueSource, "3")
	require.NoError(t, err)
	require.Equal(t, got.StatusDigest, again.StatusDigest, "an invalid update changes nothing")

	unknown := *got
	unknown.ExternalID = "404"
	var nf *domain.NotFoundError
	require.ErrorAs(t, s.UpdateIntakeItem(ctx, &unknown), &nf)

	items, err := s.ListIntakeItems(ctx, store.ListIntakeItemsParams{Source: IssueSource})
	require.NoError(t, err)
	require.Len(t, items, 1)
	items, err = s.ListIntakeItems(ctx, store.ListIntakeItemsParams{Source: "elsewhere"})
	require.NoError(t, err)
	require.Empty(t, items)
}

func testForgeCommands(t *testing.T, s store.Store) {
	ctx := context.Background()
	cmd := &domain.ForgeCommand{Source: IssueSource, CommentID: "4077", ObjectiveID: "widgets-3", Thread: "issue #3",
		Command: domain.CommandApprove, Author: "ana", Trusted: true, TrustReason: "write access to acme/widgets",
		Result: "approved", CreatedAt: T0}
	wrote, err := s.RecordForgeCommand(ctx, cmd)
	require.NoError(t, err)
	require.True(t, wrote)
	again := *cmd
	again.Result = "approved twice?"
	wrote, err = s.RecordForgeCommand(ctx, &again)
	require.NoError(t, err)
	require.False(t, wrote, "a comment is recorded once")
	got, err := s.GetForgeCommand(ctx, IssueSource, "4077")
	require.NoError(t, err)
	require.Equal(t, "approved", got.Result)

	bad := *cmd
	bad.CommentID, bad.Command = "4078", "merge"
	_, err = s.RecordForgeCommand(ctx, &bad)
	require.Error(t, err)
	var nf *domain.NotFoundError
	_, err = s.GetForgeCommand(ctx, IssueSource, "4078")
	require.ErrorAs(t, err, &nf)

	later := *cmd
	later.CommentID, later.Command, later.CreatedAt = "4100", domain.CommandStatus, T0.Add(time.Minute)
	_, err = s.RecordForgeCommand(ctx, &later)
	require.NoError(t, err)
	list, err := s.ListForgeCommands(ctx, "widgets-3")
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "4077", list[0].CommentID)
}

func testIntakeCursorAndText(t *testing.T, s store.Store) {
	ctx := context.Background()
	c, err := s.IntakeCursor(ctx, IssueSource)
	require.NoError(t, err)
	require.Empty(t, c)
	require.NoError(t, s.SetIntakeCursor(ctx, IssueSource, "2026-11-21T12:00:00Z", T0))
	require.NoError(t, s.SetIntakeCursor(ctx, IssueSource, "2026-11-21T12:05:00Z", T0))
	c, err = s.IntakeCursor(ctx, IssueSource)
	require.NoError(t, err)
	require.Equal(t, "2026-11-21T12:05:00Z", c)

	it, o := IntakeObjective(5, "widgets-5")
	_, _, err = store.TakeIntake(ctx, s, it, o, nil, T0)
	require.NoError(t, err)
	p := store.UpdateObjectiveTextParams{ObjectiveID: "widgets-5", Title: "Fix login on Safari",
		Description: "Edited.", AcceptanceCriteria: []string{"works on Safari"}, Now: T0.Add(time.Minute)}
	ok, err := s.UpdateObjectiveText(ctx, p)
	require.NoError(t, err)
	require.True(t, ok)
	got, err := s.GetObjective(ctx, "widgets-5")
	require.NoError(t, err)
	require.Equal(t, "Fix login on Safari", got.Title)
	require.Equal(t, []string{"works on Safari"}, got.AcceptanceCriteria)

	bad := p
	bad.Title = "two\nlines"
	_, err = s.UpdateObjectiveText(ctx, bad)
	require.Error(t, err)

	_, err = s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "widgets-5",
		From: []domain.Status{domain.StatusNew}, To: domain.StatusTodo})
	require.NoError(t, err)
	p.Title = "Too late"
	ok, err = s.UpdateObjectiveText(ctx, p)
	require.NoError(t, err)
	require.False(t, ok, "an approved objective's text is what was approved")
	got, err = s.GetObjective(ctx, "widgets-5")
	require.NoError(t, err)
	require.Equal(t, "Fix login on Safari", got.Title)
}

// RecordOpenPullRequest gives existing objective objectiveID a round and
// an open pull request number, as its first PASS would.
func RecordOpenPullRequest(t testing.TB, s store.Store, objectiveID string, number int) *domain.PullRequest {
	t.Helper()
	ctx := context.Background()
	ev, _, err := s.EmitEvent(ctx, Event("ev-"+objectiveID+"-pr", objectiveID, 99, T0))
	require.NoError(t, err)
	snap := &domain.ContextSnapshot{ContextSnapshotID: "cs-" + objectiveID + "-pr", ObjectiveID: objectiveID,
		FullPromptText: "Fix it", CreatedAt: T0}
	require.NoError(t, s.CreateContextSnapshot(ctx, snap))
	wo, _, err := s.CreateWorkOrder(ctx, &domain.WorkOrder{WorkOrderID: "wo-" + objectiveID + "-pr", EventID: ev.EventID,
		ObjectiveID: objectiveID, DiazotrophType: "PATCH_DIAZOTROPH", ContextSnapshotID: snap.ContextSnapshotID,
		BranchName: "azolla/" + objectiveID, BudgetMS: 60000, Status: domain.WorkOrderCreated, CreatedAt: T0})
	require.NoError(t, err)
	p := PullRequestParams(wo, number, T0)
	p.Repository, p.URL = "acme/widgets", fmt.Sprintf("https://git.example.com/acme/widgets/pulls/%d", number)
	pr, _, err := s.RecordPullRequest(ctx, p)
	require.NoError(t, err)
	return pr
}
