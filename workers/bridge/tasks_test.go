package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers/bridge"
	"github.com/azolla/azolla/workflows"
)

// captured writes a capture and its CAPTURE_READY event straight into the
// store (not handed over), at the bundle's clock.
func (b *pollerBundle) captured(t *testing.T, id string) *domain.Event {
	t.Helper()
	ctx, now := context.Background(), b.clock.Now()
	require.NoError(t, b.store.CreateCaptureBuffer(ctx, &domain.CaptureBuffer{CaptureBufferID: id, Source: "test",
		Content: "note " + id, Status: domain.CapturePending, CreatedAt: now, UpdatedAt: now}))
	ev, _, err := store.EmitCaptureReady(ctx, b.store, id, now)
	require.NoError(t, err)
	return ev
}

func TestPoller_HandsTrackEventsToTheTrackOnce(t *testing.T) {
	b := setupPoller(t)
	p := b.poller(t, "p1", 10, 0)
	capEv := b.captured(t, "cap-1")
	mr, err := store.RequestManifest(context.Background(), b.store, "", b.clock.Now())
	require.NoError(t, err)

	c := pass(t, p)
	require.Equal(t, 2, c.Enqueued)
	items, calls := b.temporal.trackItems(workflows.DefaultTrack)
	require.Equal(t, []string{capEv.EventID, mr.EventID}, items, "triage's event, then the manifest's")
	require.Equal(t, 2, calls)

	// Handed over: the next pass asks Temporal nothing.
	c = pass(t, p)
	require.Zero(t, c.Enqueued)
	_, calls = b.temporal.trackItems(workflows.DefaultTrack)
	require.Equal(t, 2, calls)
}

func TestPoller_TrackEventFailuresAreCountedAndRetried(t *testing.T) {
	b := setupPoller(t)
	p := b.poller(t, "p1", 10, 0)
	ev := b.captured(t, "cap-1")
	b.temporal.mu.Lock()
	b.temporal.failEnqueue = errors.New("frontend unavailable")
	b.temporal.mu.Unlock()

	c := pass(t, p)
	require.Equal(t, 1, c.Failed)
	require.Zero(t, c.Enqueued)

	b.temporal.mu.Lock()
	b.temporal.failEnqueue = nil
	b.temporal.mu.Unlock()
	c = pass(t, p)
	require.Equal(t, 1, c.Enqueued)
	items, _ := b.temporal.trackItems(workflows.DefaultTrack)
	require.Equal(t, []string{ev.EventID}, items)
}

// An event the track was given but has not processed for a lease is given
// again: a track that lost it (terminated, reset) gets it back, and one
// that has it takes the duplicate as a no-op.
func TestPoller_HandsAStaleTrackEventAgain(t *testing.T) {
	b := setupPoller(t)
	p := b.poller(t, "p1", 10, 0)
	ev := b.captured(t, "cap-1")
	require.Equal(t, 1, pass(t, p).Enqueued)
	require.Zero(t, pass(t, p).Enqueued, "fresh and handed over")

	b.clock.Advance(leaseTTL + time.Second)
	require.Equal(t, 1, pass(t, p).Enqueued)
	items, calls := b.temporal.trackItems(workflows.DefaultTrack)
	require.Equal(t, []string{ev.EventID}, items, "a duplicate changes nothing")
	require.Equal(t, 2, calls)
}

// Captures written straight into the database get their one CAPTURE_READY
// event from the first pass that sees them, across pages; a capture whose
// event the CLI emitted, and a PROCESSED one, get none. The same pass hands
// every event nobody handed over to the track, once; the next pass has
// nothing to read, and no lifecycle is asked about captures.
func TestPoller_CapturesWrittenStraightIntoTheDatabaseGetOneEventOnce(t *testing.T) {
	t.Parallel()
	b := setupPoller(t)
	ctx := context.Background()
	for i := range 5 {
		require.NoError(t, b.store.CreateCaptureBuffer(ctx, storetest.Capture(fmt.Sprintf("cap-%d", i), b.clock.Now())))
	}
	require.NoError(t, b.store.InTx(ctx, func(q store.Querier) error { // as azolla capture add writes it
		if err := q.CreateCaptureBuffer(ctx, storetest.Capture("cap-cli", b.clock.Now())); err != nil {
			return err
		}
		_, _, err := store.EmitCaptureReady(ctx, q, "cap-cli", b.clock.Now())
		return err
	}))
	done := storetest.Capture("cap-done", b.clock.Now())
	done.Status = domain.CaptureProcessed
	require.NoError(t, b.store.CreateCaptureBuffer(ctx, done))

	leader, standby := b.poller(t, "a", 2, 0), b.poller(t, "s", 2, 0)
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Captures: 5, Enqueued: 6}, pass(t, leader))
	require.Equal(t, bridge.Counts{}, pass(t, standby), "a standby emits nothing")
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Skipped: 6}, pass(t, leader),
		"nothing is emitted or handed over twice")

	evs, err := b.store.ListEvents(ctx, store.ListEventsParams{EventType: domain.EventCaptureReady})
	require.NoError(t, err)
	per := map[string]int{}
	for _, ev := range evs {
		per[ev.SubjectID]++
	}
	require.Equal(t, map[string]int{"cap-0": 1, "cap-1": 1, "cap-2": 1, "cap-3": 1, "cap-4": 1, "cap-cli": 1}, per)
	describes, starts, queries := b.temporal.calls()
	require.Equal(t, []int{0, 0, 0}, []int{describes, starts, queries})
	items, enqueues := b.temporal.trackItems(workflows.DefaultTrack)
	require.Len(t, items, 6)
	require.Equal(t, 6, enqueues)
}

// A capture whose event cannot be written (its id, written past the
// schema, is not one an event may name) is counted and tried again by the
// next pass; the others get their events all the same.
func TestPoller_ACaptureThatCannotGetItsEventIsCountedAndThePassGoesOn(t *testing.T) {
	t.Parallel()
	b := setupPoller(t)
	ctx := context.Background()
	for _, id := range []string{"cap-a", "cap-bad", "cap-c"} {
		require.NoError(t, b.store.CreateCaptureBuffer(ctx, storetest.Capture(id, b.clock.Now())))
	}
	_, err := b.store.DB().ExecContext(ctx, `UPDATE capture_buffers SET capture_buffer_id = 'cap bad' WHERE capture_buffer_id = 'cap-bad'`)
	require.NoError(t, err)

	p := b.poller(t, "a", 1, 0)
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Captures: 2, Failed: 1, Enqueued: 2}, pass(t, p))
	require.Equal(t, bridge.Counts{Leader: true, Batches: 2, Failed: 1, Skipped: 2}, pass(t, p), "tried again, alone")
}
