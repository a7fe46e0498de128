package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store"
)

// A best-of-N workorder whose diazotroph type runs remotely runs each
// candidate as a control-plane job of its own (docs/remote-workers.md):
// RunCandidate enqueues it and waits, a remote worker runs the candidate
// in its own workspace, and the control plane records the candidate in
// the job's transaction (controlplane.LifecycleHooks) and completes RunCandidate by id
// with its CandidateResult. Selection and delivery stay on the local
// worker: they read only the candidate records, and the winner's patch
// is applied from its record.

// ErrTypeInvalidCandidate is the failure type of a RunCandidate asked for
// a candidate its workorder does not have (numbered from 1 to the
// objective's attempts): no retry can help, and nothing was written.
const ErrTypeInvalidCandidate = "InvalidCandidate"

// candidate reports whether candidate k of w runs remotely, and
// whether its job exists already: a retried RunCandidate then waits for
// that job again, whatever the budget says now, since the candidate has
// started.
// A candidate its workorder does not have is refused before anything is
// written, whatever the budget would say.
func (r *Remote) candidate(ctx context.Context, w *domain.WorkOrder, req diazotroph.Request, k int) (remote, started bool, err error) {
	if !r.routes(w.DiazotrophType) {
		return false, false, nil
	}
	if err := controlplane.NewCandidatePayload(req, k).Validate(); err != nil {
		return true, false, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidCandidate, err)
	}
	_, err = r.Enqueuer.Job(ctx, w.WorkOrderID, k)
	switch {
	case err == nil:
		return true, true, nil
	case errors.Is(err, domain.ErrNotFound):
		return true, false, nil
	}
	return true, false, err
}

// runCandidateRemote is RunCandidate for a candidate that runs remotely:
// it records the candidate RUNNING (once, before its job exists: from
// then on only the job's outcome or SelectCandidate writes it), enqueues
// its job, once, and leaves the activity pending. A settled job answers
// at once from the record its outcome wrote.
func (a *Candidates) runCandidateRemote(ctx context.Context, w *domain.WorkOrder, req diazotroph.Request,
	rec *domain.Candidate, started bool, hold *slotHold) (CandidateResult, error) {
	k := rec.Attempt
	fail := func(err error) (CandidateResult, error) {
		return CandidateResult{}, fmt.Errorf("run candidate %s remotely: %w", domain.CandidateKey(w.WorkOrderID, k), err)
	}
	payload, err := json.Marshal(controlplane.NewCandidatePayload(req, k))
	if err != nil {
		return fail(permanent(err))
	}
	if !started {
		if _, err := a.putCandidate(ctx, rec); err != nil {
			return fail(err)
		}
	}
	j, err := a.Remote.enqueue(ctx, controlplane.EnqueueParams{JobType: w.DiazotrophType,
		Stream: controlplane.StreamFor(w.DiazotrophType), Payload: payload, WorkOrderID: w.WorkOrderID, Candidate: k,
		RunSlots: hold.handOver()})
	var ce *controlplane.Error
	if errors.As(err, &ce) && ce.Code == controlplane.CodeInvalid {
		return fail(temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidCandidate, err))
	}
	if err != nil {
		return fail(err)
	}
	hold.keptBy(j)
	if domain.JobSettled(j.Status) {
		out, err := candidateOutcome(ctx, a.Store, a.EarlyStopMaxDiffLines, j)
		if err != nil {
			return fail(err)
		}
		if out.Failure != nil {
			return CandidateResult{}, out.Failure
		}
		return out.Result.(CandidateResult), nil
	}
	if !activity.IsActivity(ctx) {
		return fail(fmt.Errorf("remote job %s is %s; only an activity waits for it", j.JobID, j.Status))
	}
	logger(ctx, w.ObjectiveID, w.WorkOrderID).Info("candidate handed to remote workers", "candidate", k,
		"job_id", j.JobID, "stream", j.Stream, "job_status", j.Status)
	return CandidateResult{}, activity.ErrResultPending
}

// RemoteOutcome is what the activity waiting on a settled job is told:
// Result to complete it with, or Failure to fail it with.
type RemoteOutcome struct {
	Result  any
	Failure error
}

// RemoteOutcomes answer the activities that wait on remote jobs: the
// control plane's Temporal side asks them once a job is settled.
type RemoteOutcomes struct {
	// Store is read for candidates.
	Store outcomeStore
	// EarlyStopMaxDiffLines is patch.early_stop_max_diff_lines: whether a
	// remote candidate that passed may stop the others.
	EarlyStopMaxDiffLines int
}

// outcomeStore is what a candidate job's outcome reads: the candidate's
// record, its workorder and objective, and the objective's spend.
type outcomeStore interface {
	store.CandidateQuerier
	store.RunQuerier
	store.ObjectiveQuerier
	store.SpendQuerier
}

// Outcome is the answer of settled job j to the activity that waits for
// it: a workorder's job completes Run with its RunResult, or fails it for
// good; a candidate's job completes RunCandidate with the CandidateResult
// of the record its outcome wrote (DONE, or FAILED once dead-lettered),
// as the local path returns it.
func (o RemoteOutcomes) Outcome(ctx context.Context, j *domain.Job) (RemoteOutcome, error) {
	if j.Candidate > 0 {
		return candidateOutcome(ctx, o.Store, o.EarlyStopMaxDiffLines, j)
	}
	if j.Status != domain.JobSucceeded {
		return RemoteOutcome{Failure: JobFailure(j)}, nil
	}
	var out controlplane.WorkResult
	if err := json.Unmarshal(j.Result, &out); err != nil {
		return RemoteOutcome{}, fmt.Errorf("job %q: read result: %w", j.JobID, err)
	}
	return RemoteOutcome{Result: RunResult{WorkOrderID: j.WorkOrderID, RunnerStatus: out.RunnerStatus}}, nil
}

// candidateOutcome is the CandidateResult of settled candidate job j, read
// from its record; BudgetSpent says whether what the candidate spent used
// up the objective's budget, as the local path says it. A record that is
// missing, or still RUNNING, under a settled job cannot be: the job fails
// the activity for good.
func candidateOutcome(ctx context.Context, q outcomeStore, maxDiffLines int, j *domain.Job) (RemoteOutcome, error) {
	c, err := q.GetCandidate(ctx, j.WorkOrderID, j.Candidate)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && c.Status == domain.CandidateRunning) {
		return RemoteOutcome{Failure: JobFailure(j)}, nil
	}
	if err != nil {
		return RemoteOutcome{}, fmt.Errorf("read candidate %s: %w", domain.CandidateKey(j.WorkOrderID, j.Candidate), err)
	}
	res := candidateResult(c, maxDiffLines)
	if c.Status != domain.CandidateDone {
		return RemoteOutcome{Result: res}, nil
	}
	w, err := q.GetWorkOrder(ctx, j.WorkOrderID)
	if err != nil {
		return RemoteOutcome{}, fmt.Errorf("read workorder %s: %w", j.WorkOrderID, err)
	}
	o, err := q.GetObjective(ctx, w.ObjectiveID)
	if err != nil {
		return RemoteOutcome{}, fmt.Errorf("read objective %s: %w", w.ObjectiveID, err)
	}
	var spent *budget.SpentError
	if _, err := budget.Left(ctx, q, o); errors.As(err, &spent) {
		res.BudgetSpent = true
	} else if err != nil {
		return RemoteOutcome{}, err
	}
	return RemoteOutcome{Result: res}, nil
}
