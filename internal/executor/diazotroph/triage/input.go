package triage

import (
	"errors"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
)

// InputFormat names and versions the document carried in full_prompt_text.
const InputFormat = "azolla.triage_input/v1"

// ErrInvalidInput is wrapped by every error about a snapshot whose
// full_prompt_text is not a triage input.
var ErrInvalidInput = errors.New("invalid triage input")

// Capture is one capture as frozen in a snapshot: what triage may read of a
// capture_buffer record.
type Capture struct {
	CaptureBufferID string    `json:"capture_buffer_id"`
	Source          string    `json:"source"`
	Content         string    `json:"content"`
	CreatedAt       time.Time `json:"created_at"`
}

// OpenObjective is an objective not yet DONE, as a model route sees it: so
// that it can skip a capture as a duplicate of one.
type OpenObjective struct {
	ObjectiveID string `json:"objective_id"`
	Title       string `json:"title"`
}

// MaxOpenObjectives bounds the open objectives frozen into one round's
// input, which a model reads whole.
const MaxOpenObjectives = 200

// Input is the triage round frozen in a snapshot's full_prompt_text.
//
// OpenObjectives and FailedRounds were added after the first snapshots were
// recorded; they are left out when empty, so a snapshot without them still
// decodes, and the built-in rules read neither.
type Input struct {
	Format   string    `json:"format"`
	Captures []Capture `json:"captures"`
	// OpenObjectives are the objectives not yet DONE when the round was
	// scheduled, at most MaxOpenObjectives.
	OpenObjectives []OpenObjective `json:"open_objectives,omitempty"`
	// FailedRounds is how many of the track's triage rounds before this one
	// failed their gate in a row; a model route falls back to the built-in
	// rules when it reaches the configured maximum.
	FailedRounds int `json:"failed_rounds,omitempty"`
}

// CaptureFrom returns the frozen form of c.
func CaptureFrom(c domain.CaptureBuffer) Capture {
	return Capture{CaptureBufferID: c.CaptureBufferID, Source: c.Source, Content: c.Content, CreatedAt: c.CreatedAt.UTC()}
}

// NewInput returns the input of a round over cs, in their order.
func NewInput(cs []domain.CaptureBuffer) Input {
	in := Input{Format: InputFormat, Captures: make([]Capture, 0, len(cs))}
	for _, c := range cs {
		in.Captures = append(in.Captures, CaptureFrom(c))
	}
	return in
}

// EncodeInput returns in as the snapshot's full_prompt_text.
func EncodeInput(in Input) (string, error) { return diazotroph.EncodeInput(in, Input.check) }

// DecodeInput reads the input from a snapshot's full_prompt_text. It
// refuses another format, unknown fields, trailing data, no captures and a
// capture id given twice.
func DecodeInput(text string) (Input, error) {
	return diazotroph.DecodeInput(text, ErrInvalidInput, Input.check)
}

func (in Input) check() error {
	if in.Format != InputFormat {
		return fmt.Errorf("%w: format %q, want %q", ErrInvalidInput, in.Format, InputFormat)
	}
	if len(in.Captures) == 0 {
		return fmt.Errorf("%w: no captures", ErrInvalidInput)
	}
	if in.FailedRounds < 0 {
		return fmt.Errorf("%w: failed_rounds %d is negative", ErrInvalidInput, in.FailedRounds)
	}
	seen := make(map[string]bool, len(in.Captures))
	for i, c := range in.Captures {
		if c.CaptureBufferID == "" {
			return fmt.Errorf("%w: capture %d has no id", ErrInvalidInput, i)
		}
		if seen[c.CaptureBufferID] {
			return fmt.Errorf("%w: capture %q given twice", ErrInvalidInput, c.CaptureBufferID)
		}
		seen[c.CaptureBufferID] = true
	}
	return nil
}
