package audit

import (
	"context"
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// loadIntake reads every intake item and the commands given on their
// objectives.
func (s *state) loadIntake(ctx context.Context, q store.IntakeQuerier) error {
	var err error
	if s.intake, err = q.ListIntakeItems(ctx, store.ListIntakeItemsParams{}); err != nil {
		return err
	}
	for _, it := range s.intake {
		if it.ObjectiveID == "" {
			continue
		}
		cmds, err := q.ListForgeCommands(ctx, it.ObjectiveID)
		if err != nil {
			return err
		}
		s.commands = append(s.commands, cmds...)
	}
	return nil
}

// intakeOnePerItem: an item from outside is a valid intake_item that
// became exactly one objective (or capture), which exists; no objective
// came from two items, and no other objective claims an item's page as
// where it came from (an issue taken twice).
func intakeOnePerItem(s *state, r recorder) {
	objectives := make(map[string]*domain.Objective, len(s.objectives))
	byProvenance := map[string][]string{}
	for _, o := range s.objectives {
		objectives[o.ObjectiveID] = o
		if o.Provenance != "" {
			byProvenance[o.Provenance] = append(byProvenance[o.Provenance], o.ObjectiveID)
		}
	}
	captures := make(map[string]bool, len(s.captures))
	for _, c := range s.captures {
		captures[c.CaptureBufferID] = true
	}
	itemOf := map[string]string{}
	for _, it := range s.intake {
		r.checked(1)
		res := "intake item " + it.Source + " " + it.ExternalID
		if err := schemas.Validate(schemas.IntakeItem, it); err != nil {
			r.violation(res, "%v", err)
			continue
		}
		if it.Kind == domain.IntakeCapture {
			if !captures[it.CaptureID] {
				r.violation(res, "its capture %s does not exist", it.CaptureID)
			}
			continue
		}
		o := objectives[it.ObjectiveID]
		if o == nil {
			r.violation(res, "its objective %s does not exist", it.ObjectiveID)
			continue
		}
		if other, ok := itemOf[it.ObjectiveID]; ok {
			r.violation(res, "objective %s came from %s too", it.ObjectiveID, other)
		}
		itemOf[it.ObjectiveID] = res
		if it.URL == "" {
			continue
		}
		for _, id := range byProvenance[it.URL] {
			if id != it.ObjectiveID {
				r.violation(res, "objective %s also came from %s: the item became two objectives", id, it.URL)
			}
		}
	}
}

// forgeCommandAuthorized: every command comment recorded is a valid
// forge_command, and one whose author the trust rule did not trust was
// refused, never carried out.
func forgeCommandAuthorized(s *state, r recorder) {
	for _, c := range s.commands {
		r.checked(1)
		res := "command comment " + c.Source + " " + c.CommentID
		if err := schemas.Validate(schemas.ForgeCommand, c); err != nil {
			r.violation(res, "%v", err)
			continue
		}
		if !c.Trusted && !strings.HasPrefix(c.Result, "refused") {
			r.violation(res, "/azolla %s by %s, whom the trust rule did not trust (%s), was carried out: %s",
				c.Command, c.Author, c.TrustReason, c.Result)
		}
	}
}
