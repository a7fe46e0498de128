package remoteworker

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/remote/controlplane"
)

// Candidates runs one best-of-N candidate of a workorder: package patch's
// RunCandidate, in the candidate's own workspace (<work_order_id>-c<k>)
// on its own branch (azolla/<objective_id>/c<k>), then every gate
// command of the repository there (docs/patches.md#several-candidates).
type Candidates interface {
	RunCandidate(ctx context.Context, req diazotroph.Request, k int) (patch.Candidate, error)
	CandidateWorkspace(workOrderID string, k int) string
}

var _ Candidates = (*patch.Patch)(nil)

// executeCandidate runs candidate p.Candidate of p's workorder and encodes
// its figures. A payload that is not a valid candidate of its workorder,
// or of a type whose candidates this worker does not run, fails for good;
// a run that could not be made (no result) is retryable, as Execute's.
func (e *Diazotrophs) executeCandidate(ctx context.Context, p controlplane.CandidatePayload) (json.RawMessage, error) {
	if err := p.Validate(); err != nil {
		return nil, Permanent(CodeInvalidPayload, err)
	}
	wo, k := p.WorkOrder, p.Candidate
	key := domain.CandidateKey(wo.WorkOrderID, k)
	if wo.DiazotrophType != diazotroph.PatchType || e.Candidates == nil {
		return nil, Permanent(CodeUnknownDiazotroph, fmt.Errorf("candidate %s: this worker runs no candidates of %s",
			key, wo.DiazotrophType))
	}
	if e.Workspaces != nil {
		end := e.Workspaces.BeginCandidate(filepath.Base(e.Candidates.CandidateWorkspace(wo.WorkOrderID, k)),
			patch.CandidateBranch(wo.ObjectiveID, k), p.ContextSnapshot.Metadata.CommitSHA, k)
		defer end()
	}
	c, err := e.Candidates.RunCandidate(ctx, p.Request(), k)
	if err != nil {
		return nil, Retryable(CodeDiazotrophError, fmt.Errorf("candidate %s: %w", key, err))
	}
	res := NewCandidateResult(k, c)
	if err := res.Validate(k); err != nil {
		return nil, Permanent(CodeDiazotrophError, fmt.Errorf("candidate %s: %w", key, err))
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encode result of candidate %s: %w", key, err)
	}
	// The registry's diazotrophs redact their results; the candidate's
	// run is not one of them, so its result is redacted here, every
	// string of it (the control plane hashes the patch as it receives it).
	if b, err = e.Redact.JSON(b); err != nil {
		return nil, fmt.Errorf("redact result of candidate %s: %w", key, err)
	}
	return b, nil
}

// NewCandidateResult is the job result of candidate k's run c: the
// figures the selection compares. The workspace, branch and commit stay
// on this worker; the patch is all the local worker needs to deliver it.
func NewCandidateResult(k int, c patch.Candidate) controlplane.CandidateWorkResult {
	gate := make([]domain.CandidateGateResult, 0, len(c.Gate))
	for _, g := range c.Gate {
		gate = append(gate, domain.CandidateGateResult{Command: g.Command, Passed: g.Passed, Detail: g.Detail})
	}
	return controlplane.CandidateWorkResult{Candidate: k, Generator: c.Generator, RunnerStatus: c.RunnerStatus,
		Patch: c.Patch, Gate: gate, Report: c.Report, Notes: c.Notes, FinishedAt: c.FinishedAt.UTC()}
}
