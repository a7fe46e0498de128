package triage

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/azolla/azolla/internal/strictjson"
)

// ErrInvalidAnswer is wrapped by every error about a model's answer that is
// not a proposal set for its round.
var ErrInvalidAnswer = errors.New("invalid triage answer")

// Account checks that set accounts for exactly the round's captures: every
// capture id it names is one of captureIDs, and every one of captureIDs is
// named by a proposal (its capture_buffer_id or one of its
// merged_capture_buffer_ids) or skipped. A skipped capture is skipped once
// and named by no proposal; a merged capture is merged once and is not the
// capture_buffer_id of a proposal, so that what it became is one objective.
// The gate and the model routes both ask it.
func (set Set) Account(captureIDs []string) error {
	inRound := make(map[string]bool, len(captureIDs))
	for _, c := range captureIDs {
		inRound[c] = true
	}
	named := map[string]string{} // capture -> how it is named first
	for i, p := range set.Proposals {
		if !inRound[p.CaptureBufferID] {
			return fmt.Errorf("proposal %d names capture %q, not one of this round's", i, p.CaptureBufferID)
		}
		if how, ok := named[p.CaptureBufferID]; ok && !strings.HasPrefix(how, "proposed") {
			return fmt.Errorf("proposal %d is made from capture %s, which is %s", i, p.CaptureBufferID, how)
		}
		named[p.CaptureBufferID] = fmt.Sprintf("proposed by proposal %d", i)
	}
	for i, p := range set.Proposals {
		for _, m := range p.MergedCaptureBufferIDs {
			if !inRound[m] {
				return fmt.Errorf("proposal %d merges capture %q, not one of this round's", i, m)
			}
			if how, ok := named[m]; ok {
				return fmt.Errorf("proposal %d merges capture %s, which is %s", i, m, how)
			}
			named[m] = fmt.Sprintf("merged into proposal %d", i)
		}
	}
	for i, s := range set.Skipped {
		if !inRound[s.CaptureBufferID] {
			return fmt.Errorf("skipped %d names capture %q, not one of this round's", i, s.CaptureBufferID)
		}
		if how, ok := named[s.CaptureBufferID]; ok {
			return fmt.Errorf("skipped %d names capture %s, which is %s", i, s.CaptureBufferID, how)
		}
		named[s.CaptureBufferID] = "skipped"
	}
	var missing []string
	for _, c := range captureIDs {
		if _, ok := named[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("capture(s) %s not accounted for: no proposal, merge or skip names them", strings.Join(missing, ", "))
	}
	return nil
}

// ReadAnswer reads a model's answer for in: one JSON object, alone or in a
// single fenced block, in the shape of schemas/triage_proposal.schema.json.
// Titles, criteria and reasons are made safe lines within the schema's
// bounds (as the built-in rules make theirs); anything else that is wrong
// (unknown fields, an unknown urgency, a capture not accounted for) is an
// error wrapping ErrInvalidAnswer, and the round fails its gate.
func ReadAnswer(text string, in Input) (Set, error) {
	body := unfence(text)
	if body == "" {
		return Set{}, fmt.Errorf("%w: the answer is empty", ErrInvalidAnswer)
	}
	var set Set
	if err := strictjson.Decode(strings.NewReader(body), &set); err != nil {
		return Set{}, fmt.Errorf("%w: not a proposal set: %w", ErrInvalidAnswer, err)
	}
	if set.Proposals == nil {
		set.Proposals = []Proposal{}
	}
	if set.Skipped == nil {
		set.Skipped = []Skipped{}
	}
	for i := range set.Proposals {
		p := &set.Proposals[i]
		p.Title = safe(strings.TrimSpace(p.Title), MaxTitleRunes)
		criteria := make([]string, 0, len(p.AcceptanceCriteria))
		for _, c := range p.AcceptanceCriteria {
			if c = strings.TrimSpace(c); c != "" && len(criteria) < MaxCriteria {
				criteria = append(criteria, safe(c, MaxCriterionRunes))
			}
		}
		p.AcceptanceCriteria = criteria
		if p.DueAt != nil {
			due := p.DueAt.UTC()
			p.DueAt = &due
		}
	}
	for i := range set.Skipped {
		set.Skipped[i].Reason = safe(strings.TrimSpace(set.Skipped[i].Reason), MaxTitleRunes)
	}
	if _, err := set.Encode(); err != nil { // the schema's checks
		return Set{}, fmt.Errorf("%w: %w", ErrInvalidAnswer, err)
	}
	ids := make([]string, len(in.Captures))
	for i, c := range in.Captures {
		ids[i] = c.CaptureBufferID
	}
	if err := set.Account(ids); err != nil {
		return Set{}, fmt.Errorf("%w: %w", ErrInvalidAnswer, err)
	}
	return set, nil
}

// unfence returns text without surrounding white space and, when it is one
// fenced block (```json … ```), without the fence: models often add one.
func unfence(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return t
	}
	inner := strings.TrimSuffix(t[3:], "```")
	if nl := strings.IndexByte(inner, '\n'); nl >= 0 && !bytes.ContainsAny([]byte(inner[:nl]), "{[") {
		inner = inner[nl+1:] // the info string, e.g. "json"
	}
	return strings.TrimSpace(inner)
}
