package audit

import (
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/domain"
)

// terminalReasons are the processed reasons of scheduling (docs/protocol/lifecycle.md#scheduling),
// and the track's no-op for a capture an earlier triage took.
var terminalReasons = []string{domain.ReasonScheduled, domain.ReasonMissingTicket, domain.ReasonNonExecutableStatus,
	domain.ReasonBlocked, domain.ReasonAlreadyTaken}

// eventProcessedOnce: every event ends processed exactly once, with its
// terminal reason (docs/protocol/lifecycle.md#scheduling). The store makes the second mark a
// no-op; this checks the marks it left are consistent with what followed.
func eventProcessedOnce(s *state, r recorder) {
	for _, e := range s.events {
		r.checked(1)
		res := "event " + e.EventID
		if !e.Processed {
			if e.ProcessedReason != "" {
				r.violation(res, "is unprocessed but has processed_reason %s", e.ProcessedReason)
			}
			if e.ProcessedAt != nil {
				r.violation(res, "is unprocessed but has processed_at %s", e.ProcessedAt.Format(timeLayout))
			}
			continue
		}
		if !slices.Contains(terminalReasons, e.ProcessedReason) {
			r.violation(res, "is processed with reason %q, not a terminal one (%s)", e.ProcessedReason, strings.Join(terminalReasons, ", "))
		}
		if e.ProcessedAt == nil {
			r.violation(res, "is processed without processed_at")
		}
		n := len(s.byEvent[e.EventID])
		switch {
		case e.ProcessedReason == domain.ReasonScheduled && n == 0:
			r.violation(res, "is processed %s but has no workorder", e.ProcessedReason)
		case e.ProcessedReason != domain.ReasonScheduled && n > 0:
			r.violation(res, "is processed %s but has %d workorder(s); only a %s event has one", e.ProcessedReason, n, domain.ReasonScheduled)
		}
	}
}
