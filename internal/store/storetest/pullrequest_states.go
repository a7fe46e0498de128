package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// A pull request's state as the forge reports it, by the diagram on
// store.PullRequestState: MERGED is final.

func testPullRequestMergedFinal(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := RoundWorkOrder(t, s, "obj-1", 1)
	_, _, err := s.RecordPullRequest(ctx, PullRequestParams(wo, 7, T0))
	require.NoError(t, err)
	at := T0.Add(time.Hour)
	merged, changed, err := s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "obj-1",
		State: domain.PullRequestMerged, HeadSHA: SHA2, Now: at})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, domain.PullRequestMerged, merged.State)
	require.Equal(t, at, *merged.MergedAt)
	require.Nil(t, merged.ClosedAt)
	require.Equal(t, SHA2, merged.HeadSHA, "the head the forge merged")
	require.Equal(t, at, merged.UpdatedAt)

	again, changed, err := s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "obj-1",
		State: domain.PullRequestMerged, HeadSHA: SHA2, Now: at.Add(time.Hour)})
	require.NoError(t, err)
	require.False(t, changed, "seeing it merged again is no move")
	require.Equal(t, merged, again)

	for _, to := range []domain.PullRequestState{domain.PullRequestOpen, domain.PullRequestClosed} {
		_, _, err := s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "obj-1", State: to, Now: at.Add(time.Hour)})
		require.ErrorIs(t, err, domain.ErrInvalidTransition, to)
		require.ErrorContains(t, err, "final")
		require.ErrorContains(t, err, "is MERGED")
	}
	_, _, err = s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "obj-1",
		State: domain.PullRequestMerged, HeadSHA: SHA3, Now: at.Add(time.Hour)})
	require.ErrorIs(t, err, domain.ErrInvalidTransition, "not even its head moves")

	// Recording it again: a repeat is fine, a new push is refused, another
	// pull request conflicts.
	p := PullRequestParams(wo, 7, at.Add(time.Hour))
	p.HeadSHA = SHA2
	stored, created, err := s.RecordPullRequest(ctx, p)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, merged, stored)
	wo2 := RoundWorkOrder(t, s, "obj-1", 2)
	_, _, err = s.RecordPullRequest(ctx, PullRequestParams(wo2, 7, at.Add(time.Hour)))
	require.ErrorIs(t, err, domain.ErrInvalidTransition)
	_, _, err = s.RecordPullRequest(ctx, PullRequestParams(wo2, 8, at.Add(time.Hour)))
	require.ErrorIs(t, err, domain.ErrPullRequestConflict)
	_, err = s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1", To: "r1",
		NewRound: true, Now: at.Add(time.Hour)})
	require.ErrorIs(t, err, domain.ErrInvalidTransition, "no round on a merged pull request")

	got, err := s.GetPullRequest(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, merged, got, "every refusal wrote nothing")
}

func testPullRequestStates(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := RoundWorkOrder(t, s, "obj-1", 1)
	first, _, err := s.RecordPullRequest(ctx, PullRequestParams(wo, 7, T0))
	require.NoError(t, err)
	update := func(state domain.PullRequestState, head string, at time.Duration) (*domain.PullRequest, bool, error) {
		return s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "obj-1", State: state,
			HeadSHA: head, Now: T0.Add(at)})
	}

	same, changed, err := update(domain.PullRequestOpen, "", time.Minute)
	require.NoError(t, err)
	require.False(t, changed)
	require.Equal(t, first, same)
	moved, changed, err := update(domain.PullRequestOpen, SHA2, time.Minute)
	require.NoError(t, err)
	require.True(t, changed, "a new head on an open pull request")
	require.Equal(t, SHA2, moved.HeadSHA)

	closed, changed, err := update(domain.PullRequestClosed, "", 2*time.Minute)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, T0.Add(2*time.Minute), *closed.ClosedAt)
	reopened, changed, err := update(domain.PullRequestOpen, "", 3*time.Minute)
	require.NoError(t, err)
	require.True(t, changed)
	require.Nil(t, reopened.ClosedAt, "reopening clears closed_at")
	_, _, err = update(domain.PullRequestClosed, "", 4*time.Minute)
	require.NoError(t, err)
	merged, changed, err := update(domain.PullRequestMerged, "", 5*time.Minute)
	require.NoError(t, err)
	require.True(t, changed, "reopened and merged between two looks")
	require.Nil(t, merged.ClosedAt)
	require.Equal(t, T0.Add(5*time.Minute), *merged.MergedAt)
	got, err := s.GetPullRequest(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, merged, got)

	wo2 := RoundWorkOrder(t, s, "obj-2", 1)
	_, _, err = s.RecordPullRequest(ctx, PullRequestParams(wo2, 8, T0))
	require.NoError(t, err)
	_, _, err = s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "obj-2", State: "DRAFT"})
	requireViolation(t, err, "/state")
	_, _, err = s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "obj-2",
		State: domain.PullRequestOpen, HeadSHA: "abc"})
	requireViolation(t, err, "/head_sha")
	_, _, err = s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "obj-3", State: domain.PullRequestClosed})
	require.ErrorIs(t, err, domain.ErrNotFound)
}
