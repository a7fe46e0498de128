package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// testHandOver: objectives not handed over, and unprocessed events, are
// paged through by keyset in (created_at, id) order; marking an objective
// handed over takes it out of its listing once and for all, leaves the
// record as it was, and is refused for an unknown objective.
func testHandOver(t *testing.T, s store.Store) {
	ctx := context.Background()
	// Two objectives share a created_at: the id breaks the tie.
	for _, c := range []struct {
		id string
		at time.Duration
	}{{"obj-c", time.Second}, {"obj-a", 0}, {"obj-e", 3 * time.Second}, {"obj-b", time.Second}, {"obj-d", 2 * time.Second}} {
		o := Objective(c.id)
		o.CreatedAt = T0.Add(c.at)
		require.NoError(t, s.CreateObjective(ctx, o))
	}
	all := func() []string {
		var ids []string
		var after domain.Cursor
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10, "the pages end")
			page, err := s.ListObjectivesToHandOver(ctx, store.PageParams{After: after, Limit: 2})
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), 2)
			if len(page) == 0 {
				return ids
			}
			for _, o := range page {
				ids = append(ids, o.ObjectiveID)
			}
			last := page[len(page)-1]
			after = domain.Cursor{CreatedAt: last.CreatedAt, ID: last.ObjectiveID}
		}
	}
	require.Equal(t, []string{"obj-a", "obj-b", "obj-c", "obj-d", "obj-e"}, all())

	before, err := s.GetObjective(ctx, "obj-c")
	require.NoError(t, err)
	require.NoError(t, s.MarkHandedOver(ctx, store.MarkHandedOverParams{ObjectiveID: "obj-c", Now: T0.Add(time.Hour)}))
	require.NoError(t, s.MarkHandedOver(ctx, store.MarkHandedOverParams{ObjectiveID: "obj-c"}), "marking again is a no-op")
	require.NoError(t, s.MarkHandedOver(ctx, store.MarkHandedOverParams{ObjectiveID: "obj-a"}))
	require.ErrorIs(t, s.MarkHandedOver(ctx, store.MarkHandedOverParams{ObjectiveID: "nope"}), domain.ErrNotFound)
	require.Equal(t, []string{"obj-b", "obj-d", "obj-e"}, all())
	after, err := s.GetObjective(ctx, "obj-c")
	require.NoError(t, err)
	require.Equal(t, before, after, "the record is not touched")

	// Pending events: unprocessed TICKET_READY ones, with their subject's mark.
	emit := func(id, typ, subject string, at time.Time) {
		e := Event(id, subject, 1, at)
		e.EventType = typ
		_, _, err := s.EmitEvent(ctx, e)
		require.NoError(t, err)
	}
	emit("ev-ghost", domain.EventTicketReady, "ghost", T0.Add(3*time.Second))
	emit("ev-c", domain.EventTicketReady, "obj-c", T0.Add(time.Second))
	emit("ev-b", domain.EventTicketReady, "obj-b", T0.Add(time.Second))
	emit("ev-done", domain.EventTicketReady, "obj-d", T0)
	emit("ev-capture", domain.EventCaptureReady, "cap-1", T0)
	_, err = s.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: "ev-done", Reason: domain.ReasonScheduled})
	require.NoError(t, err)

	type seen struct {
		id     string
		handed bool
	}
	var got []seen
	var cur domain.Cursor
	for {
		page, err := s.ListPendingEvents(ctx, store.PendingEventsParams{EventType: domain.EventTicketReady, After: cur, Limit: 1})
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		require.Len(t, page, 1)
		require.False(t, page[0].Processed)
		got = append(got, seen{page[0].EventID, page[0].SubjectHandedOver})
		cur = domain.Cursor{CreatedAt: page[0].CreatedAt, ID: page[0].EventID}
	}
	require.Equal(t, []seen{{"ev-b", false}, {"ev-c", true}, {"ev-ghost", false}}, got)

	every, err := s.ListPendingEvents(ctx, store.PendingEventsParams{})
	require.NoError(t, err)
	require.Equal(t, []string{"ev-capture", "ev-b", "ev-c", "ev-ghost"}, eventIDs(eventsOf(every)))
	require.Equal(t, T0.Add(3*time.Second), every[3].CreatedAt, "events come back whole")
}

func eventsOf(pes []*domain.PendingEvent) []*domain.Event {
	out := make([]*domain.Event, len(pes))
	for i, pe := range pes {
		out[i] = pe.Event
	}
	return out
}
