package manifest

import (
	"context"
	"fmt"
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
)

// Type is the diazotroph_type served by Diazotroph.
const Type = "MANIFEST_DIAZOTROPH"

// Diazotroph is MANIFEST_DIAZOTROPH. It reads nothing but the snapshot and
// does no I/O, so the budget never runs out.
type Diazotroph struct{}

var _ diazotroph.Diazotroph = Diazotroph{}

// Type returns Type.
func (Diazotroph) Type() string { return Type }

// Execute writes the manifest of the input in req.Snapshot.FullPromptText:
// the Markdown report is the content, the notes list the top actions (one
// per line, prefixed "action: ") and what the report could not use. A
// snapshot that holds no manifest input is an error: no bundle must be
// written for it.
func (Diazotroph) Execute(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
	wo := req.WorkOrder.WorkOrderID
	if err := context.Cause(ctx); err != nil {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: not started: %w", Type, wo, err)
	}
	in, err := DecodeInput(req.Snapshot.FullPromptText)
	if err != nil {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: snapshot %s: %w", Type, wo, req.Snapshot.ContextSnapshotID, err)
	}
	rep, err := Build(in)
	if err != nil {
		return diazotroph.Result{}, fmt.Errorf("%s: workorder %s: snapshot %s: %w", Type, wo, req.Snapshot.ContextSnapshotID, err)
	}
	notes := make([]string, 0, len(rep.TopActions)+len(rep.Notes))
	for _, a := range rep.TopActions {
		notes = append(notes, "action: "+a)
	}
	notes = append(notes, rep.Notes...)
	return diazotroph.Result{
		Title:        fmt.Sprintf("Manifest as of %s: %d top action(s)", stamp(in.Now), len(rep.TopActions)),
		Content:      rep.Markdown,
		Notes:        strings.Join(notes, "\n"),
		RunnerStatus: domain.RunnerOK,
	}, nil
}
