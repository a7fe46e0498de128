package audit

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/internal/store"
)

// captureReadyOnce: a capture gets one CAPTURE_READY event, plus one each
// time a failed triage round hands it back (docs/protocol/tasks.md#captures).
// So it has at most one more than the failed triage rounds that took it;
// once the grace period has passed (the poller emits the first for captures
// written straight into the database), a PENDING one has at least one; and
// a PENDING capture no round holds has one not yet processed, since the
// scheduler takes a capture in the transaction that processes an event and
// a release emits the next event in its own: otherwise no round would ever
// take it.
func captureReadyOnce(s *state, r recorder) {
	events := map[string][]*domain.Event{} // capture_buffer_id -> CAPTURE_READY events
	for _, e := range s.events {
		if e.EventType == domain.EventCaptureReady {
			events[e.SubjectID] = append(events[e.SubjectID], e)
		}
	}
	cutoff := s.now.Add(-s.grace)
	for _, c := range s.captures {
		r.checked(1)
		res := "capture " + c.CaptureBufferID
		evs := events[c.CaptureBufferID]
		failed := s.failedTriage[c.CaptureBufferID]
		switch {
		case len(evs) > 1+failed:
			ids := make([]string, len(evs))
			for i, e := range evs {
				ids[i] = e.EventID
			}
			r.violation(res, "has %d CAPTURE_READY events (%s) but %d failed triage round(s) took it; a capture has one, plus one per failed round that handed it back",
				len(evs), strings.Join(ids, ", "), failed)
		case len(evs) == 0 && c.Status == domain.CapturePending && c.CreatedAt.Before(cutoff):
			r.violation(res, "is PENDING without a CAPTURE_READY event")
		case len(evs) > 0 && c.Status == domain.CapturePending && c.WorkOrderID == "" &&
			!slices.ContainsFunc(evs, func(e *domain.Event) bool { return !e.Processed }):
			r.violation(res, "is PENDING and no workorder holds it, but all its %d CAPTURE_READY event(s) are processed: no triage round will take it",
				len(evs))
		}
	}
}

// loadFailedTriage counts, per capture, the triage workorders whose gate
// failed and whose snapshot names the capture: each may have handed it
// back with a new CAPTURE_READY event.
func (s *state) loadFailedTriage(ctx context.Context, q store.RunQuerier) error {
	s.failedTriage = map[string]int{}
	for _, w := range s.workOrders {
		rr := s.runRecord[w.WorkOrderID]
		if w.DiazotrophType != triage.Type || rr == nil || rr.GateResult != domain.GateFail {
			continue
		}
		snap, err := q.GetContextSnapshot(ctx, w.ContextSnapshotID)
		if errors.Is(err, domain.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		for _, ref := range snap.RelatedYieldRefs {
			if ref.Kind == domain.YieldCapture {
				s.failedTriage[ref.Ref]++
			}
		}
	}
	return nil
}

// captureProcessedByItsTriage: the triage gate creates the proposals, marks
// the captures PROCESSED and writes the run record in one transaction. So
// a capture taken by a triage workorder that has its PASS run record is
// PROCESSED, a PROCESSED capture's workorder is a triage run with a PASS
// verdict, and every objective a capture became exists.
func captureProcessedByItsTriage(s *state, r recorder) {
	objectives := map[string]bool{}
	for _, o := range s.objectives {
		objectives[o.ObjectiveID] = true
	}
	for _, c := range s.captures {
		if c.WorkOrderID == "" {
			continue
		}
		r.checked(1)
		res := "capture " + c.CaptureBufferID
		w := s.workOrder[c.WorkOrderID]
		if w == nil || w.DiazotrophType != triage.Type {
			r.violation(res, "is taken by %s, which is not a %s workorder", c.WorkOrderID, triage.Type)
			continue
		}
		rr := s.runRecord[c.WorkOrderID]
		passed := rr != nil && rr.GateResult == domain.GatePass
		switch {
		case passed && c.Status != domain.CaptureProcessed:
			r.violation(res, "is %s although its triage %s passed its gate", c.Status, c.WorkOrderID)
		case !passed && c.Status == domain.CaptureProcessed:
			r.violation(res, "is PROCESSED but its triage %s has no PASS run_record", c.WorkOrderID)
		}
		for _, id := range c.ObjectiveIDs {
			if !objectives[id] {
				r.violation(res, "became objective %s, which does not exist", id)
			}
		}
	}
}

// trackOneActive: a track has one active workorder at a time, triage or
// manifest (docs/protocol/tasks.md#the-track). A track workorder is
// active from its creation to its run record (or now, while it has none);
// no two of one track's intervals overlap.
func trackOneActive(s *state, r recorder) {
	byTrack := map[string][]*domain.WorkOrder{}
	for _, w := range s.workOrders {
		if w.Track != "" {
			byTrack[w.Track] = append(byTrack[w.Track], w)
		}
	}
	for _, track := range slices.Sorted(maps.Keys(byTrack)) {
		ws := byTrack[track]
		slices.SortFunc(ws, func(a, b *domain.WorkOrder) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.WorkOrderID, b.WorkOrderID))
		})
		for i, w := range ws {
			r.checked(1)
			if i == 0 {
				continue
			}
			prev := ws[i-1]
			if end := s.activeUntil(prev); end.After(w.CreatedAt) {
				r.violation("track "+track, "workorders %s and %s were active together: %s was created at %s, before %s ended at %s",
					prev.WorkOrderID, w.WorkOrderID, w.WorkOrderID, w.CreatedAt.Format(timeLayout), prev.WorkOrderID,
					end.Format(timeLayout))
			}
		}
	}
}

// activeUntil is when a track workorder stopped being active: its run
// record's creation, or now.
func (s *state) activeUntil(w *domain.WorkOrder) time.Time {
	if rr := s.runRecord[w.WorkOrderID]; rr != nil {
		return rr.CreatedAt
	}
	return s.now
}

// trackClaimFinished reports a live TRACK claim whose holder is done: the
// claim of an event is held by its store.TrackOwner from its scheduling to
// its gate.
func (s *state) trackClaimFinished(c *domain.ClaimRecord) string {
	eventID, ok := domain.TrackOwnerEvent(c.OwnerID)
	if !ok {
		return ""
	}
	e := s.event[eventID]
	switch {
	case e == nil:
		return ""
	case e.Processed && e.ProcessedReason != domain.ReasonScheduled:
		return "held for event " + eventID + ", processed " + e.ProcessedReason
	}
	for _, w := range s.byEvent[eventID] {
		if s.runRecordCount(w.WorkOrderID) > 0 {
			return "held for workorder " + w.WorkOrderID + ", which has its run_record"
		}
	}
	return ""
}
