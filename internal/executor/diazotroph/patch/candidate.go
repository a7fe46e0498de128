package patch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
)

// Candidate is one of a workorder's several attempts
// (docs/patches.md#several-candidates): what its generator produced in
// the candidate's own workspace, and how the repository's gate commands
// judged it there. It is a plain value, to be recorded and compared
// (Choose); only the chosen one's patch reaches the work branch
// (DeliverCandidate).
type Candidate struct {
	// Attempt is the candidate's number, 1..N.
	Attempt int
	// Generator is the name of the generator that ran.
	Generator string
	// RunnerStatus is store.RunnerOK, RunnerBudgetExhausted,
	// RunnerApplyFailed or RunnerStalled, as a bundle's would be.
	RunnerStatus string
	// Patch is the repository's diff of the candidate's commit, as a
	// bundle's content would be ("" when the generator produced none);
	// after APPLY_FAILED, the refused patch. PatchSHA256 is its hex
	// SHA-256, "" with it.
	Patch       string
	PatchSHA256 string
	// DiffLines is the patch's normalised size (DiffLines).
	DiffLines int
	// Gate holds each gate command's result, in order; all of them ran,
	// whatever the ones before did. nil when there was no patch to judge.
	Gate           []GateResult
	CommandsPassed int
	// Report is the generator run's report, redacted as Execute's bundle
	// carries it; nil without one. Transcript is its transcript, likewise.
	Report     *domain.RunReport
	Transcript *domain.TranscriptRef
	// Notes are the candidate run's, as a bundle's would be.
	Notes string
	// Branch and Workspace are the candidate's own; CommitSHA is its
	// commit there, "" without one.
	Branch    string
	Workspace string
	CommitSHA string
	// FinishedAt is when its patch was ready (or its run ended without
	// one), before its gate commands ran: the commands take as long for
	// every candidate, the generator does not.
	FinishedAt time.Time
}

// HasPatch reports whether c has a patch that can compete: one that
// applied and committed.
func (c Candidate) HasPatch() bool {
	return c.RunnerStatus == domain.RunnerOK && strings.TrimSpace(c.Patch) != ""
}

// CandidateWorkspace is the directory of candidate k's workspace of a
// workorder.
func (p *Patch) CandidateWorkspace(workOrderID string, k int) string {
	return filepath.Join(WorkspacesDir(p.o.Dir), workOrderID+candidateInfix+strconv.Itoa(k))
}

// CandidateBranch is candidate k's internal branch of an objective,
// azolla/<objective_id>/c<k>.
func CandidateBranch(objectiveID string, k int) string {
	return fmt.Sprintf("azolla/%s/c%d", objectiveID, k)
}

// RunCandidate is candidate k's run of a workorder: Execute's run (within
// req.Budget, with patchgen.Input.Candidate = k), in the candidate's own
// workspace on its own branch, never pushed; then, when it committed a
// patch, every gate command of the repository in that workspace, within
// the gate budget. Candidates of one workorder may run concurrently.
//
// Its errors are Execute's, and those of the gate's executor; a run that
// produced no patch is a Candidate with status OK and no Patch.
func (p *Patch) RunCandidate(ctx context.Context, req diazotroph.Request, k int) (Candidate, error) {
	r, err := p.newRun(req)
	if err != nil {
		return Candidate{}, err
	}
	o, w := req.Objective, req.WorkOrder
	if k < 1 {
		return Candidate{}, fmt.Errorf("workorder %s: candidate %d: candidates are numbered from 1: %w", w.WorkOrderID, k,
			diazotroph.ErrMisconfigured)
	}
	r.candidate, r.branch, r.ws = k, CandidateBranch(o.ObjectiveID, k), p.CandidateWorkspace(w.WorkOrderID, k)
	if err := gitops.ValidateBranch(r.branch); err != nil {
		return Candidate{}, fmt.Errorf("workorder %s: candidate %d: %w: %w", w.WorkOrderID, k, err, diazotroph.ErrMisconfigured)
	}
	res, err := r.execute(ctx)
	if err != nil {
		return Candidate{}, fmt.Errorf("candidate %d: %w", k, err)
	}
	c := Candidate{Attempt: k, Generator: r.genName, RunnerStatus: res.RunnerStatus, Patch: res.Content,
		Report: res.Metadata.RunReport, Transcript: res.Metadata.Transcript, Notes: res.Notes, Branch: r.branch,
		Workspace: r.ws, CommitSHA: res.Metadata.CommitSHA, FinishedAt: time.Now().UTC()}
	if c.Patch != "" {
		sum := sha256.Sum256([]byte(c.Patch))
		c.PatchSHA256, c.DiffLines = hex.EncodeToString(sum[:]), DiffLines(c.Patch)
	}
	if !c.HasPatch() {
		return c, nil
	}
	s := p.o.Settings(o.Repository)
	if len(s.GateCommands) == 0 {
		return c, nil
	}
	vars := append(gateVars(o.ObjectiveID, w.WorkOrderID, r.branch, c.CommitSHA), "AZOLLA_CANDIDATE="+strconv.Itoa(k))
	g, err := p.gateCommands(ctx, s, o.Repository, o.ObjectiveID, r.ws, r.base, vars, true)
	if err != nil {
		return Candidate{}, fmt.Errorf("candidate %d: %w", k, err)
	}
	c.Gate = g.results
	for _, g := range c.Gate {
		if g.Passed {
			c.CommandsPassed++
		}
	}
	return c, nil
}

// DeliverCandidate commits c's patch on the workorder's work branch in its
// workspace, as Execute would have had a static generator proposed it
// (pushed likewise), and returns the workorder's one output bundle: its
// notes begin with why, which says why c won and what the others did
// (Choose, Why); its run report and generator are c's.
func (p *Patch) DeliverCandidate(ctx context.Context, req diazotroph.Request, c Candidate, why string) (diazotroph.Result, error) {
	// c's generator ran elsewhere, maybe on a remote worker, and need not
	// be available here: the run is checked as a static one's.
	static := req
	static.Objective.Generator = patchgen.StaticName
	r, err := p.newRun(static)
	if err != nil {
		return diazotroph.Result{}, err
	}
	r.req = req
	if !c.HasPatch() {
		return diazotroph.Result{}, fmt.Errorf("workorder %s: candidate %d (%s) has no patch to deliver",
			req.WorkOrder.WorkOrderID, c.Attempt, c.RunnerStatus)
	}
	if err := ClearPushed(p.o.Dir, req.WorkOrder.WorkOrderID); err != nil {
		return diazotroph.Result{}, err
	}
	// The patch is applied as given, on the workspace as prepared: the
	// static generator stands in for c's, which ran elsewhere.
	r.gen, r.genName, r.transcript = patchgen.NewStatic(), c.Generator, c.Transcript
	if _, err := r.prepare(ctx); err != nil {
		return diazotroph.Result{}, err
	}
	out := patchgen.Output{Patch: c.Patch, Report: c.Report,
		Notes: fmt.Sprintf("candidate %d, from %s:\n%s", c.Attempt, c.Branch, strings.TrimSpace(c.Notes))}
	r.out, r.ran = out, true
	res, err := r.apply(ctx, out)
	if err != nil {
		return diazotroph.Result{}, err
	}
	res.Notes = strings.TrimSpace(why) + "\n\n" + res.Notes
	return res, nil
}

// GeneratorName is the generator a run of o uses: its own, else the
// configured default.
func (p *Patch) GeneratorName(o domain.Objective) string {
	if o.Generator != "" {
		return o.Generator
	}
	return p.o.Default
}
