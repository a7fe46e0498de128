package audit

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/schemas"
)

// objectiveStatus: an objective's status is one the schema names, and DONE
// is reached only through a PASS (docs/protocol/patch-flow.md#pass).
func objectiveStatus(s *state, r recorder) {
	for _, o := range s.objectives {
		r.checked(1)
		res := "objective " + o.ObjectiveID
		if msg := statusViolation(o); msg != "" {
			r.violation(res, "status %q: %s", o.Status, msg)
		}
		if o.Status == domain.StatusDone && !s.passed(o.ObjectiveID) {
			r.violation(res, "is %s without a %s run_record for any of its workorders", o.Status, domain.GatePass)
		}
	}
}

// statusViolation returns the schema's complaint about o's status, or "".
func statusViolation(o *domain.Objective) string {
	err := schemas.Validate(schemas.Objective, o)
	var ve *schemas.ValidationError
	if !errors.As(err, &ve) {
		return ""
	}
	for _, v := range ve.Violations {
		if v.Pointer == "/status" {
			return v.Message
		}
	}
	return ""
}

// passed reports whether any workorder of the objective has a PASS verdict.
func (s *state) passed(objectiveID string) bool {
	for _, w := range s.byObjective[objectiveID] {
		if rr := s.runRecord[w.WorkOrderID]; rr != nil && rr.GateResult == domain.GatePass {
			return true
		}
	}
	return false
}

// pauseFor is the pause reason the gate writes (docs/protocol/lifecycle.md#pause-states) for a verdict.
var pauseFor = map[string]string{domain.GatePass: domain.PauseRunComplete, domain.GateFail: domain.PauseGateFailed}

// trackPassPause is the pause a track workorder's PASS writes (docs/protocol/tasks.md's
// gates).
var trackPassPause = map[string]string{triage.Type: domain.PauseProposalsReview, manifest.Type: domain.PauseManifestReady}

// terminalPauseState: every outcome is written down, not only logged
// (docs/protocol/patch-flow.md#guarantees): a verdict and a BLOCKED event
// each hand the objective back with a pause_state.
func terminalPauseState(s *state, r recorder) {
	byWorkOrder := map[string][]string{} // work_order_id -> pause reasons
	blockedPauses := map[string]int{}    // objective_id -> BLOCKED pause states
	for _, p := range s.pauses {
		if p.WorkOrderID != "" {
			byWorkOrder[p.WorkOrderID] = append(byWorkOrder[p.WorkOrderID], p.Reason)
		}
		if p.Reason == domain.PauseBlocked {
			blockedPauses[p.ObjectiveID]++
		}
	}
	for _, id := range slices.Sorted(maps.Keys(s.runRecord)) {
		r.checked(1)
		rr := s.runRecord[id]
		want, ok := pauseFor[rr.GateResult]
		if w := s.workOrder[id]; w != nil && w.Track != "" && rr.GateResult == domain.GatePass {
			want = trackPassPause[w.DiazotrophType]
		}
		// A FAIL that is the environment's blocks the objective: its pause
		// is BLOCKED, naming what to fix.
		if rr.GateResult == domain.GateFail && rr.Blame == domain.BlameEnvironment {
			want = domain.PauseBlocked
		}
		// A FAIL once the objective's budget is spent hands it back as
		// BUDGET_SPENT, the GATE_FAILED pause with the budget's actions.
		spent := rr.GateResult == domain.GateFail && slices.Contains(byWorkOrder[id], domain.PauseBudgetSpent)
		// A verdict on an objective whose issue was closed on its forge
		// while the round ran hands it back as CLOSED_ON_FORGE.
		closed := rr.Blame != domain.BlameEnvironment && slices.Contains(byWorkOrder[id], domain.PauseClosedOnForge)
		// A FAIL whose agent asked a question waits for the answer as
		// QUESTION.
		asked := rr.GateResult == domain.GateFail && slices.Contains(byWorkOrder[id], domain.PauseQuestion)
		if ok && !spent && !closed && !asked && !slices.Contains(byWorkOrder[id], want) {
			r.violation("workorder "+id, "has run_record %s but no %s pause_state", rr.GateResult, want)
		}
	}
	blockedEvents := map[string][]string{} // objective_id -> events processed BLOCKED
	for _, e := range s.events {
		if e.EventType == domain.EventTicketReady && e.Processed && e.ProcessedReason == domain.ReasonBlocked {
			r.checked(1)
			blockedEvents[e.SubjectID] = append(blockedEvents[e.SubjectID], e.EventID)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(blockedEvents)) {
		evs := blockedEvents[id]
		if n := blockedPauses[id]; n < len(evs) {
			r.violation("objective "+id, "has %d event(s) processed %s (%s) but %s",
				len(evs), domain.ReasonBlocked, strings.Join(evs, ", "), plural(n, domain.PauseBlocked+" pause_state"))
		}
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
