package triage

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/diazotroph"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// Type is the diazotroph_type served by Diazotroph.
const Type = "TRIAGE_DIAZOTROPH"

// Skipped is a capture that yielded no proposal, and why.
type Skipped struct {
	CaptureBufferID string `json:"capture_buffer_id"`
	Reason          string `json:"reason"`
}

// Set is the output of one triage round: every capture of the input is in
// exactly one of Proposals and Skipped.
type Set struct {
	Proposals []Proposal `json:"proposals"`
	Skipped   []Skipped  `json:"skipped"`
}

// Triage applies Parse to every capture of in, oldest first (created_at,
// then id), and returns the set with the notes of every capture.
func Triage(in Input) (Set, []string) {
	cs := slices.Clone(in.Captures)
	slices.SortStableFunc(cs, func(a, b Capture) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.CaptureBufferID, b.CaptureBufferID))
	})
	set := Set{Proposals: []Proposal{}, Skipped: []Skipped{}}
	var notes []string
	for _, c := range cs {
		p, n, err := Parse(c)
		if errors.Is(err, ErrEmptyCapture) {
			set.Skipped = append(set.Skipped, Skipped{CaptureBufferID: c.CaptureBufferID, Reason: err.Error()})
			continue
		}
		set.Proposals = append(set.Proposals, p)
		notes = append(notes, n...)
	}
	return set, notes
}

// Encode returns set as validated JSON.
func (set Set) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(set, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode triage proposals: %w", err)
	}
	if err := schemas.ValidateJSON(schemas.TriageProposal, b); err != nil {
		return nil, fmt.Errorf("encode triage proposals: %w", err)
	}
	return append(b, '\n'), nil
}

// Diazotroph is TRIAGE_DIAZOTROPH. It reads nothing but the snapshot, does
// no I/O and finishes in microseconds, so the budget never runs out.
type Diazotroph struct{}

var _ diazotroph.Diazotroph = Diazotroph{}

// Type returns Type.
func (Diazotroph) Type() string { return Type }

// Execute triages the captures in req.Snapshot.FullPromptText. A snapshot
// that holds no triage input is an error: no bundle must be written for it.
func (Diazotroph) Execute(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
	wo := req.WorkOrder.WorkOrderID
	if err := context.Cause(ctx); err != nil {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: not started: %w", Type, wo, err)
	}
	in, err := DecodeInput(req.Snapshot.FullPromptText)
	if err != nil {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: snapshot %s: %w", Type, wo, req.Snapshot.ContextSnapshotID, err)
	}
	set, notes := Triage(in)
	content, err := set.Encode()
	if err != nil {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: %w", Type, wo, err)
	}
	for _, s := range set.Skipped {
		notes = append(notes, fmt.Sprintf("capture %s skipped: %s", s.CaptureBufferID, s.Reason))
	}
	return diazotroph.Result{
		Title:        fmt.Sprintf("Triage: %d proposed objective(s) from %d capture(s)", len(set.Proposals), len(in.Captures)),
		Content:      string(content),
		Notes:        strings.Join(notes, "\n"),
		RunnerStatus: store.RunnerOK,
	}, nil
}
