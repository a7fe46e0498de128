package audit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/domain"
)

// workOrderPerEvent: a processed TICKET_READY event has at most one
// workorder, made only on the SCHEDULED path (docs/protocol/lifecycle.md#guarantees).
func workOrderPerEvent(s *state, r recorder) {
	for _, w := range s.workOrders {
		r.checked(1)
		res := "workorder " + w.WorkOrderID
		ev := s.event[w.EventID]
		switch {
		case ev == nil:
			r.violation(res, "its event %s does not exist", w.EventID)
		case !ev.Processed:
			r.violation(res, "its event %s is not processed; scheduling marks it %s", w.EventID, domain.ReasonScheduled)
		case ev.ProcessedReason != domain.ReasonScheduled:
			r.violation(res, "its event %s was processed as %s, not %s", w.EventID, ev.ProcessedReason, domain.ReasonScheduled)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(s.byEvent)) {
		if ws := s.byEvent[id]; len(ws) > 1 {
			r.violation("event "+id, "has %d workorders (%s); an event schedules at most one", len(ws), workOrderIDs(ws))
		}
	}
}

// bundlePerExecutedWorkOrder: a run writes exactly one output bundle, and
// only an executed workorder has one (docs/protocol/lifecycle.md#running).
func bundlePerExecutedWorkOrder(s *state, r recorder) {
	for _, w := range s.workOrders {
		r.checked(1)
		res := "workorder " + w.WorkOrderID
		n := s.bundleCount(w.WorkOrderID)
		switch w.Status {
		case domain.WorkOrderExecuted:
			if n != 1 {
				r.violation(res, "is %s with %d output_bundles; an executed workorder has exactly one", w.Status, n)
			}
		case domain.WorkOrderCreated:
			if n != 0 {
				r.violation(res, "is %s but has %d output_bundle(s); only an executed workorder has one", w.Status, n)
			}
		default:
			r.violation(res, "has status %q, neither %s nor %s", w.Status, domain.WorkOrderCreated, domain.WorkOrderExecuted)
		}
	}
	for _, id := range s.orphanBundles() {
		r.checked(1)
		r.violation("output_bundle "+id, "its workorder %s does not exist", id)
	}
}

// runRecordPerGatedWorkOrder: a gated workorder has exactly one run record
// (the gate upserts it, docs/protocol/lifecycle.md#gating), the verdict of an
// executed run. A Run that failed for
// good is recorded as FAIL on a workorder that never became EXECUTED.
func runRecordPerGatedWorkOrder(s *state, r recorder) {
	gated := map[string]string{} // work_order_id -> why it counts as gated
	for _, id := range s.runRecordIDs() {
		gated[id] = "it has a run_record"
	}
	for _, p := range s.pauses {
		if p.WorkOrderID == "" || !slices.Contains([]string{domain.PauseRunComplete, domain.PauseGateFailed,
			domain.PauseBudgetSpent, domain.PauseClosedOnForge, domain.PauseQuestion}, p.Reason) {
			continue
		}
		if _, ok := gated[p.WorkOrderID]; !ok {
			gated[p.WorkOrderID] = fmt.Sprintf("pause_state %s is %s", p.PauseStateID, p.Reason)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(gated)) {
		r.checked(1)
		res := "workorder " + id
		w := s.workOrder[id]
		if w == nil {
			r.violation(res, "is gated (%s) but does not exist", gated[id])
			continue
		}
		if n := s.runRecordCount(id); n != 1 {
			r.violation(res, "is gated (%s) and has %d run_records; a gated workorder has exactly one", gated[id], n)
		}
		rr := s.runRecord[id]
		if rr == nil {
			continue
		}
		if rr.ObjectiveID != w.ObjectiveID {
			r.violation(res, "its run_record names objective %s, the workorder's is %s", rr.ObjectiveID, w.ObjectiveID)
		}
		executed := w.Status == domain.WorkOrderExecuted
		failedRun := w.Status == domain.WorkOrderCreated && rr.GateResult == domain.GateFail
		if !executed && !failedRun {
			r.violation(res, "has run_record %s while %s; only an EXECUTED workorder is gated (a CREATED one may only hold FAIL, for a run that failed for good)",
				rr.GateResult, w.Status)
		}
	}
}

func workOrderIDs(ws []*domain.WorkOrder) string {
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.WorkOrderID
	}
	return strings.Join(ids, ", ")
}
