package remoteworker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/remote/controlplane"
)

// Executor runs one job's payload and returns its result. It must return
// promptly once ctx ends (the lease was lost, or the shutdown grace
// passed), having stopped everything it started. An error fails the job:
// a *Failure says with which code and whether another attempt may
// succeed; any other error is CodeExecutorError, retryable.
type Executor interface {
	Execute(ctx context.Context, payload json.RawMessage) (result json.RawMessage, err error)
}

// ExecutorFunc is an Executor that is a function.
type ExecutorFunc func(ctx context.Context, payload json.RawMessage) (json.RawMessage, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
	return f(ctx, payload)
}

// Diazotrophs runs diazotroph jobs (controlplane.WorkPayload →
// controlplane.WorkResult) on a registry, as `azolla worker` runs
// workorders locally. The registry's diazotrophs kill what they started
// when their context ends: COMMAND_DIAZOTROPH and PATCH_DIAZOTROPH run
// their commands in a process group of their own (package proc) and
// SIGKILL the group on return.
type Diazotrophs struct {
	Registry *diazotroph.Registry
	// Candidates, when set, runs PATCH_DIAZOTROPH's best-of-N candidate
	// jobs (controlplane.CandidatePayload →
	// controlplane.CandidateWorkResult); without it they fail for good.
	Candidates Candidates
	// Redact hides this worker's secrets in a candidate's result (nil:
	// nothing is hidden).
	Redact *redact.Redactor
	// Workspaces, when set, records each PATCH_DIAZOTROPH run's workspace
	// and keeps it in use while the run lasts, for the Pruner.
	Workspaces *Workspaces
}

var _ Executor = (*Diazotrophs)(nil)

// Streams are the streams of the registry's types, in the registry's
// (sorted) order.
func (e *Diazotrophs) Streams() []string {
	var out []string
	for _, t := range e.Registry.Types() {
		if s := controlplane.StreamFor(t); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Execute decodes the payload, runs its workorder with the diazotroph of
// its type and encodes the output bundle's content. A payload that is not
// a diazotroph job's, or of a type this worker does not run, fails
// permanently; a diazotroph error (no result: it could not start, or is
// misconfigured here) is retryable, since another worker may do better
// and max_attempts bounds the tries. A run that failed on its own terms
// (a non-zero exit, an exhausted budget) is a result, judged by the gate.
func (e *Diazotrophs) Execute(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
	cp, err := controlplane.DecodeJobPayload(payload)
	if err != nil {
		return nil, Permanent(CodeInvalidPayload, err)
	}
	if cp.Candidate != 0 {
		return e.executeCandidate(ctx, cp)
	}
	p := cp.WorkPayload
	if err := p.Validate(); err != nil {
		return nil, Permanent(CodeInvalidPayload, err)
	}
	wo := p.WorkOrder
	d, err := e.Registry.Lookup(wo.DiazotrophType)
	if errors.Is(err, diazotroph.ErrUnknownType) {
		return nil, Permanent(CodeUnknownDiazotroph, fmt.Errorf("workorder %s: %w", wo.WorkOrderID, err))
	}
	if err != nil {
		return nil, err
	}
	if e.Workspaces != nil && wo.DiazotrophType == diazotroph.PatchType {
		end := e.Workspaces.Begin(wo.WorkOrderID, wo.BranchName, p.ContextSnapshot.Metadata.CommitSHA)
		defer end()
	}
	out, err := d.Execute(ctx, p.Request())
	if err != nil {
		return nil, Retryable(CodeDiazotrophError, fmt.Errorf("workorder %s with %s: %w", wo.WorkOrderID,
			wo.DiazotrophType, err))
	}
	res := controlplane.NewWorkResult(out)
	if err := res.Validate(); err != nil {
		return nil, Permanent(CodeDiazotrophError, fmt.Errorf("workorder %s with %s: %w", wo.WorkOrderID,
			wo.DiazotrophType, err))
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encode result of workorder %s: %w", wo.WorkOrderID, err)
	}
	return b, nil
}
