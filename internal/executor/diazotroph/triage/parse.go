package triage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/azolla/azolla/internal/textsafe"
)

// Bounds of a proposal.
const (
	MaxTitleRunes     = 200
	MaxCriterionRunes = 500
	MaxCriteria       = 50
)

// Urgencies a proposal may carry; the objective schema's enum.
const (
	UrgencyCritical = "CRITICAL"
	UrgencyNormal   = "NORMAL"
)

// ErrEmptyCapture is returned by Parse for a capture without any text.
var ErrEmptyCapture = errors.New("capture has no non-empty line")

// Proposal is one proposed objective, made from one capture and, on a model
// route, possibly from further captures merged into it.
type Proposal struct {
	CaptureBufferID string `json:"capture_buffer_id"`
	// MergedCaptureBufferIDs are further captures of the round that ask for
	// the same thing; the built-in rules never merge.
	MergedCaptureBufferIDs []string   `json:"merged_capture_buffer_ids,omitempty"`
	Title                  string     `json:"title"`
	AcceptanceCriteria     []string   `json:"acceptance_criteria"`
	Urgency                string     `json:"urgency"`
	DueAt                  *time.Time `json:"due_at,omitempty"`
}

// Parse applies the package's rules to one capture. It returns the proposal
// and notes on what it dropped or ignored, or ErrEmptyCapture.
func Parse(c Capture) (Proposal, []string, error) {
	var notes []string
	lines := strings.Split(c.Content, "\n")
	title := -1
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
		if title < 0 && lines[i] != "" {
			title = i
		}
	}
	if title < 0 {
		return Proposal{}, nil, ErrEmptyCapture
	}
	p := Proposal{
		CaptureBufferID:    c.CaptureBufferID,
		Title:              safe(strings.TrimSpace(strings.TrimPrefix(lines[title], "- ")), MaxTitleRunes),
		AcceptanceCriteria: []string{},
		Urgency:            UrgencyNormal,
	}
	dropped := 0
	for _, l := range lines[title+1:] {
		text, ok := strings.CutPrefix(l, "- ")
		if !ok || strings.TrimSpace(text) == "" {
			continue
		}
		if len(p.AcceptanceCriteria) == MaxCriteria {
			dropped++
			continue
		}
		p.AcceptanceCriteria = append(p.AcceptanceCriteria, safe(strings.TrimSpace(text), MaxCriterionRunes))
	}
	if dropped > 0 {
		notes = append(notes, fmt.Sprintf("capture %s: %d acceptance criteria beyond %d dropped", c.CaptureBufferID, dropped, MaxCriteria))
	}
	if urgent(c.Content) {
		p.Urgency = UrgencyCritical
	}
	due, bad := dueDate(c.Content)
	p.DueAt = due
	for _, d := range bad {
		notes = append(notes, fmt.Sprintf("capture %s: %q is not a date, ignored", c.CaptureBufferID, textsafe.Line(d)))
	}
	return p, notes, nil
}

// safe makes s one printable line of at most max runes.
func safe(s string, max int) string {
	s = textsafe.Line(s)
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:max-1])) + "…"
}

// words splits s into lower-cased runs of letters and digits, keeping for
// each whether a '-' joined it to the word before ("non-urgent").
func words(s string) (ws []string, hyphened []bool) {
	start := -1
	for i, r := range s + " " {
		inWord := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case inWord && start < 0:
			start = i
		case !inWord && start >= 0:
			ws = append(ws, strings.ToLower(s[start:i]))
			hyphened = append(hyphened, start > 0 && s[start-1] == '-')
			start = -1
		}
	}
	return ws, hyphened
}

func urgent(s string) bool {
	ws, hyphened := words(s)
	for i, w := range ws {
		if w != "urgent" && w != "asap" {
			continue
		}
		if i > 0 && (ws[i-1] == "not" || (hyphened[i] && ws[i-1] == "non")) {
			continue
		}
		return true
	}
	return false
}

// dueDate finds every "by YYYY-MM-DD" in s and returns the end (UTC) of the
// earliest real day among them, and the date texts that are not real days.
func dueDate(s string) (*time.Time, []string) {
	var due *time.Time
	var bad []string
	lower := asciiLower(s) // same byte offsets as s
	for i := 0; ; {
		j := strings.Index(lower[i:], "by")
		if j < 0 {
			break
		}
		at := i + j
		i = at + 2
		if at > 0 && isWordByte(lower[at-1]) {
			continue
		}
		k := i
		for k < len(lower) && (lower[k] == ' ' || lower[k] == '\t') {
			k++
		}
		if k == i || k+10 > len(lower) || !dateShape(lower[k:k+10]) || (k+10 < len(lower) && isDigit(lower[k+10])) {
			continue
		}
		text := s[k : k+10]
		d, err := time.Parse(time.DateOnly, text)
		if err != nil {
			bad = append(bad, text)
			continue
		}
		end := d.Add(24*time.Hour - time.Second).UTC()
		if due == nil || end.Before(*due) {
			due = &end
		}
	}
	return due, slices.Compact(bad)
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isWordByte(b byte) bool { return isDigit(b) || (b >= 'a' && b <= 'z') || b >= 0x80 }

// dateShape reports whether s is dddd-dd-dd.
func dateShape(s string) bool {
	for i := range len(s) {
		if i == 4 || i == 7 {
			if s[i] != '-' {
				return false
			}
		} else if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
