package controlplane

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/textsafe"
)

// WorkPayload is a diazotroph job's payload: everything the diazotroph may
// read (diazotroph.Request), frozen when the job is enqueued. It carries no
// Temporal identifiers and no secrets: a remote worker brings its own
// configuration (generators, API keys, gate commands).
type WorkPayload struct {
	WorkOrder       domain.WorkOrder       `json:"work_order"`
	ContextSnapshot domain.ContextSnapshot `json:"context_snapshot"`
	Objective       domain.Objective       `json:"objective"`
	// BudgetMS is the run's budget; it is the workorder's budget_ms.
	BudgetMS int64 `json:"budget_ms"`
	// Resume is the round before's partial work, which the run resumes
	// when that round ran on the same host.
	Resume *diazotroph.Resume `json:"resume,omitempty"`
	// Revise is the open pull request the run adds a commit to.
	Revise *diazotroph.Revise `json:"revise,omitempty"`
	// Session is the agent's session the run continues.
	Session string `json:"session,omitempty"`
}

// NewWorkPayload is the payload that hands req to a remote worker.
func NewWorkPayload(req diazotroph.Request) WorkPayload {
	return WorkPayload{WorkOrder: req.WorkOrder, ContextSnapshot: req.Snapshot, Objective: req.Objective,
		BudgetMS: req.Budget.Milliseconds(), Resume: req.Resume, Revise: req.Revise,
		Session: req.Session}
}

// Validate checks what a worker needs before it runs the payload: the ids
// tie together, the type is a diazotroph type and there is a budget.
func (p WorkPayload) Validate() error {
	wo := p.WorkOrder
	var errs []error
	if wo.WorkOrderID == "" {
		errs = append(errs, errors.New("work_order.work_order_id is empty"))
	}
	if StreamFor(wo.DiazotrophType) == "" {
		errs = append(errs, fmt.Errorf("work_order.diazotroph_type %q is not a diazotroph type", wo.DiazotrophType))
	}
	if p.BudgetMS <= 0 {
		errs = append(errs, fmt.Errorf("budget_ms %d is not positive", p.BudgetMS))
	}
	if p.Objective.ObjectiveID != wo.ObjectiveID {
		errs = append(errs, fmt.Errorf("objective %q is not the workorder's (%q)", p.Objective.ObjectiveID, wo.ObjectiveID))
	}
	if p.ContextSnapshot.ContextSnapshotID != wo.ContextSnapshotID {
		errs = append(errs, fmt.Errorf("context snapshot %q is not the workorder's (%q)",
			p.ContextSnapshot.ContextSnapshotID, wo.ContextSnapshotID))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid work payload: %w", err)
	}
	return nil
}

// Request is the diazotroph request the payload describes.
func (p WorkPayload) Request() diazotroph.Request {
	return diazotroph.Request{WorkOrder: p.WorkOrder, Snapshot: p.ContextSnapshot, Objective: p.Objective,
		Budget: time.Duration(p.BudgetMS) * time.Millisecond, Resume: p.Resume, Revise: p.Revise,
		Session: p.Session}
}

// WorkResult is a diazotroph job's result: the content of the workorder's
// output bundle, as the remote worker's diazotroph returned it.
type WorkResult struct {
	Title        string                `json:"title"`
	Content      string                `json:"content"`
	Notes        string                `json:"notes"`
	Metadata     domain.BundleMetadata `json:"metadata"`
	RunnerStatus string                `json:"runner_status"`
}

// NewWorkResult is the result for a diazotroph's r, its title made one
// safe line whatever the diazotroph made of it (as the local runner does).
func NewWorkResult(r diazotroph.Result) WorkResult {
	return WorkResult{Title: oneLine(r.Title), Content: r.Content, Notes: r.Notes, Metadata: r.Metadata,
		RunnerStatus: r.RunnerStatus}
}

// Bundle is the output bundle the result becomes. The title is made one
// safe line again: the result came over the wire from a worker.
func (r WorkResult) Bundle(workOrderID string, now time.Time) *domain.OutputBundle {
	return &domain.OutputBundle{WorkOrderID: workOrderID, Title: oneLine(r.Title), Content: r.Content,
		Notes: r.Notes, Metadata: r.Metadata, RunnerStatus: r.RunnerStatus, CreatedAt: now}
}

// runnerStatuses are those a remote worker may report: a remote run can
// stall as a local one can.
var runnerStatuses = []string{domain.RunnerOK, domain.RunnerBudgetExhausted, domain.RunnerStalled, domain.RunnerStopped, domain.RunnerApplyFailed,
	domain.RunnerEnvironmentFailed, domain.RunnerQuestion}

// Validate checks that the result can become an output bundle: its
// runner status is one of store's.
func (r WorkResult) Validate() error {
	if slices.Contains(runnerStatuses, r.RunnerStatus) {
		return nil
	}
	return fmt.Errorf("invalid work result: runner_status %q is none of %s", r.RunnerStatus,
		strings.Join(runnerStatuses, ", "))
}

// oneLine joins s's non-blank lines with "; " and escapes what a terminal
// would obey (textsafe.Line).
func oneLine(s string) string {
	var parts []string
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return textsafe.Line(strings.Join(parts, "; "))
}
