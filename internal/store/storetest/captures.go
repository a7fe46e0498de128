package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// Capture returns a valid PENDING capture taken at.
func Capture(id string, at time.Time) *domain.CaptureBuffer {
	return &domain.CaptureBuffer{CaptureBufferID: id, Source: "test", Content: "Capture " + id,
		Status: domain.CapturePending, CreatedAt: at, UpdatedAt: at}
}

// exerciseCaptures: capture readiness. One CAPTURE_READY event per capture,
// however many emit it at once; the PENDING captures without one are paged
// through by keyset, and a capture drops out of that listing once its
// event exists or it is PROCESSED.
func exerciseCaptures(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("AddCapture_TheCaptureAndItsEventOrNeither", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		ev, err := store.AddCapture(ctx, s, Capture("cap-add", T0), T0)
		require.NoError(t, err)
		require.Equal(t, domain.EventCaptureReady, ev.EventType)
		require.Equal(t, "cap-add", ev.SubjectID)
		_, err = s.GetCaptureBuffer(ctx, "cap-add")
		require.NoError(t, err)

		_, err = store.AddCapture(ctx, s, Capture("cap-add", T0), T0)
		require.ErrorIs(t, err, domain.ErrAlreadyExists, "the same capture twice")
		bad := Capture("cap-bad", T0)
		bad.Content = ""
		_, err = store.AddCapture(ctx, s, bad, T0)
		require.Error(t, err, "a capture the schema refuses")
		evs, err := s.ListEvents(ctx, store.ListEventsParams{EventType: domain.EventCaptureReady})
		require.NoError(t, err)
		require.Len(t, evs, 1, "a refused capture emits no event")
	})
	t.Run("CaptureReady_OneEventWhateverTheNumberOfEmitters", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		require.NoError(t, s.CreateCaptureBuffer(ctx, Capture("cap-1", T0)))
		const emitters = 8
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			created int
			ids     = map[string]bool{}
		)
		start := make(chan struct{})
		for range emitters {
			wg.Go(func() {
				<-start
				ev, ok, err := store.EmitCaptureReady(ctx, s, "cap-1", T0)
				if !assertNoError(t, err) {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if ok {
					created++
				}
				ids[ev.EventID] = true
			})
		}
		close(start)
		wg.Wait()
		require.Equal(t, 1, created, "exactly one emitter creates the event")
		require.Len(t, ids, 1, "every emitter is handed the same event")
		evs, err := s.ListEvents(ctx, store.ListEventsParams{EventType: domain.EventCaptureReady, SubjectID: "cap-1"})
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, store.CaptureReadySeq, evs[0].TransitionSeq)
		require.False(t, evs[0].Processed)

		// In a transaction with the capture itself, as the CLI writes it.
		require.NoError(t, s.InTx(ctx, func(q store.Querier) error {
			if err := q.CreateCaptureBuffer(ctx, Capture("cap-2", T0)); err != nil {
				return err
			}
			_, ok, err := store.EmitCaptureReady(ctx, q, "cap-2", T0)
			require.True(t, ok)
			return err
		}))
		_, ok, err := store.EmitCaptureReady(ctx, s, "cap-2", T0)
		require.NoError(t, err)
		require.False(t, ok)
	})

	t.Run("CapturesWithoutEvent_KeysetPagesOfPendingOnly", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		// cap-b and cap-c share a created_at: the id breaks the tie.
		for _, c := range []struct {
			id     string
			at     time.Duration
			status string
		}{{"cap-c", time.Second, domain.CapturePending}, {"cap-a", 0, domain.CapturePending},
			{"cap-e", 3 * time.Second, domain.CapturePending}, {"cap-b", time.Second, domain.CapturePending},
			{"cap-d", 2 * time.Second, domain.CapturePending}, {"cap-done", 0, domain.CaptureProcessed}} {
			cb := Capture(c.id, T0.Add(c.at))
			cb.Status = c.status
			require.NoError(t, s.CreateCaptureBuffer(ctx, cb))
		}
		all := func() []string {
			var ids []string
			var after domain.Cursor
			for pages := 0; ; pages++ {
				require.Less(t, pages, 10, "the pages end")
				page, err := s.ListCapturesWithoutEvent(ctx, store.PageParams{After: after, Limit: 2})
				require.NoError(t, err)
				require.LessOrEqual(t, len(page), 2)
				if len(page) == 0 {
					return ids
				}
				for _, c := range page {
					ids = append(ids, c.CaptureBufferID)
				}
				last := page[len(page)-1]
				after = domain.Cursor{CreatedAt: last.CreatedAt, ID: last.CaptureBufferID}
			}
		}
		require.Equal(t, []string{"cap-a", "cap-b", "cap-c", "cap-d", "cap-e"}, all())

		_, _, err := store.EmitCaptureReady(ctx, s, "cap-c", T0)
		require.NoError(t, err)
		// An event of another type about the same id does not count.
		_, _, err = s.EmitEvent(ctx, Event("ev-other", "cap-d", 0, T0))
		require.NoError(t, err)
		require.Equal(t, []string{"cap-a", "cap-b", "cap-d", "cap-e"}, all())

		page, err := s.ListCapturesWithoutEvent(ctx, store.PageParams{})
		require.NoError(t, err)
		require.Len(t, page, 4, "zero limit means no limit")
		require.Equal(t, Capture("cap-a", T0), page[0], "the record comes back as written")
	})
}

// assertNoError reports err from a goroutine other than the test's, where
// require must not be called.
func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("unexpected error: %v", err)
		return false
	}
	return true
}
