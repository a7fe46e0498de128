package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/lifecycle/transition"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// GateInput names the workorder to judge. RunFailure, when set, is why the
// Run activity gave up without a bundle; the gate records it as the FAIL.
type GateInput struct {
	WorkOrderID string
	RunFailure  string
	// Local says the caller runs Gate as a local activity, which must stay
	// short: a workorder whose diazotroph would check its work (a
	// repository's branch, its gate commands) is handed back
	// (NeedsRepository) with nothing written.
	Local bool `json:",omitempty"`
}

// GateResult is the verdict and what it did to the objective.
type GateResult struct {
	GateResult string
	GateReason string
	CommitSHA  string
	// Status and BlockerRef are the objective's afterwards: a FAIL leaves
	// it TODO with a blocker_ref, waiting for a human's retry.
	Status     domain.Status
	BlockerRef domain.BlockerRef
	Pause      domain.PauseState
	// PullRequest: the PASS is to get a pull request on the repository's
	// forge (OpenPullRequest).
	PullRequest bool `json:",omitempty"`
	// NeedsRepository answers a Local call whose verdict needs the
	// diazotroph's own checks: nothing was written, and the other fields
	// are empty. Gate it as an activity.
	NeedsRepository bool `json:",omitempty"`
}

// Gate is the gate (docs/protocol/lifecycle.md#gating). Holding the workorder's
// claim, it judges the output bundle and writes, in one transaction, the run
// record (upserted by work_order_id), the objective's transition (DONE on
// PASS; TODO with a blocker_ref on FAIL) and the pause state (RUN_COMPLETE or
// GATE_FAILED). A Local call, which runs the built-in checks only, takes
// and releases the claim inside that transaction. Gating a workorder that
// already has its verdict returns it.
func (a *Steps) Gate(ctx context.Context, in GateInput) (GateResult, error) {
	w, err := a.Store.GetWorkOrder(ctx, in.WorkOrderID)
	if err != nil {
		return GateResult{}, permanent(fmt.Errorf("gate workorder %q: %w", in.WorkOrderID, err))
	}
	if res, done, err := a.gated(ctx, a.Store, w); err != nil || done {
		return res, permanent(err)
	}
	// A Local call runs the built-in checks only (a workorder whose
	// diazotroph checks its work itself is handed back), so it holds the
	// claim for the one transaction (claim.Bridge.Within). Otherwise the
	// bundle, written once, is judged before the transaction: gate
	// commands may run for minutes, with the claim kept alive.
	var lease *claim.Lease
	jctx, stop := ctx, func() {}
	if !in.Local {
		if lease, err = a.acquire(ctx, a.Store, domain.ResourceWorkOrder, w.WorkOrderID, a.LeaseTTL); err != nil {
			return GateResult{}, err
		}
		jctx, stop = lease.Keep(ctx, claim.KeepOptions{OnRenew: func() { heartbeat(ctx, lease) },
			OnError: func(err error) { logger(ctx, w.ObjectiveID, w.WorkOrderID).Warn("renew workorder claim", "error", err) }})
	}
	v, err := a.judge(jctx, w, in.RunFailure, in.Local)
	stop()
	if errors.Is(err, errNeedsRepository) {
		return GateResult{NeedsRepository: true}, nil
	}
	if err == nil {
		v.closedIssue, err = closedIssue(ctx, a.Store, w.ObjectiveID)
	}
	if err != nil {
		if lease != nil {
			a.release(ctx, lease)
		}
		return GateResult{}, permanent(fmt.Errorf("gate workorder %q: %w", w.WorkOrderID, err))
	}
	var wr verdictWrite
	write := func(q store.Querier) error { return wr.write(ctx, a, q, w, v) }
	if lease == nil {
		var ok bool
		ok, err = a.Claims.Within(ctx, domain.ResourceWorkOrder, w.WorkOrderID, a.ownerID(ctx), a.LeaseTTL, write)
		if err == nil && !ok {
			return GateResult{}, claimedBy(ctx, a.Store, domain.ResourceWorkOrder, w.WorkOrderID)
		}
	} else {
		err = lease.Fenced(ctx, write)
		// Released even when the write failed: see Schedule.
		a.release(ctx, lease)
	}
	if err != nil {
		return GateResult{}, permanent(fmt.Errorf("gate workorder %q: %w", w.WorkOrderID, err))
	}
	if wr.written && a.Observer != nil {
		a.Observer.GateVerdict(GateWorkOrder, wr.res.GateResult)
		if v.bundle != nil && !hasCandidates(ctx, a.Store, w, wr.o) {
			a.Observer.RunSpent(v.bundle.Metadata)
		}
	}
	logger(ctx, w.ObjectiveID, w.WorkOrderID).Info("workorder gated", "gate_result", wr.res.GateResult,
		"status", wr.res.Status)
	return wr.res, nil
}

// verdictWrite is what writing a verdict came to.
type verdictWrite struct {
	res GateResult
	// o is the objective as the verdict left it; nil unless written.
	o *domain.Objective
	// written: this call wrote the verdict (an earlier attempt had not).
	written bool
}

// write writes v in q, a transaction fenced by the workorder's claim,
// unless an earlier attempt did.
func (wr *verdictWrite) write(ctx context.Context, a *Steps, q store.Querier, w *domain.WorkOrder, v judgement) error {
	var done bool
	var err error
	if wr.res, done, err = a.gated(ctx, q, w); err != nil || done {
		return err
	}
	wr.res, wr.o, err = a.gate(ctx, q, w, v)
	wr.written = err == nil
	return err
}

// verdict judges a bundle (docs/protocol/patch-flow.md#checking-the-bundle).
func verdict(b *domain.OutputBundle, runFailure string) (result, reason string) {
	switch {
	case b == nil && runFailure != "":
		return domain.GateFail, "run produced no output bundle: " + runFailure
	case b == nil:
		return domain.GateFail, "run produced no output bundle"
	}
	if err := schemas.Validate(schemas.OutputBundle, b); err != nil {
		return domain.GateFail, "output bundle is invalid: " + err.Error()
	}
	// The non-empty check does not apply to an exhausted budget or a
	// stalled run: the empty content is expected there. The run still did
	// not do the work, so the verdict is FAIL, for the budget or the stall
	// rather than for the empty content.
	switch b.RunnerStatus {
	case domain.RunnerBudgetExhausted:
		return domain.GateFail, "budget exhausted: " + firstLine(b.Notes)
	case domain.RunnerStalled:
		// Its notes' first line names the stall timeout.
		return domain.GateFail, "run stalled: " + firstLine(b.Notes)
	case domain.RunnerStopped:
		return domain.GateFail, "run stopped: " + firstLine(b.Notes)
	case domain.RunnerQuestion:
		// Not the agent's failure: it waits for an answer.
		return domain.GateFail, "the agent asks a question: " + oneLine(b.Metadata.Question)
	case domain.RunnerApplyFailed:
		return domain.GateFail, "patch did not apply: " + firstLine(b.Notes)
	case domain.RunnerEnvironmentFailed:
		// Its notes are the setup's report: the failure, the output's
		// tail, the fix.
		return domain.GateFail, "environment: " + strings.TrimSpace(b.Notes)
	}
	if strings.TrimSpace(b.Content) == "" {
		reason := "output bundle content is empty"
		if b.Notes != "" {
			reason += ": " + firstLine(b.Notes)
		}
		return domain.GateFail, reason
	}
	return domain.GatePass, fmt.Sprintf("output bundle valid, %d bytes of content, runner status %s",
		len(b.Content), b.RunnerStatus)
}

// judgement is a workorder's verdict before it is written.
type judgement struct {
	result, reason, commitSHA string
	// unpushed: the work branch lives only in the runner's workspace.
	unpushed bool
	// environment: the FAIL is the environment's, not the patch's; fix
	// says what to change.
	environment bool
	fix         string
	// bundle is the one judged, nil when the run left none.
	bundle *domain.OutputBundle
	// closedIssue names the issue the objective came from when it was
	// closed on its forge while the round ran ("" otherwise).
	closedIssue string
}

// judge runs the built-in checks and, when they pass and the workorder's
// diazotroph has checks of its own, those; with local set it returns
// errNeedsRepository instead of running them.
func (a *Steps) judge(ctx context.Context, w *domain.WorkOrder, runFailure string, local bool) (judgement, error) {
	b, err := a.Store.GetOutputBundle(ctx, w.WorkOrderID)
	if errors.Is(err, domain.ErrNotFound) {
		b, err = nil, nil
	}
	if err != nil {
		return judgement{}, err
	}
	var j judgement
	j.result, j.reason = verdict(b, runFailure)
	j.bundle = b
	if b != nil {
		j.commitSHA = b.Metadata.CommitSHA
		if b.RunnerStatus == domain.RunnerEnvironmentFailed {
			j.environment, j.fix = true, fixOf(b.Notes)
		}
	}
	if j.result != domain.GatePass || a.Diazotrophs == nil {
		return j, nil
	}
	d, err := a.Diazotrophs.Lookup(w.DiazotrophType)
	if err != nil {
		return j, nil // a bundle written by a diazotroph this worker lacks: the built-in checks stand
	}
	c, ok := d.(diazotroph.Checker)
	if !ok {
		return j, nil
	}
	if local {
		return judgement{}, errNeedsRepository
	}
	snap, err := a.Store.GetContextSnapshot(ctx, w.ContextSnapshotID)
	if err != nil {
		return judgement{}, err
	}
	o, err := a.Store.GetObjective(ctx, w.ObjectiveID)
	if err != nil {
		return judgement{}, err
	}
	v, err := c.Check(ctx, diazotroph.Check{WorkOrder: *w, Objective: *o, Snapshot: *snap, Bundle: *b})
	if err != nil {
		return judgement{}, fmt.Errorf("%s gate checks: %w", w.DiazotrophType, err)
	}
	j.unpushed = v.Unpushed
	switch {
	case !v.Pass:
		j.result, j.reason = domain.GateFail, cmp.Or(v.Reason, w.DiazotrophType+" gate checks failed")
		j.environment, j.fix = v.Environment, v.Fix
	case v.Reason != "":
		j.reason += "; " + v.Reason
	}
	return j, nil
}

// gate writes the verdict, the transition and the pause state, and returns
// the objective as the transition left it.
func (a *Steps) gate(ctx context.Context, q store.Querier, w *domain.WorkOrder, j judgement) (GateResult, *domain.Objective, error) {
	now := a.now()
	rr := &domain.RunRecord{WorkOrderID: w.WorkOrderID, ObjectiveID: w.ObjectiveID, GateResult: j.result,
		GateReason: j.reason, CommitSHA: j.commitSHA, CreatedAt: now, UpdatedAt: now}
	if j.result == domain.GateFail && j.environment {
		rr.Blame = domain.BlameEnvironment
	}
	if _, err := q.UpsertRunRecord(ctx, rr); err != nil {
		return GateResult{}, nil, err
	}
	if rr.Blame == domain.BlameEnvironment {
		return gateEnvironment(ctx, q, w, j, rr, now)
	}
	var keep *pause.Action
	if j.unpushed && a.Retention > 0 {
		keep = pause.KeepBranchAction(w.BranchName, a.Retention)
	}
	p := transition.Pass.Params(w.ObjectiveID, now)
	if j.result != domain.GatePass {
		p = transition.Fail.Params(w.ObjectiveID, now)
		ref := domain.GateBlocker(w.WorkOrderID)
		p.BlockerRef = &ref
	}
	o, err := q.TransitionObjective(ctx, p)
	if err != nil {
		return GateResult{}, nil, err
	}
	var ps domain.PauseState
	switch {
	case j.closedIssue != "" && j.result == domain.GatePass:
		ps = pause.ClosedAfterPass(o.ObjectiveID, o.StatusSeq, w.WorkOrderID, j.closedIssue, branchOf(w, j.commitSHA), now)
	case j.closedIssue != "":
		ps = pause.ClosedAfterFail(o.ObjectiveID, o.StatusSeq, w.WorkOrderID, j.closedIssue, j.reason, now)
		if j.bundle != nil {
			ps = pause.WithPartialWork(ps, j.bundle.Metadata.Partial)
		}
	default:
		if ps, err = a.gatePause(ctx, q, w, o, j, rr, keep); err != nil {
			return GateResult{}, nil, err
		}
	}
	if err := q.CreatePauseState(ctx, &ps); err != nil {
		return GateResult{}, nil, err
	}
	return GateResult{GateResult: j.result, GateReason: j.reason, CommitSHA: rr.CommitSHA, Status: o.Status,
		BlockerRef: o.BlockerRef, Pause: ps, PullRequest: j.closedIssue == "" && a.wantsPullRequest(rr, o)}, o, nil
}

// intakeItemOf is the item objectiveID came from, nil when it came from
// none.
func intakeItemOf(ctx context.Context, q store.IntakeQuerier, objectiveID string) (*domain.IntakeItem, error) {
	it, err := q.IntakeItemOf(ctx, objectiveID)
	var nf *domain.NotFoundError
	if errors.As(err, &nf) {
		return nil, nil
	}
	return it, err
}

// branchOf is the work branch of a PASS that made commit, "" when the run
// made none.
func branchOf(w *domain.WorkOrder, commit string) string {
	if commit == "" {
		return ""
	}
	return w.BranchName
}

// closedIssue names the issue objectiveID came from ("#12 (https://…)")
// when its forge says it is closed, "" when it is open or the objective
// came from no issue.
func closedIssue(ctx context.Context, q store.IntakeQuerier, objectiveID string) (string, error) {
	it, err := intakeItemOf(ctx, q, objectiveID)
	if err != nil || it == nil || !it.Closed {
		return "", err
	}
	if it.URL == "" {
		return "#" + it.ExternalID, nil
	}
	return "#" + it.ExternalID + " (" + it.URL + ")", nil
}

// gated returns the stored verdict of a workorder gated before, done=false
// if there is none.
func (a *Steps) gated(ctx context.Context, q roundReader, w *domain.WorkOrder) (GateResult, bool, error) {
	rr, err := q.GetRunRecord(ctx, w.WorkOrderID)
	if errors.Is(err, domain.ErrNotFound) {
		return GateResult{}, false, nil
	}
	if err != nil {
		return GateResult{}, false, err
	}
	res := GateResult{GateResult: rr.GateResult, GateReason: rr.GateReason, CommitSHA: rr.CommitSHA}
	o, err := q.GetObjective(ctx, w.ObjectiveID)
	if err != nil {
		return res, true, err
	}
	res.Status, res.BlockerRef, res.PullRequest = o.Status, o.BlockerRef, a.wantsPullRequest(rr, o)
	pauses, err := q.ListPauseStates(ctx, w.ObjectiveID)
	if err != nil {
		return res, true, err
	}
	for _, p := range pauses {
		if p.WorkOrderID == w.WorkOrderID {
			res.Pause = *p
		}
	}
	return res, true, nil
}

// gateEnvironment writes the rest of a FAIL that is the environment's: the
// objective is BLOCKED on it (a blocker naming the failure, the gate's
// blocker_ref), and the pause says what to fix before unblocking. No round
// is charged to the agent.
func gateEnvironment(ctx context.Context, q store.Querier, w *domain.WorkOrder, j judgement,
	rr *domain.RunRecord, now time.Time) (GateResult, *domain.Objective, error) {
	p := transition.Environment.Params(w.ObjectiveID, now)
	ref := domain.GateBlocker(w.WorkOrderID)
	blocker := truncate(oneLine(strings.TrimPrefix(firstLine(j.reason), "environment: ")), maxBlocker)
	p.BlockerRef, p.Blockers = &ref, &[]string{"environment: " + blocker}
	o, err := q.TransitionObjective(ctx, p)
	if err != nil {
		return GateResult{}, nil, err
	}
	ps := pause.EnvironmentBlocked(o.ObjectiveID, o.StatusSeq, w.WorkOrderID, blocker, truncate(oneLine(j.fix), maxBlocker), now)
	if err := q.CreatePauseState(ctx, &ps); err != nil {
		return GateResult{}, nil, err
	}
	return GateResult{GateResult: j.result, GateReason: j.reason, Status: o.Status, BlockerRef: o.BlockerRef,
		Pause: ps}, o, nil
}

// maxBlocker bounds a blocker and a fix the gate writes.
const maxBlocker = 400

// fixOf is the fix a setup's report names ("fix: ..."), "" if none.
func fixOf(notes string) string {
	for _, l := range strings.Split(notes, "\n") {
		if f, ok := strings.CutPrefix(l, "fix: "); ok {
			return f
		}
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if line == "" {
		return "(no notes)"
	}
	return line
}

// wantsPullRequest says whether a verdict gets a pull request: a PASS with
// a commit, on a repository with a forge.
func (a *Steps) wantsPullRequest(rr *domain.RunRecord, o *domain.Objective) bool {
	return rr.GateResult == domain.GatePass && rr.CommitSHA != "" && a.Forges != nil && o.Repository != "" &&
		a.Forges.Has(o.Repository)
}
