package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// Feedback taken once: the review cursor's compare-and-swap and the head
// whose failing checks were taken, each starting at most one round.

// FeedbackTakenOnce checks the guards of AdvancePullRequestCursor on a
// fresh store: a restart, or a second worker, that read the review cursor
// before the first caller advanced it must not take the same reviews into
// a second round; the failing checks of one head start one round; and no
// round starts on a pull request that is not open. It returns what went
// wrong, so that the mutation tests can require it to notice a broken
// guard.
func FeedbackTakenOnce(ctx context.Context, s store.Store) error {
	wo, err := roundWorkOrder(ctx, s, "obj-1", 1)
	if err != nil {
		return err
	}
	if _, _, err := s.RecordPullRequest(ctx, PullRequestParams(wo, 7, T0)); err != nil {
		return err
	}
	advance := func(from, to, checks string) (*domain.PullRequest, error) {
		return s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1", From: from,
			To: to, ChecksSHA: checks, NewRound: true, Now: T0.Add(time.Minute)})
	}
	want := func(step, cursor, checks string, rounds int) error {
		got, err := s.GetPullRequest(ctx, "obj-1")
		if err != nil {
			return err
		}
		if got.ReviewCursor != cursor || got.ChecksSHA != checks || got.Rounds != rounds {
			return fmt.Errorf("%s: want cursor %q, checks %q, round %d; got %q, %q, %d",
				step, cursor, checks, rounds, got.ReviewCursor, got.ChecksSHA, got.Rounds)
		}
		return nil
	}

	if _, err := advance("", "r1", ""); err != nil {
		return fmt.Errorf("first advance from the empty cursor: %w", err)
	}
	_, err = advance("", "r2", "")
	var stale *domain.PullRequestStaleError
	if !errors.As(err, &stale) || !errors.Is(err, domain.ErrPullRequestStale) || stale.ReviewCursor != "r1" {
		return fmt.Errorf("second advance from the empty cursor: want a stale refusal finding r1, got %v", err)
	}
	if err := want("after the refused review", "r1", "", 2); err != nil {
		return err
	}

	if _, err := advance("r1", "r1", SHA1); err != nil {
		return fmt.Errorf("taking the failing checks of %s: %w", SHA1, err)
	}
	if _, err = advance("r1", "r1", SHA1); !errors.Is(err, domain.ErrPullRequestStale) {
		return fmt.Errorf("taking the failing checks of %s again: want a stale refusal, got %v", SHA1, err)
	}
	if err := want("after the refused checks", "r1", SHA1, 3); err != nil {
		return err
	}

	if _, _, err := s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "obj-1",
		State: domain.PullRequestClosed, Now: T0.Add(time.Hour)}); err != nil {
		return err
	}
	if _, err = advance("r1", "r2", ""); !errors.Is(err, domain.ErrInvalidTransition) {
		return fmt.Errorf("a new round on a closed pull request: want a refused transition, got %v", err)
	}
	return want("after the refused round", "r1", SHA1, 3)
}

func testPullRequestCursorRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := RoundWorkOrder(t, s, "obj-1", 1)
	_, _, err := s.RecordPullRequest(ctx, PullRequestParams(wo, 7, T0))
	require.NoError(t, err)
	const racers = 8
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		won   []string
		stale int
	)
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			to := fmt.Sprintf("r-%d", i)
			_, err := s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1",
				From: "", To: to, NewRound: true, Now: T0.Add(time.Minute)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, to)
			case errors.Is(err, domain.ErrPullRequestStale):
				stale++
			default:
				t.Errorf("advance %s: %v", to, err)
			}
		})
	}
	close(start)
	wg.Wait()
	require.Len(t, won, 1, "exactly one caller takes the reviews")
	require.Equal(t, racers-1, stale)
	got, err := s.GetPullRequest(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, won[0], got.ReviewCursor)
	require.Equal(t, 2, got.Rounds, "one round for one batch of reviews")
}

func testPullRequestChecks(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := RoundWorkOrder(t, s, "obj-1", 1)
	_, _, err := s.RecordPullRequest(ctx, PullRequestParams(wo, 7, T0))
	require.NoError(t, err)
	checks := func(sha string) (*domain.PullRequest, error) {
		return s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1",
			ChecksSHA: sha, NewRound: true, Now: T0.Add(time.Minute)})
	}
	taken, err := checks(SHA1)
	require.NoError(t, err)
	require.Equal(t, SHA1, taken.ChecksSHA)
	require.Equal(t, 2, taken.Rounds)
	require.Empty(t, taken.ReviewCursor, "taking checks leaves the review cursor")
	_, err = checks(SHA1)
	require.ErrorIs(t, err, domain.ErrPullRequestStale, "the failing checks of one head start one round")
	require.ErrorContains(t, err, SHA1)
	again, err := checks(SHA2)
	require.NoError(t, err)
	require.Equal(t, 3, again.Rounds)

	// Taking reviews keeps the checks taken.
	reviewed, err := s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1",
		To: "r1", Now: T0.Add(2 * time.Minute)})
	require.NoError(t, err)
	require.Equal(t, SHA2, reviewed.ChecksSHA)
	require.Equal(t, 3, reviewed.Rounds, "no new round unless asked")

	_, err = s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1", From: "r1", To: "r1"})
	require.ErrorIs(t, err, domain.ErrInvalid, "an advance that changes nothing is a caller's mistake")
	asked, err := s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-1",
		From: "r1", To: "r1", NewRound: true, Now: T0.Add(3 * time.Minute)})
	require.NoError(t, err, "a round a human asked for takes no feedback")
	require.Equal(t, 4, asked.Rounds)
	require.Equal(t, "r1", asked.ReviewCursor)
	reviewed = asked
	_, err = s.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{ObjectiveID: "obj-2", To: "r1"})
	require.ErrorIs(t, err, domain.ErrNotFound)
	got, err := s.GetPullRequest(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, reviewed, got)
}
