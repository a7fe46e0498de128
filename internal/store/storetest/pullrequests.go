package storetest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/store"
)

// The conformance suite of an objective's pull request: one per objective
// whatever retries and racing recorders do, MERGED final, a new one only
// after a human closed the old, and feedback taken once by compare-and-swap.

// Commit ids the suite's pull requests point at.
const (
	SHA1 = "0123456789abcdef0123456789abcdef01234567"
	SHA2 = "89abcdef0123456789abcdef0123456789abcdef"
	SHA3 = "fedcba9876543210fedcba9876543210fedcba98"
)

// RoundWorkOrder writes objective objectiveID (if round is 1) and its
// round-th workorder wo-<objectiveID>-<round>, with its event and snapshot,
// and returns the workorder.
func RoundWorkOrder(t testing.TB, q store.Querier, objectiveID string, round int) *domain.WorkOrder {
	t.Helper()
	wo, err := roundWorkOrder(context.Background(), q, objectiveID, round)
	require.NoError(t, err)
	return wo
}

func roundWorkOrder(ctx context.Context, q store.Querier, objectiveID string, round int) (*domain.WorkOrder, error) {
	if round == 1 {
		if err := q.CreateObjective(ctx, Objective(objectiveID)); err != nil {
			return nil, err
		}
	}
	n := strconv.Itoa(round)
	ev, _, err := q.EmitEvent(ctx, Event("ev-"+objectiveID+"-"+n, objectiveID, int64(round), T0))
	if err != nil {
		return nil, err
	}
	snap := &domain.ContextSnapshot{ContextSnapshotID: "cs-" + objectiveID + "-" + n, ObjectiveID: objectiveID,
		FullPromptText: "Fix it", CreatedAt: T0}
	if err := q.CreateContextSnapshot(ctx, snap); err != nil {
		return nil, err
	}
	wo, _, err := q.CreateWorkOrder(ctx, &domain.WorkOrder{WorkOrderID: "wo-" + objectiveID + "-" + n, EventID: ev.EventID,
		ObjectiveID: objectiveID, DiazotrophType: "PATCH_DIAZOTROPH", ContextSnapshotID: snap.ContextSnapshotID,
		BranchName: "azolla/" + objectiveID, BudgetMS: 60000, Status: domain.WorkOrderCreated, CreatedAt: T0})
	return wo, err
}

// PullRequestParams records pull request number of wo's objective on a
// Gitea repository at at, pushed at SHA1.
func PullRequestParams(wo *domain.WorkOrder, number int, at time.Time) store.RecordPullRequestParams {
	return store.RecordPullRequestParams{ObjectiveID: wo.ObjectiveID, WorkOrderID: wo.WorkOrderID,
		Forge: forge.KindGitea, Repository: "azolla/azolla", Number: number,
		URL:        "https://git.example.org/azolla/azolla/pulls/" + strconv.Itoa(number),
		HeadBranch: "azolla/" + wo.ObjectiveID, BaseBranch: "main", HeadSHA: SHA1, Now: at}
}

// recorded is the record RecordPullRequest stores for p.
func recorded(p store.RecordPullRequestParams) *domain.PullRequest {
	return &domain.PullRequest{ObjectiveID: p.ObjectiveID, WorkOrderID: p.WorkOrderID, Forge: p.Forge,
		Repository: p.Repository, Number: p.Number, URL: p.URL, HeadBranch: p.HeadBranch, BaseBranch: p.BaseBranch,
		HeadSHA: p.HeadSHA, State: domain.PullRequestOpen, Adopted: p.Adopted, Rounds: 1, CreatedAt: p.Now, UpdatedAt: p.Now}
}

func exercisePullRequests(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("PullRequest_RecordedOncePerObjective", func(t *testing.T) { testPullRequestRecordOnce(t, open(t)) })
	t.Run("PullRequest_ASecondNumberConflictsWhileOpen", func(t *testing.T) { testPullRequestConflict(t, open(t)) })
	t.Run("PullRequest_ReplacedAfterAHumanClosedIt", func(t *testing.T) { testPullRequestReplaced(t, open(t)) })
	t.Run("PullRequest_MergedIsFinal", func(t *testing.T) { testPullRequestMergedFinal(t, open(t)) })
	t.Run("PullRequest_StateMovesByTheDiagram", func(t *testing.T) { testPullRequestStates(t, open(t)) })
	t.Run("PullRequest_FeedbackTakenOnce", func(t *testing.T) {
		require.NoError(t, FeedbackTakenOnce(context.Background(), open(t)))
	})
	t.Run("PullRequest_RacingCursorAdvancesOneWins", func(t *testing.T) { testPullRequestCursorRace(t, open(t)) })
	t.Run("PullRequest_ChecksTakenOncePerHead", func(t *testing.T) { testPullRequestChecks(t, open(t)) })
	t.Run("PullRequest_RacingRecordersStoreOne", func(t *testing.T) { testPullRequestRecordRace(t, open(t)) })
	t.Run("PullRequest_InvalidRefusedNamingFieldAndNothingWritten", func(t *testing.T) { testPullRequestInvalid(t, open(t)) })
	t.Run("PullRequest_ListPagesByState", func(t *testing.T) { testPullRequestList(t, open(t)) })
	t.Run("PullRequest_RefusalInATransactionLeavesItUsable", func(t *testing.T) { testPullRequestInTx(t, open(t)) })
}

func testPullRequestRecordOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := RoundWorkOrder(t, s, "obj-1", 1)
	_, err := s.GetPullRequest(ctx, "obj-1")
	require.ErrorIs(t, err, domain.ErrNotFound)

	p := PullRequestParams(wo, 7, T0)
	p.Adopted = true
	first, created, err := s.RecordPullRequest(ctx, p)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, recorded(p), first)
	got, err := s.GetPullRequest(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, first, got)

	// A retry, or a second worker, with the same answer writes nothing.
	again := p
	again.Now, again.Adopted = T0.Add(time.Minute), false
	stored, created, err := s.RecordPullRequest(ctx, again)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, first, stored)
	got, err = s.GetPullRequest(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, first, got, "a repeated record changes nothing, updated_at included")

	// The next round pushed to the same pull request: its workorder and head.
	wo2 := RoundWorkOrder(t, s, "obj-1", 2)
	next := PullRequestParams(wo2, 7, T0.Add(time.Hour))
	next.HeadSHA = SHA2
	stored, created, err = s.RecordPullRequest(ctx, next)
	require.NoError(t, err)
	require.False(t, created)
	want := *first
	want.WorkOrderID, want.HeadSHA, want.UpdatedAt = wo2.WorkOrderID, SHA2, T0.Add(time.Hour)
	require.Equal(t, &want, stored, "adopted, rounds and created_at are the first record's")
	got, err = s.GetPullRequest(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, stored, got)
}

func testPullRequestConflict(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := RoundWorkOrder(t, s, "obj-1", 1)
	first, _, err := s.RecordPullRequest(ctx, PullRequestParams(wo, 7, T0))
	require.NoError(t, err)

	for name, mutate := range map[string]func(p *store.RecordPullRequestParams){
		"another number":     func(p *store.RecordPullRequestParams) { p.Number = 8 },
		"another repository": func(p *store.RecordPullRequestParams) { p.Repository = "azolla/fork" },
		"another forge":      func(p *store.RecordPullRequestParams) { p.Forge = forge.KindGitHub },
	} {
		p := PullRequestParams(wo, 7, T0.Add(time.Minute))
		mutate(&p)
		_, _, err := s.RecordPullRequest(ctx, p)
		require.ErrorIs(t, err, domain.ErrPullRequestConflict, name)
		var ce *domain.PullRequestConflictError
		require.ErrorAs(t, err, &ce, name)
		require.Equal(t, first, ce.Stored, name)
		require.Contains(t, err.Error(), first.URL, "the error names the pull request the objective has")
	}
	got, err := s.GetPullRequest(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, first, got, "a refused record writes nothing")

	// A pull request belongs to one objective: its head is that one's branch.
	other := RoundWorkOrder(t, s, "obj-2", 1)
	p := PullRequestParams(other, 7, T0)
	_, _, err = s.RecordPullRequest(ctx, p)
	require.ErrorIs(t, err, domain.ErrAlreadyExists)
	_, err = s.GetPullRequest(ctx, "obj-2")
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func testPullRequestReplaced(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := RoundWorkOrder(t, s, "obj-1", 1)
	_, _, err := s.RecordPullRequest(ctx, PullRequestParams(wo, 7, T0))
	require.NoError(t, err)
	_, err = s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1", To: "r1",
		ChecksSHA: SHA1, NewRound: true, Now: T0.Add(time.Minute)})
	require.NoError(t, err)
	closed, changed, err := s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "obj-1",
		State: domain.PullRequestClosed, Now: T0.Add(2 * time.Minute)})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, T0.Add(2*time.Minute), *closed.ClosedAt)

	wo2 := RoundWorkOrder(t, s, "obj-1", 2)
	p := PullRequestParams(wo2, 9, T0.Add(time.Hour))
	p.HeadSHA = SHA2
	fresh, created, err := s.RecordPullRequest(ctx, p)
	require.NoError(t, err)
	require.True(t, created, "a new pull request after the closed one")
	require.Equal(t, recorded(p), fresh, "state, rounds and feedback start afresh")
	got, err := s.GetPullRequest(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, fresh, got)

	// The closed one is no longer followed: recording it is a conflict.
	_, _, err = s.RecordPullRequest(ctx, PullRequestParams(wo2, 7, T0.Add(2*time.Hour)))
	require.ErrorIs(t, err, domain.ErrPullRequestConflict)
}

func testPullRequestRecordRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := RoundWorkOrder(t, s, "obj-1", 1)
	wo2 := RoundWorkOrder(t, s, "obj-2", 1)
	const racers = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created = map[string]int{}
		stored  = map[string]map[int]bool{}
		refused int
	)
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			// obj-1: every racer records the same pull request (OpenOrAdopt
			// adopted it for all); obj-2: each racer another one.
			p := PullRequestParams(wo, 7, T0)
			if i%2 == 1 {
				p = PullRequestParams(wo2, 100+i, T0)
			}
			pr, ok, err := s.RecordPullRequest(ctx, p)
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, domain.ErrPullRequestConflict) && p.ObjectiveID == "obj-2" {
				refused++
				return
			}
			if !assertNoError(t, err) {
				return
			}
			if ok {
				created[p.ObjectiveID]++
			}
			if stored[pr.ObjectiveID] == nil {
				stored[pr.ObjectiveID] = map[int]bool{}
			}
			stored[pr.ObjectiveID][pr.Number] = true
		})
	}
	close(start)
	wg.Wait()
	require.Equal(t, map[string]int{"obj-1": 1, "obj-2": 1}, created, "one record creates each objective's pull request")
	require.Equal(t, map[int]bool{7: true}, stored["obj-1"], "every recorder of obj-1 holds the same one")
	require.Len(t, stored["obj-2"], 1)
	require.Equal(t, racers/2-1, refused, "the other numbers of obj-2 are refused")
	list, err := s.ListPullRequests(ctx, store.ListPullRequestsParams{})
	require.NoError(t, err)
	require.Len(t, list, 2)
}

func testPullRequestInvalid(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := RoundWorkOrder(t, s, "obj-1", 1)
	other := RoundWorkOrder(t, s, "obj-2", 1)
	cases := []struct {
		name    string
		mutate  func(p *store.RecordPullRequestParams)
		pointer string
	}{
		{"number zero", func(p *store.RecordPullRequestParams) { p.Number = 0 }, "/number"},
		{"unknown forge", func(p *store.RecordPullRequestParams) { p.Forge = "bitbucket" }, "/forge"},
		{"repository path escape", func(p *store.RecordPullRequestParams) { p.Repository = "azolla/../../etc" }, "/repository"},
		{"script url", func(p *store.RecordPullRequestParams) { p.URL = "javascript:alert(1)" }, "/url"},
		{"url with escapes", func(p *store.RecordPullRequestParams) { p.URL = "https://x.org/1\x1b]0;pwned\x07" }, "/url"},
		{"short head", func(p *store.RecordPullRequestParams) { p.HeadSHA = "0123abc" }, "/head_sha"},
		{"base branch escape", func(p *store.RecordPullRequestParams) { p.BaseBranch = "main/../../x" }, "/base_branch"},
		{"head not a work branch", func(p *store.RecordPullRequestParams) { p.HeadBranch = "main" }, "/head_branch"},
	}
	for _, tc := range cases {
		p := PullRequestParams(wo, 7, T0)
		tc.mutate(&p)
		_, _, err := s.RecordPullRequest(ctx, p)
		requireViolation(t, err, tc.pointer)
	}

	// What the schema cannot say: the head is the objective's own branch,
	// and the workorder is the objective's.
	p := PullRequestParams(wo, 7, T0)
	p.HeadBranch = "azolla/obj-2"
	_, _, err := s.RecordPullRequest(ctx, p)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "/head_branch")
	p = PullRequestParams(wo, 7, T0)
	p.WorkOrderID = other.WorkOrderID
	_, _, err = s.RecordPullRequest(ctx, p)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "/work_order_id")
	p.WorkOrderID = "wo-missing"
	_, _, err = s.RecordPullRequest(ctx, p)
	require.ErrorIs(t, err, domain.ErrNotFound)
	p = PullRequestParams(wo, 7, T0)
	p.ObjectiveID, p.HeadBranch = "obj-missing", "azolla/obj-missing"
	_, _, err = s.RecordPullRequest(ctx, p)
	require.ErrorIs(t, err, domain.ErrNotFound)
	list, err := s.ListPullRequests(ctx, store.ListPullRequestsParams{})
	require.NoError(t, err)
	require.Empty(t, list, "no refused record was written")

	// A refused change of a recorded one leaves it as it was.
	first, _, err := s.RecordPullRequest(ctx, PullRequestParams(wo, 7, T0))
	require.NoError(t, err)
	bad := PullRequestParams(wo, 7, T0.Add(time.Minute))
	bad.HeadSHA = "not-a-sha"
	_, _, err = s.RecordPullRequest(ctx, bad)
	requireViolation(t, err, "/head_sha")
	_, err = s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1",
		To: "r1\x1b[2J", NewRound: true})
	requireViolation(t, err, "/review_cursor")
	_, err = s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1",
		ChecksSHA: "HEAD", NewRound: true})
	requireViolation(t, err, "/checks_sha")
	got, err := s.GetPullRequest(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, first, got)
}

func testPullRequestList(t *testing.T, s store.Store) {
	ctx := context.Background()
	// obj-b and obj-c share a created_at: the id breaks the tie.
	for _, c := range []struct {
		id     string
		number int
		at     time.Duration
		state  domain.PullRequestState
	}{
		{"obj-c", 3, time.Minute, domain.PullRequestOpen},
		{"obj-a", 1, 0, domain.PullRequestMerged},
		{"obj-b", 2, time.Minute, domain.PullRequestClosed},
		{"obj-d", 4, 2 * time.Minute, domain.PullRequestOpen},
	} {
		wo := RoundWorkOrder(t, s, c.id, 1)
		_, _, err := s.RecordPullRequest(ctx, PullRequestParams(wo, c.number, T0.Add(c.at)))
		require.NoError(t, err)
		if c.state != domain.PullRequestOpen {
			_, _, err := s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: c.id, State: c.state, Now: T0.Add(time.Hour)})
			require.NoError(t, err)
		}
	}
	ids := func(ps []*domain.PullRequest) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p.ObjectiveID
		}
		return out
	}
	all, err := s.ListPullRequests(ctx, store.ListPullRequestsParams{})
	require.NoError(t, err)
	require.Equal(t, []string{"obj-a", "obj-b", "obj-c", "obj-d"}, ids(all))

	var paged []string
	for after := (domain.Cursor{}); ; {
		page, err := s.ListPullRequests(ctx, store.ListPullRequestsParams{After: after, Limit: 3})
		require.NoError(t, err)
		paged = append(paged, ids(page)...)
		if len(page) < 3 {
			break
		}
		last := page[len(page)-1]
		after = domain.Cursor{CreatedAt: last.CreatedAt, ID: last.ObjectiveID}
	}
	require.Equal(t, ids(all), paged, "keyset pages cover every row once")

	open, err := s.ListPullRequests(ctx, store.ListPullRequestsParams{States: []domain.PullRequestState{domain.PullRequestOpen}})
	require.NoError(t, err)
	require.Equal(t, []string{"obj-c", "obj-d"}, ids(open))
	settled, err := s.ListPullRequests(ctx, store.ListPullRequestsParams{
		States: []domain.PullRequestState{domain.PullRequestMerged, domain.PullRequestClosed},
		After:  domain.Cursor{CreatedAt: T0, ID: "obj-a"}})
	require.NoError(t, err)
	require.Equal(t, []string{"obj-b"}, ids(settled))
}

// testPullRequestInTx: a refusal inside a caller's transaction leaves the
// transaction usable (PostgreSQL aborts one at its first failed statement),
// and a record rolled back with it is gone.
func testPullRequestInTx(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := RoundWorkOrder(t, s, "obj-1", 1)
	wo2 := RoundWorkOrder(t, s, "obj-2", 1)
	_, _, err := s.RecordPullRequest(ctx, PullRequestParams(wo, 7, T0))
	require.NoError(t, err)
	require.NoError(t, s.InTx(ctx, func(q store.Querier) error {
		_, _, err := q.RecordPullRequest(ctx, PullRequestParams(wo, 8, T0))
		require.ErrorIs(t, err, domain.ErrPullRequestConflict)
		_, _, err = q.RecordPullRequest(ctx, PullRequestParams(wo2, 7, T0))
		require.ErrorIs(t, err, domain.ErrAlreadyExists)
		_, err = q.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1", From: "x", To: "y"})
		require.ErrorIs(t, err, domain.ErrPullRequestStale)
		_, _, err = q.RecordPullRequest(ctx, PullRequestParams(wo2, 9, T0))
		return err
	}))
	got, err := s.GetPullRequest(ctx, "obj-2")
	require.NoError(t, err)
	require.Equal(t, 9, got.Number)

	rollback := errors.New("roll back")
	wo3 := RoundWorkOrder(t, s, "obj-3", 1)
	err = s.InTx(ctx, func(q store.Querier) error {
		if _, _, err := q.RecordPullRequest(ctx, PullRequestParams(wo3, 11, T0)); err != nil {
			return err
		}
		return rollback
	})
	require.ErrorIs(t, err, rollback)
	_, err = s.GetPullRequest(ctx, "obj-3")
	require.ErrorIs(t, err, domain.ErrNotFound)
}
