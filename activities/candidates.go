package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"github.com/azolla/azolla/internal/store"
)

// Candidates are the steps of best-of-N workorders
// (docs/patches.md#several-candidates): each candidate's run, and the
// selection that delivers the winner as the workorder's bundle.
type Candidates struct {
	Base
	Claimant
	Store candidateStore
	// Runner runs the candidates; nil on a worker that runs none.
	Runner CandidateRunner
	// Remote, when set, runs the candidates of some diazotroph types on
	// remote workers, each a control-plane job of its own.
	Remote *Remote
	// EarlyStopMaxDiffLines, above 0, bounds the diff of a candidate
	// that stops the others.
	EarlyStopMaxDiffLines int
}

// candidateStore is what the candidate steps read and write: the
// workorder and its objective, the candidates' records, the objective's
// spend that bounds them, and their claims.
type candidateStore interface {
	store.ObjectiveQuerier
	store.EventQuerier
	store.RunQuerier
	store.CandidateQuerier
	store.SpendQuerier
	store.ClaimQuerier
}

// CandidateRunner runs the candidates of best-of-N workorders:
// PATCH_DIAZOTROPH's.
type CandidateRunner interface {
	// GeneratorName is the generator o's runs use.
	GeneratorName(o domain.Objective) string
	RunCandidate(ctx context.Context, req diazotroph.Request, k int) (patch.Candidate, error)
	SelectCommand(ctx context.Context, req diazotroph.Request, cands []patch.Candidate, tie []int) (int, error)
	DeliverCandidate(ctx context.Context, req diazotroph.Request, c patch.Candidate, why string) (diazotroph.Result, error)
}

// CandidateInput names one candidate of a workorder's run.
type CandidateInput struct {
	WorkOrderID string
	Attempt     int
	// Queue and Slot are RunInput's: the lifecycle queues for a run slot
	// when none is free (CandidateResult.SlotBusy), and hands the one it
	// was granted.
	Queue bool         `json:",omitempty"`
	Slot  *slots.Grant `json:",omitempty"`
}

// CandidateResult is what became of a candidate.
type CandidateResult struct {
	Attempt int
	Status  string
	// PassedAll: it has a patch and every gate command passed on it.
	PassedAll bool
	// Small: its diff is within patch.early_stop_max_diff_lines (always,
	// without that bound), so that passing, it may stop the others.
	Small bool `json:",omitempty"`
	// BudgetSpent: once it was recorded, the objective's runs had spent
	// its budget, so the candidates still running are to be stopped.
	BudgetSpent bool `json:",omitempty"`
	// SlotBusy: a limit left no run slot free (CandidateInput.Queue);
	// nothing ran, and the lifecycle queues for one.
	SlotBusy bool `json:",omitempty"`
}

// SelectInput asks for a workorder's winning candidate to be delivered.
// EarlyStopped says the candidates still running were cancelled because
// one passed every gate command, BudgetStopped because the objective's
// budget ran out.
type SelectInput struct {
	WorkOrderID   string
	EarlyStopped  bool
	BudgetStopped bool `json:",omitempty"`
}

// candidateResult is the result of a recorded candidate; maxDiffLines is
// Candidates.EarlyStopMaxDiffLines.
func candidateResult(c *domain.Candidate, maxDiffLines int) CandidateResult {
	passed := c.Status == domain.CandidateDone && patchCandidate(c).HasPatch() && c.CommandsPassed == len(c.GateResults)
	small := maxDiffLines <= 0 || (c.DiffLines != nil && *c.DiffLines <= maxDiffLines)
	return CandidateResult{Attempt: c.Attempt, Status: c.Status, PassedAll: passed, Small: small}
}

// RunCandidate runs candidate in.Attempt of a best-of-N workorder in its
// own workspace, under its own claim and the workorder's time budget, and
// records it. A candidate recorded as finished is not run again. One the
// objective's budget cannot cover any more is recorded SKIPPED and not
// started; one cancelled while it runs (another passed every gate command
// first, or the objective's budget ran out) has its processes killed and
// is recorded CANCELLED, with which of the two it was. A candidate of a
// diazotroph type routed to remote workers runs there, as a job of its
// own (runCandidateRemote), once the same budget checks let it start.
func (a *Candidates) RunCandidate(ctx context.Context, in CandidateInput) (CandidateResult, error) {
	fail := func(err error) (CandidateResult, error) {
		return CandidateResult{}, fmt.Errorf("run candidate %s: %w", domain.CandidateKey(in.WorkOrderID, in.Attempt), err)
	}
	w, err := a.Store.GetWorkOrder(ctx, in.WorkOrderID)
	if err != nil {
		return fail(permanent(err))
	}
	if c, err := a.Store.GetCandidate(ctx, w.WorkOrderID, in.Attempt); err == nil && c.Status != domain.CandidateRunning {
		return candidateResult(c, a.EarlyStopMaxDiffLines), nil
	} else if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return fail(err)
	}
	if a.Runner == nil {
		return fail(permanent(fmt.Errorf("this worker runs no candidates: %w", diazotroph.ErrMisconfigured)))
	}
	req, err := request(ctx, a.Store, w)
	if err != nil {
		return fail(permanent(err))
	}
	rec := &domain.Candidate{WorkOrderID: w.WorkOrderID, Attempt: in.Attempt, Generator: a.Runner.GeneratorName(req.Objective),
		Status: domain.CandidateRunning, GateResults: []domain.CandidateGateResult{}, CreatedAt: a.now(), UpdatedAt: a.now()}
	remote, started, err := a.Remote.candidate(ctx, w, req, in.Attempt)
	if err != nil {
		return fail(err)
	}
	// A candidate's job, once enqueued, holds the candidate's slots
	// itself (as a workorder's does, Run).
	var hold *slotHold
	sctx := ctx
	if !started || a.Slots == nil || !a.Remote.holdsSlots(ctx, w.WorkOrderID, in.Attempt) {
		var busy bool
		sctx, hold, busy, err = runSlot(ctx, a.Slots, a.Store, w, domain.CandidateResource(w.WorkOrderID, in.Attempt), in.Slot, in.Queue)
		if err != nil || busy {
			return CandidateResult{Attempt: in.Attempt, SlotBusy: busy}, err
		}
		defer hold.done()
	}
	if started {
		return a.runCandidateRemote(ctx, w, req, rec, true, hold)
	}
	left, err := budget.Left(ctx, a.Store, &req.Objective)
	var spent *budget.SpentError
	if errors.As(err, &spent) {
		rec.Status, rec.Why = domain.CandidateSkipped, "not started: "+spent.Error()
		return a.putCandidate(ctx, rec)
	}
	if err != nil {
		return fail(err)
	}
	others, err := a.Store.ListCandidates(ctx, w.WorkOrderID)
	if err != nil {
		return fail(err)
	}
	if why := budget.CandidateMayStart(left, others, in.Attempt); why != "" {
		rec.Status, rec.Why = domain.CandidateSkipped, why
		return a.putCandidate(ctx, rec)
	}
	req.WorkOrder.BudgetUSDRemaining = left
	if remote {
		return a.runCandidateRemote(ctx, w, req, rec, false, hold)
	}
	ctx = sctx
	lease, err := a.acquire(ctx, a.Store, domain.ResourceCandidate, domain.CandidateResource(w.WorkOrderID, in.Attempt),
		a.runLease(ctx))
	if err != nil {
		return fail(err)
	}
	defer a.release(context.WithoutCancel(ctx), lease)
	if _, err := a.putCandidate(ctx, rec); err != nil {
		return fail(err)
	}
	kctx, stop := lease.Keep(ctx, claim.KeepOptions{OnRenew: func() { heartbeat(ctx, lease) },
		OnError: func(err error) { logger(ctx, w.ObjectiveID, w.WorkOrderID).Warn("renew candidate claim", "error", err) }})
	c, err := a.Runner.RunCandidate(kctx, req, in.Attempt)
	stop()
	switch cause := context.Cause(kctx); {
	case errors.Is(cause, claim.ErrLeaseLost):
		return fail(fmt.Errorf("stopped, claim lost: %w", cause))
	case ctx.Err() != nil:
		// Cancelled: the record says so, whatever the run left.
		wctx := context.WithoutCancel(ctx)
		rec.Status, rec.Why = domain.CandidateCancelled, "cancelled while it ran: another candidate passed every gate command first"
		if _, err := budget.Left(wctx, a.Store, &req.Objective); errors.As(err, &spent) {
			rec.Why = "cancelled while it ran: the objective's budget ran out"
		}
		return a.putCandidate(wctx, rec)
	case err != nil:
		rec.Status, rec.Why = domain.CandidateFailed, oneLine(err.Error())
		return a.putCandidate(ctx, rec)
	}
	fillCandidate(rec, c)
	res, err := a.putCandidate(ctx, rec)
	if err != nil {
		return res, err
	}
	if a.Observer != nil {
		// Counted here, once per candidate that ran: the workorder's
		// bundle repeats the winner's report and is not counted again.
		a.Observer.RunSpent(domain.BundleMetadata{Generator: rec.Generator, RunReport: rec.Report})
	}
	// What this candidate spent may have used up the budget: the others
	// are then stopped.
	if _, err := budget.Left(ctx, a.Store, &req.Objective); errors.As(err, &spent) {
		res.BudgetSpent = true
	} else if err != nil {
		return fail(err)
	}
	return res, nil
}

// putCandidate records c and answers with what it says.
func (a *Candidates) putCandidate(ctx context.Context, c *domain.Candidate) (CandidateResult, error) {
	c.UpdatedAt = a.now()
	stored, err := a.Store.PutCandidate(ctx, c)
	if domain.CandidateSettled(err) {
		// The record stays as it is.
		stored, err = a.Store.GetCandidate(ctx, c.WorkOrderID, c.Attempt)
	}
	if err != nil {
		return CandidateResult{}, fmt.Errorf("record candidate %s: %w", domain.CandidateKey(c.WorkOrderID, c.Attempt), err)
	}
	return candidateResult(stored, a.EarlyStopMaxDiffLines), nil
}

// fillCandidate copies a finished run into its record.
func fillCandidate(rec *domain.Candidate, c patch.Candidate) {
	rec.Status, rec.Generator, rec.RunnerStatus = domain.CandidateDone, c.Generator, c.RunnerStatus
	rec.Patch, rec.PatchSHA256, rec.Report = c.Patch, c.PatchSHA256, c.Report
	lines, done := c.DiffLines, c.FinishedAt.UTC()
	rec.DiffLines, rec.FinishedAt, rec.CommandsPassed = &lines, &done, c.CommandsPassed
	for _, g := range c.Gate {
		rec.GateResults = append(rec.GateResults, domain.CandidateGateResult{Command: g.Command, Passed: g.Passed,
			Detail: oneLine(g.Detail)})
	}
}

// patchCandidate is a recorded candidate as package patch compares it.
func patchCandidate(c *domain.Candidate) patch.Candidate {
	pc := patch.Candidate{Attempt: c.Attempt, Generator: c.Generator, RunnerStatus: c.RunnerStatus, Patch: c.Patch,
		PatchSHA256: c.PatchSHA256, CommandsPassed: c.CommandsPassed, Report: c.Report}
	if c.DiffLines != nil {
		pc.DiffLines = *c.DiffLines
	}
	if c.FinishedAt != nil {
		pc.FinishedAt = *c.FinishedAt
	}
	for _, g := range c.GateResults {
		pc.Gate = append(pc.Gate, patch.GateResult{Command: g.Command, Passed: g.Passed, Detail: g.Detail})
	}
	return pc
}

// SelectCandidate delivers a best-of-N workorder's winner as its one
// output bundle: the candidate with the most gate commands passed, then
// the smallest diff, then the earliest finish (select_command breaks an
// exact tie), committed on the work branch; then the workorder is
// EXECUTED, as Run leaves it. Candidates that never finished are recorded
// CANCELLED. With no candidate holding a patch, the bundle has no content
// and its notes say what each candidate did. A workorder EXECUTED already
// is a no-op.
func (a *Candidates) SelectCandidate(ctx context.Context, in SelectInput) (RunResult, error) {
	w, err := a.Store.GetWorkOrder(ctx, in.WorkOrderID)
	if err != nil {
		return RunResult{}, permanent(fmt.Errorf("select candidate of %q: %w", in.WorkOrderID, err))
	}
	if w.Status == domain.WorkOrderExecuted {
		return executed(ctx, a.Store, w.WorkOrderID)
	}
	if a.Runner == nil {
		return RunResult{}, permanent(fmt.Errorf("select candidate of %q: this worker runs no candidates: %w",
			w.WorkOrderID, diazotroph.ErrMisconfigured))
	}
	req, err := request(ctx, a.Store, w)
	if err != nil {
		return RunResult{}, permanent(fmt.Errorf("select candidate of %q: %w", w.WorkOrderID, err))
	}
	lease, err := a.acquire(ctx, a.Store, domain.ResourceWorkOrder, w.WorkOrderID, a.LeaseTTL)
	if err != nil {
		return RunResult{}, err
	}
	defer a.release(context.WithoutCancel(ctx), lease)
	kctx, stop := lease.Keep(ctx, claim.KeepOptions{OnRenew: func() { heartbeat(ctx, lease) }})
	out, err := a.deliverBest(kctx, req, in)
	stop()
	if err != nil {
		return RunResult{}, fmt.Errorf("select candidate of %q: %w", w.WorkOrderID, err)
	}
	bundle := &domain.OutputBundle{WorkOrderID: w.WorkOrderID, Title: oneLine(out.Title), Content: out.Content,
		Notes: out.Notes, Metadata: out.Metadata, RunnerStatus: out.RunnerStatus, CreatedAt: a.now()}
	res := RunResult{WorkOrderID: w.WorkOrderID}
	var changed bool
	err = lease.Fenced(ctx, func(q store.Querier) error {
		stored, _, err := q.CreateOutputBundle(ctx, bundle)
		if err != nil {
			return err
		}
		res.RunnerStatus = stored.RunnerStatus
		_, changed, err = q.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: w.WorkOrderID, Now: a.now()})
		return err
	})
	if err != nil {
		return RunResult{}, fmt.Errorf("persist the winner of %q: %w", w.WorkOrderID, err)
	}
	if changed && a.Observer != nil {
		a.Observer.WorkOrderExecuted(RunnerLocal)
	}
	return res, nil
}

// deliverBest settles the candidates and returns the workorder's bundle.
func (a *Candidates) deliverBest(ctx context.Context, req diazotroph.Request, in SelectInput) (diazotroph.Result, error) {
	recs, err := a.Store.ListCandidates(ctx, req.WorkOrder.WorkOrderID)
	if err != nil {
		return diazotroph.Result{}, err
	}
	why := "not finished: its run failed for good"
	switch {
	case in.BudgetStopped:
		why = "cancelled: the objective's budget ran out while it ran"
	case in.EarlyStopped:
		why = "cancelled: another candidate passed every gate command first"
	}
	if recs, err = a.recordUnstarted(ctx, req, recs, in); err != nil {
		return diazotroph.Result{}, err
	}
	var cands []patch.Candidate
	var recOf []*domain.Candidate
	allCommands := 0
	for _, c := range recs {
		if c.Status == domain.CandidateRunning {
			c.Status, c.Why = domain.CandidateCancelled, why
			if _, err := a.putCandidate(ctx, c); err != nil {
				return diazotroph.Result{}, err
			}
		}
		if c.Status == domain.CandidateDone {
			cands, recOf = append(cands, patchCandidate(c)), append(recOf, c)
			allCommands = max(allCommands, len(c.GateResults))
		}
	}
	winner, reason, tie := patch.Choose(cands, allCommands)
	if len(tie) > 1 {
		if k, err := a.Runner.SelectCommand(ctx, req, cands, tie); err == nil {
			winner, reason = k, patch.Why(cands, k, allCommands, "select_command chose it among the tied")
		} else if !errors.Is(err, patch.ErrNoSelectCommand) {
			return diazotroph.Result{}, err
		}
	}
	if winner < 0 {
		res := diazotroph.Result{Title: "No candidate produced a patch", Notes: reason + "\n" + settled(recs),
			Metadata: domain.BundleMetadata{BranchName: req.WorkOrder.BranchName}, RunnerStatus: domain.RunnerOK}
		if q, k := candidateQuestion(recs); q != "" {
			// No candidate passed and one asked: the round waits for
			// the answer rather than failing.
			res.Title, res.RunnerStatus, res.Metadata.Question = "No patch (a question for a human)", domain.RunnerQuestion, q
			res.Notes = fmt.Sprintf("Candidate %d asked a question and no candidate produced a patch: %s\n\n%s",
				k, oneLine(q), res.Notes)
		}
		return res, nil
	}
	if _, err := a.Store.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: req.WorkOrder.WorkOrderID,
		Attempt: recOf[winner].Attempt, Why: oneLine(reason), Now: a.now()}); err != nil {
		return diazotroph.Result{}, err
	}
	return a.Runner.DeliverCandidate(ctx, req, cands[winner], reason+"\n"+settled(recs))
}

// candidateQuestion is the question the first candidate that asked one
// asked, and its number; "" when none asked.
func candidateQuestion(recs []*domain.Candidate) (string, int) {
	for _, c := range recs {
		if c.RunnerStatus == domain.RunnerQuestion && c.Report != nil && c.Report.Question != "" {
			return c.Report.Question, c.Attempt
		}
	}
	return "", 0
}

// settled lists what became of every candidate: its status, why, and
// each gate command that failed on it with the first line of what it
// said. The next round's input quotes it, so a retry sees every
// candidate's failures, not only the delivered one's.
func settled(recs []*domain.Candidate) string {
	out := "Candidates:"
	for _, c := range recs {
		out += fmt.Sprintf("\n- candidate %d: %s", c.Attempt, c.Status)
		if c.Status == domain.CandidateDone {
			out += fmt.Sprintf(", %d of %d gate command(s) passed", c.CommandsPassed, len(c.GateResults))
		}
		if c.Why != "" {
			out += ": " + c.Why
		}
		for _, g := range c.GateResults {
			if !g.Passed {
				out += fmt.Sprintf("\n  failed: %q: %s", g.Command, g.Detail)
			}
		}
	}
	return out
}

// hasCandidates says whether w, a workorder of o, ran as candidates, whose
// spend was counted as each ran (a failed read counts as none: metrics
// only). Only an objective with several attempts has any, so one with a
// single attempt, the common case, costs no store read.
func hasCandidates(ctx context.Context, st store.CandidateQuerier, w *domain.WorkOrder, o *domain.Objective) bool {
	if o.Attempts == nil || *o.Attempts < 2 {
		return false
	}
	cs, err := st.ListCandidates(ctx, w.WorkOrderID)
	return err == nil && len(cs) > 0
}
