package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// captureReadySeqs lists the transition_seq of each CAPTURE_READY event of
// a capture, with whether it is processed.
func captureReadySeqs(t *testing.T, s store.Querier, id string) map[int64]bool {
	t.Helper()
	evs, err := s.ListEvents(context.Background(), store.ListEventsParams{})
	require.NoError(t, err)
	out := map[int64]bool{}
	for _, e := range evs {
		if e.EventType == domain.EventCaptureReady && e.SubjectID == id {
			out[e.TransitionSeq] = e.Processed
		}
	}
	return out
}

func testReleaseCaptures(t *testing.T, s store.Store) {
	ctx := context.Background()
	createCaptures(t, s, "cap-1", "cap-2", "cap-3", "cap-4")
	first, _, err := store.EmitCaptureReady(ctx, s, "cap-1", T0)
	require.NoError(t, err)
	_, err = s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: first.EventID, Reason: domain.ReasonScheduled, Now: T0})
	require.NoError(t, err)
	require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: "wo-1",
		CaptureBufferIDs: []string{"cap-1", "cap-2", "cap-3"}, Now: T0}))
	require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: "wo-2", CaptureBufferIDs: []string{"cap-4"}, Now: T0}))
	_, err = s.ProcessCapture(ctx, store.ProcessCaptureParams{CaptureBufferID: "cap-3", WorkOrderID: "wo-1",
		ObjectiveIDs: []string{"obj-3"}, Now: T0})
	require.NoError(t, err)
	release := func(wo string, at time.Duration, ids ...string) []*domain.Event {
		t.Helper()
		evs, err := s.ReleaseCaptures(ctx, store.ReleaseCapturesParams{WorkOrderID: wo, CaptureBufferIDs: ids, Now: T0.Add(at)})
		require.NoError(t, err)
		return evs
	}

	// wo-1 releases its PENDING captures; its PROCESSED one, wo-2's and
	// one that does not exist are left as they are.
	evs := release("wo-1", time.Hour, "cap-1", "cap-2", "cap-3", "cap-4", "nope")
	require.Len(t, evs, 2)
	for i, want := range []struct {
		id  string
		seq int64
	}{{"cap-1", 1}, {"cap-2", 0}} {
		require.Equal(t, domain.EventCaptureReady, evs[i].EventType)
		require.Equal(t, want.id, evs[i].SubjectID)
		require.Equal(t, want.seq, evs[i].TransitionSeq, "%s: one past its last CAPTURE_READY event", want.id)
		require.False(t, evs[i].Processed)
		require.Equal(t, T0.Add(time.Hour), evs[i].CreatedAt)
		stored, err := s.GetEvent(ctx, evs[i].EventID)
		require.NoError(t, err)
		require.Equal(t, evs[i], stored)
	}
	released := Capture("cap-1", T0)
	released.UpdatedAt = T0.Add(time.Hour)
	got, err := s.GetCaptureBuffer(ctx, "cap-1")
	require.NoError(t, err)
	require.Equal(t, released, got, "PENDING and untaken again")
	require.Equal(t, []string{"cap-1", "cap-2"}, untaken(t, s, 0))
	for id, wo := range map[string]string{"cap-3": "wo-1", "cap-4": "wo-2"} {
		c, err := s.GetCaptureBuffer(ctx, id)
		require.NoError(t, err)
		require.Equal(t, wo, c.WorkOrderID, id)
		require.Equal(t, T0, c.UpdatedAt, "%s is not touched", id)
	}
	require.Equal(t, domain.CaptureProcessed, mustCapture(t, s, "cap-3").Status)

	// A second release (a retried gate) finds nothing to release.
	require.Empty(t, release("wo-1", 2*time.Hour, "cap-1", "cap-2", "cap-3"))
	require.Equal(t, map[int64]bool{0: true, 1: false}, captureReadySeqs(t, s, "cap-1"))
	require.Equal(t, T0.Add(time.Hour), mustCapture(t, s, "cap-1").UpdatedAt)

	// Taken by the next round, which fails too: released with the next event.
	require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: "wo-3", CaptureBufferIDs: []string{"cap-1"}, Now: T0}))
	require.Empty(t, release("wo-1", 3*time.Hour, "cap-1"), "the old round cannot release the new round's capture")
	evs = release("wo-3", 3*time.Hour, "cap-1")
	require.Len(t, evs, 1)
	require.Equal(t, int64(2), evs[0].TransitionSeq)
	require.Equal(t, map[int64]bool{0: true, 1: false, 2: false}, captureReadySeqs(t, s, "cap-1"))

	_, err = s.ReleaseCaptures(ctx, store.ReleaseCapturesParams{CaptureBufferIDs: []string{"cap-4"}})
	require.Error(t, err, "a release names its workorder")
	require.Equal(t, "wo-2", mustCapture(t, s, "cap-4").WorkOrderID)
}

// testReleaseCapturesInTx: a release rolled back with its caller's
// transaction leaves the captures taken and emits nothing.
func testReleaseCapturesInTx(t *testing.T, s store.Store) {
	ctx := context.Background()
	createCaptures(t, s, "cap-1")
	require.NoError(t, s.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: "wo-1", CaptureBufferIDs: []string{"cap-1"}}))
	boom := errors.New("the gate failed later in its transaction")
	err := s.InTx(ctx, func(q store.Querier) error {
		evs, err := q.ReleaseCaptures(ctx, store.ReleaseCapturesParams{WorkOrderID: "wo-1", CaptureBufferIDs: []string{"cap-1"}})
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, []string{"cap-1"}, untaken(t, q, 0))
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, "wo-1", mustCapture(t, s, "cap-1").WorkOrderID)
	require.Empty(t, captureReadySeqs(t, s, "cap-1"))
}

func mustCapture(t *testing.T, s store.Querier, id string) *domain.CaptureBuffer {
	t.Helper()
	c, err := s.GetCaptureBuffer(context.Background(), id)
	require.NoError(t, err)
	return c
}
