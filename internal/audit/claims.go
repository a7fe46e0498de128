package audit

import (
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/schemas"
)

// timeLayout prints timestamps in messages.
const timeLayout = time.RFC3339Nano

// claimSchema: every claim row is a valid claim_record
// (docs/protocol/claims.md#the-claim-record).
func claimSchema(s *state, r recorder) {
	for _, c := range s.claims {
		r.checked(1)
		if err := schemas.Validate(schemas.ClaimRecord, c); err != nil {
			r.violation(claimResource(c), "%v", err)
		}
	}
}

// noLiveClaimOnFinished: a step releases its claim once its write is
// durable (docs/protocol/claims.md#releasing). A live claim on a finished resource is a release that never
// happened (or, on a busy system, one about to happen: see WithGrace).
func noLiveClaimOnFinished(s *state, r recorder) {
	cutoff := s.now.Add(-s.grace)
	for _, c := range s.claims {
		r.checked(1)
		if !c.Live(s.now) || (s.grace > 0 && !c.HeartbeatAt.Before(cutoff)) {
			continue
		}
		held := "is live (owner " + c.OwnerID + ", lease until " + c.LeaseExpiresAt.Format(timeLayout) + ")"
		switch c.ResourceType {
		case domain.ResourceEvent:
			if e := s.event[c.ResourceID]; e != nil && e.Processed {
				r.violation(claimResource(c), "%s on an event processed %s", held, e.ProcessedReason)
			}
		case domain.ResourceWorkOrder:
			if s.runRecordCount(c.ResourceID) > 0 {
				r.violation(claimResource(c), "%s on a workorder that has its run_record", held)
			}
		case domain.ResourceTrack:
			if why := s.trackClaimFinished(c); why != "" {
				r.violation(claimResource(c), "%s, %s", held, why)
			}
		}
	}
}

func claimResource(c *domain.ClaimRecord) string {
	return "claim " + c.ResourceType + " " + c.ResourceID
}
