package triage

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/executor/runreport"
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

// Options configures a Diazotroph.
type Options struct {
	// Model answers the rounds (the command or openai route); nil runs the
	// built-in rules.
	Model Model
	// MaxFailures is how many rounds in a row may fail their gate before a
	// round uses the built-in rules instead of Model (the input's
	// failed_rounds says how many did); 0 means DefaultMaxFailures.
	MaxFailures int
}

// Diazotroph is TRIAGE_DIAZOTROPH. The zero value runs the built-in rules:
// it reads nothing but the snapshot, does no I/O and finishes in
// microseconds, so the budget never runs out. With a Model it asks the
// model instead, within the workorder's budget, and puts its answer in the
// bundle when ReadAnswer accepts it, else the answer as it came, which the
// gate fails (docs/task-management.md).
type Diazotroph struct {
	model       Model
	maxFailures int
}

var _ diazotroph.Diazotroph = Diazotroph{}

// New returns a Diazotroph configured by o.
func New(o Options) Diazotroph {
	if o.MaxFailures <= 0 {
		o.MaxFailures = DefaultMaxFailures
	}
	return Diazotroph{model: o.Model, maxFailures: o.MaxFailures}
}

// Type returns Type.
func (Diazotroph) Type() string { return Type }

// Execute triages the captures in req.Snapshot.FullPromptText. A snapshot
// that holds no triage input is an error: no bundle must be written for it.
func (d Diazotroph) Execute(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
	wo := req.WorkOrder.WorkOrderID
	if err := context.Cause(ctx); err != nil {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: not started: %w", Type, wo, err)
	}
	in, err := DecodeInput(req.Snapshot.FullPromptText)
	if err != nil {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: snapshot %s: %w", Type, wo, req.Snapshot.ContextSnapshotID, err)
	}
	if d.model == nil {
		return builtin(wo, in, nil)
	}
	if limit := cmp.Or(d.maxFailures, DefaultMaxFailures); in.FailedRounds >= limit {
		return builtin(wo, in, []string{fmt.Sprintf(
			"fallback: the %d triage round(s) before this one failed their gate in a row (tasks.triage.max_failures %d), so this round used the built-in rules instead of the %s route",
			in.FailedRounds, limit, d.model.Route())})
	}
	return d.ask(ctx, req, in)
}

// builtin is the result of the built-in rules over in, notes first.
func builtin(wo string, in Input, notes []string) (diazotroph.Result, error) {
	set, n := Triage(in)
	notes = append(notes, n...)
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
		RunnerStatus: domain.RunnerOK,
	}, nil
}

// errBudgetExhausted ends a model's run when the workorder's budget is
// spent, which tells it from the caller's ctx ending (an error).
var errBudgetExhausted = errors.New("budget exhausted")

// ask has the model answer the round. A run that gave no usable answer is
// still a result, with RunnerOK and the answer as it came (or none): the
// gate fails it, and the failed rounds count towards the fallback.
func (d Diazotroph) ask(ctx context.Context, req diazotroph.Request, in Input) (diazotroph.Result, error) {
	wo, route := req.WorkOrder.WorkOrderID, d.model.Route()
	if req.Budget <= 0 {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: no budget (%v)", Type, wo, req.Budget)
	}
	bctx, cancel := context.WithTimeoutCause(ctx, req.Budget, errBudgetExhausted)
	defer cancel()
	a, err := d.model.Answer(bctx, in, req.Snapshot.FullPromptText)
	if cause := context.Cause(ctx); cause != nil {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: %s route stopped: %w", Type, wo, route, cause)
	}
	res := diazotroph.Result{Title: fmt.Sprintf("Triage (%s): no usable answer for %d capture(s)", route, len(in.Captures)),
		RunnerStatus: domain.RunnerOK}
	if a.Report != nil && runreport.Validate(*a.Report) == nil {
		res.Metadata.RunReport = a.Report
	}
	notes := append([]string{"route " + route}, a.Notes...)
	switch {
	case errors.Is(context.Cause(bctx), errBudgetExhausted):
		res.RunnerStatus = domain.RunnerBudgetExhausted
		notes = append(notes, fmt.Sprintf("budget %v exhausted: no answer kept", req.Budget))
		res.Notes = strings.Join(notes, "\n")
		return res, nil
	case err != nil:
		res.Notes = strings.Join(append(notes, "no answer: "+err.Error()), "\n")
		return res, nil
	}
	set, err := ReadAnswer(a.Text, in)
	if err != nil {
		// The answer as it came, for the gate to fail and a human to read.
		text, _ := proc.Sanitize([]byte(a.Text))
		res.Content = text
		res.Notes = strings.Join(append(notes, err.Error()), "\n")
		return res, nil
	}
	content, err := set.Encode()
	if err != nil {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: %w", Type, wo, err)
	}
	merged := 0
	for _, p := range set.Proposals {
		merged += len(p.MergedCaptureBufferIDs)
	}
	for _, s := range set.Skipped {
		notes = append(notes, fmt.Sprintf("capture %s skipped: %s", s.CaptureBufferID, s.Reason))
	}
	res.Title = fmt.Sprintf("Triage (%s): %d proposed objective(s) from %d capture(s)", route, len(set.Proposals), len(in.Captures))
	if merged > 0 {
		notes = append(notes, fmt.Sprintf("%d capture(s) merged into another's proposal", merged))
	}
	res.Content, res.Notes = string(content), strings.Join(notes, "\n")
	return res, nil
}
