package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// exerciseCaptureTriage: a capture's way through triage. Untaken PENDING
// captures are listed oldest first; a triage workorder takes all of the
// captures it asks for or none, may take them again on a retry, processes
// only its own, once, and releases only its own PENDING ones, once, each
// with its next CAPTURE_READY event.
func exerciseCaptureTriage(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("Captures_UntakenOldestFirstWithinLimit", func(t *testing.T) { testUntakenCaptures(t, open(t)) })
	t.Run("Captures_TakenAllOrNone", func(t *testing.T) { testTakeCaptures(t, open(t)) })
	t.Run("Captures_TakenAllOrNoneInsideATransaction", func(t *testing.T) { testTakeCapturesInTx(t, open(t)) })
	t.Run("Captures_ProcessedOnceByTheirWorkOrder", func(t *testing.T) { testProcessCapture(t, open(t)) })
	t.Run("Captures_ReleasedOnceByTheirWorkOrderWithANewEvent", func(t *testing.T) { testReleaseCaptures(t, open(t)) })
	t.Run("Captures_ReleasedInsideATransactionOrNotAtAll", func(t *testing.T) { testReleaseCapturesInTx(t, open(t)) })
}

func createCaptures(t *testing.T, s store.Querier, ids ...string) {
	t.Helper()
	for i, id := range ids {
		require.NoError(t, s.CreateCaptureBuffer(context.Background(), Capture(id, T0.Add(time.Duration(i)*time.Second))))
	}
}

func untaken(t *testing.T, s store.Querier, n int) []string {
	t.Helper()
	cs, err := s.ListUntakenCaptures(context.Background(), n)
	require.NoError(t, err)
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.CaptureBufferID)
	}
	return ids
}

func testUntakenCaptures(t *testing.T, s store.Store) {
	ctx := context.Background()
	// cap-b and cap-c share a created_at: the id breaks the tie.
	for _, c := range []struct {
		id string
		at time.Duration
	}{{"cap-c", time.Second}, {"cap-a", 0}, {"cap-e", 3 * time.Second}, {"cap-b", time.Second}, {"cap-d", 2 * time.Second}} {
		require.NoError(t, s.CreateCaptureBuffer(ctx, Capture(c.id, T0.Add(c.at))))
	}
	done := Capture("cap-done", T0)
	done.Status, done.ObjectiveIDs = domain.CaptureProcessed, []string{"obj-1"}
	require.NoError(t, s.CreateCaptureBuffer(ctx, done))
	got, err := s.GetCaptureBuffer(ctx, "cap-done")
	require.NoError(t, err)
	require.Equal(t, done, got, "a processed capture comes back as written")

	require.Equal(t, []string{"cap-a", "cap-b", "cap-c", "cap-d", "cap-e"}, untaken(t, s, 0), "zero limit means no limit")
	require.Equal(t, []string{"cap-a", "cap-b"}, untaken(t, s, 2))

	require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: "wo-1", CaptureBufferIDs: []string{"cap-b"}}))
	require.Equal(t, []string{"cap-a", "cap-c", "cap-d"}, untaken(t, s, 3), "a taken capture drops out")

	page, err := s.ListUntakenCaptures(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, []*domain.CaptureBuffer{Capture("cap-a", T0)}, page, "the record comes back as written")
}

func testTakeCaptures(t *testing.T, s store.Store) {
	ctx := context.Background()
	createCaptures(t, s, "cap-1", "cap-2", "cap-3", "cap-4")
	take := func(wo string, ids ...string) error {
		return s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: wo, CaptureBufferIDs: ids, Now: T0.Add(time.Hour)})
	}
	require.NoError(t, take("wo-1", "cap-1", "cap-2"))
	got, err := s.GetCaptureBuffer(ctx, "cap-1")
	require.NoError(t, err)
	want := Capture("cap-1", T0)
	want.WorkOrderID, want.UpdatedAt = "wo-1", T0.Add(time.Hour)
	require.Equal(t, want, got)

	// wo-2 asks for a free capture and one wo-1 holds: it gets neither.
	err = take("wo-2", "cap-3", "cap-2")
	var te *domain.TransitionError
	require.ErrorAs(t, err, &te)
	require.ErrorIs(t, err, domain.ErrInvalidTransition)
	require.Equal(t, "cap-2", te.ObjectiveID)
	require.Contains(t, err.Error(), "capture cap-2")
	require.Contains(t, err.Error(), "wo-1")
	free, err := s.GetCaptureBuffer(ctx, "cap-3")
	require.NoError(t, err)
	require.Equal(t, Capture("cap-3", T0.Add(2*time.Second)), free, "a refused take changes nothing")
	require.Equal(t, []string{"cap-3", "cap-4"}, untaken(t, s, 0))

	// A retry by the same workorder is fine and takes the rest.
	require.NoError(t, take("wo-1", "cap-1", "cap-2", "cap-3"))
	require.Equal(t, []string{"cap-4"}, untaken(t, s, 0))
	again, err := s.GetCaptureBuffer(ctx, "cap-1")
	require.NoError(t, err)
	require.Equal(t, want, again, "taking again changes nothing")

	// A processed capture cannot be taken, even by its own workorder.
	_, err = s.ProcessCapture(ctx, store.ProcessCaptureParams{CaptureBufferID: "cap-1", WorkOrderID: "wo-1"})
	require.NoError(t, err)
	require.ErrorIs(t, take("wo-1", "cap-4", "cap-1"), domain.ErrInvalidTransition)
	require.Equal(t, []string{"cap-4"}, untaken(t, s, 0))
	require.ErrorIs(t, take("wo-1", "cap-4", "nope"), domain.ErrNotFound)
	require.Equal(t, []string{"cap-4"}, untaken(t, s, 0))

	// A workorder id the schema refuses is refused before anything is written.
	requireViolation(t, take("../wo", "cap-4"), "/work_order_id")
	require.Equal(t, []string{"cap-4"}, untaken(t, s, 0))
}

// testTakeCapturesInTx: a refused take inside a caller's transaction leaves
// nothing behind, and the transaction goes on (on PostgreSQL too, where a
// failed statement would abort it).
func testTakeCapturesInTx(t *testing.T, s store.Store) {
	ctx := context.Background()
	createCaptures(t, s, "cap-1", "cap-2", "cap-3")
	require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: "wo-1", CaptureBufferIDs: []string{"cap-2"}}))
	require.NoError(t, s.InTx(ctx, func(q store.Querier) error {
		err := q.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: "wo-2", CaptureBufferIDs: []string{"cap-1", "cap-2"}})
		require.ErrorIs(t, err, domain.ErrInvalidTransition)
		require.Equal(t, []string{"cap-1", "cap-3"}, untaken(t, q, 0), "nothing taken inside the transaction")
		return q.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: "wo-2", CaptureBufferIDs: []string{"cap-1"}})
	}))
	require.Equal(t, []string{"cap-3"}, untaken(t, s, 0))
	c, err := s.GetCaptureBuffer(ctx, "cap-1")
	require.NoError(t, err)
	require.Equal(t, "wo-2", c.WorkOrderID)
}

func testProcessCapture(t *testing.T, s store.Store) {
	ctx := context.Background()
	createCaptures(t, s, "cap-1", "cap-2", "cap-3")
	require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: "wo-1", CaptureBufferIDs: []string{"cap-1", "cap-2"}, Now: T0}))
	process := func(id, wo string, objectives ...string) (*domain.CaptureBuffer, error) {
		return s.ProcessCapture(ctx, store.ProcessCaptureParams{CaptureBufferID: id, WorkOrderID: wo,
			ObjectiveIDs: objectives, Now: T0.Add(time.Hour)})
	}

	_, err := process("cap-1", "wo-2", "obj-x")
	require.ErrorIs(t, err, domain.ErrInvalidTransition, "another workorder's capture")
	_, err = process("cap-3", "wo-1", "obj-x")
	require.ErrorIs(t, err, domain.ErrInvalidTransition, "an untaken capture")
	_, err = process("cap-1", "wo-1", "../obj")
	requireViolation(t, err, "/objective_ids/0")
	_, err = process("nope", "wo-1")
	require.ErrorIs(t, err, domain.ErrNotFound)
	for _, id := range []string{"cap-1", "cap-3"} {
		c, err := s.GetCaptureBuffer(ctx, id)
		require.NoError(t, err)
		require.Equal(t, domain.CapturePending, c.Status, "refused processing changes nothing")
		require.Nil(t, c.ObjectiveIDs)
	}

	done, err := process("cap-1", "wo-1", "obj-1", "obj-2")
	require.NoError(t, err)
	want := Capture("cap-1", T0)
	want.Status, want.WorkOrderID, want.ObjectiveIDs, want.UpdatedAt = domain.CaptureProcessed, "wo-1", []string{"obj-1", "obj-2"}, T0.Add(time.Hour)
	require.Equal(t, want, done)
	got, err := s.GetCaptureBuffer(ctx, "cap-1")
	require.NoError(t, err)
	require.Equal(t, want, got)

	again, err := s.ProcessCapture(ctx, store.ProcessCaptureParams{CaptureBufferID: "cap-1", WorkOrderID: "wo-1",
		ObjectiveIDs: []string{"obj-3"}, Now: T0.Add(2 * time.Hour)})
	require.NoError(t, err, "processing again by the same workorder is a no-op")
	require.Equal(t, want, again, "the first processing is kept")
	_, err = process("cap-1", "wo-2")
	require.ErrorIs(t, err, domain.ErrInvalidTransition)

	// A capture that became no objective is processed with an empty list.
	none, err := process("cap-2", "wo-1")
	require.NoError(t, err)
	require.Equal(t, []string{}, none.ObjectiveIDs)
	got, err = s.GetCaptureBuffer(ctx, "cap-2")
	require.NoError(t, err)
	require.Equal(t, none, got)
	require.Equal(t, []string{"cap-3"}, untaken(t, s, 0))
}
