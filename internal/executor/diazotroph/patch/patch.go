// Package patch is PATCH_DIAZOTROPH, the patch flow (docs/protocol/patch-flow.md) on real
// git repositories. For each workorder it keeps a workspace (a clone of the
// repository's mirror, see gitops) checked out at the snapshot's commit on
// the work branch, asks a generator (patchgen) for a candidate patch within
// the workorder's budget, refuses patches that reach outside the workspace,
// applies and commits what remains, and reports the normalized repository
// diff, never the generator's raw text.
//
// The same value resolves repositories for the scheduler (Resolve, the
// diazotroph.Targets of the snapshot) and runs each repository's gate
// commands for the gate (Check, a diazotroph.Checker).
package patch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/environment"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/executor/runreport"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/schemas"
)

// Settings are one repository's gate commands and push remote.
type Settings struct {
	GateCommands []string
	// GateBudget bounds all gate commands together.
	GateBudget time.Duration
	// Gate runs the gate commands (package sandbox); required when there
	// are any.
	Gate *sandbox.Executor
	// PushRemote, when set, receives each patch branch (force-pushed).
	PushRemote string
	// PushAuth, when set, is sent to an HTTPS PushRemote (a forge's
	// token); PushProblem, when set, says why the push cannot be made
	// (the forge's token is missing) and the branch is not pushed.
	PushAuth    *gitops.HTTPAuth
	PushProblem string
	// SelectCommand, when set, breaks exact ties between candidates
	// (SelectCommand); it runs on Gate like the gate commands.
	SelectCommand string
}

// Options configures a Patch.
type Options struct {
	Git gitops.Git
	// Dir holds mirrors/ and workspaces/ (one per workorder).
	Dir string
	// Generators by name, and the one objectives that choose none get.
	Generators map[string]patchgen.Generator
	Default    string
	// Unconfigured explains, by generator name, why a known generator is
	// missing from Generators (e.g. which config key to set).
	Unconfigured map[string]string
	Author       gitops.Author
	Policy       gitops.PatchPolicy
	// FileListLimit bounds the file listing of a resolved target.
	FileListLimit int
	// Settings returns a repository's settings; nil means none anywhere.
	Settings func(repository string) Settings
	// Secrets are the values no patch may carry: a candidate patch holding
	// one is refused before anything is written, since redacting it would
	// change what it does.
	Secrets *redact.Redactor
	// TranscriptMax bounds the transcript kept of a generator's run, in
	// bytes before compression (its end is kept); 0 keeps none.
	TranscriptMax int
	// Environments prepare each repository's environment before its
	// agent and its gate commands run (package environment); nil: none.
	Environments *environment.Manager
	// Fresh makes every round start from the snapshot's commit, leaving
	// the round before's partial work where it is (patch.resume: fresh).
	Fresh bool
}

// Patch is PATCH_DIAZOTROPH. It is safe for concurrent use: workorders have
// workspaces of their own and mirrors serialize their own updates.
type Patch struct {
	o       Options
	mirrors *gitops.Mirrors
}

var (
	_ diazotroph.Diazotroph = (*Patch)(nil)
	_ diazotroph.Targets    = (*Patch)(nil)
	_ diazotroph.Checker    = (*Patch)(nil)
)

// New returns a Patch.
func New(o Options) *Patch {
	if o.Settings == nil {
		o.Settings = func(string) Settings { return Settings{} }
	}
	return &Patch{o: o, mirrors: &gitops.Mirrors{Git: o.Git, Root: MirrorsDir(o.Dir)}}
}

// Type returns diazotroph.PatchType.
func (p *Patch) Type() string { return diazotroph.PatchType }

// Workspace is the directory of a workorder's workspace.
func (p *Patch) Workspace(workOrderID string) string {
	return filepath.Join(WorkspacesDir(p.o.Dir), workOrderID)
}

// bundleGenerators are the generator names a bundle's metadata may
// record (output_bundle.schema.json).
var bundleGenerators = map[string]bool{"command": true, "openai": true, "static": true}

// errBudget is the cause of a run's context when its budget expires.
var errBudget = errors.New("workorder budget exhausted")

// Execute is the run of one workorder (docs/protocol/patch-flow.md#the-run).
func (p *Patch) Execute(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
	r, err := p.newRun(req)
	if err != nil {
		return diazotroph.Result{}, err
	}
	// This run moves the branch: an earlier run's push of it says nothing
	// about what the branch will hold.
	if err := ClearPushed(p.o.Dir, req.WorkOrder.WorkOrderID); err != nil {
		return diazotroph.Result{}, err
	}
	return r.execute(ctx)
}

// execute generates a patch within the request's budget and applies and
// commits it in r's workspace, on r's branch.
func (r *run) execute(ctx context.Context) (diazotroph.Result, error) {
	// The budget covers what may take long: reading the repository and
	// generating the patch. Applying and committing are quick and local.
	// Setting up the environment is not the agent's time: it has a budget
	// of its own, and the agent's budget stops while it runs.
	pctx, cancel := context.WithTimeoutCause(ctx, r.req.Budget, errBudget)
	stage, err := r.prepare(pctx)
	used := time.Since(r.start)
	cancel()
	if s := diazotroph.StopOf(ctx); s != nil {
		return r.stopped(ctx, s, patchgen.Output{}), nil
	}
	if err != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(pctx), errBudget) {
			return r.exhausted(ctx, stage, patchgen.Output{}), nil
		}
		return diazotroph.Result{}, err
	}
	env, err := r.p.prepareEnvironment(ctx, r.req.Objective.Repository, r.ws, r.base, r.ws)
	var se *environment.SetupError
	if errors.As(err, &se) {
		return r.environmentFailed(se), nil
	}
	if err != nil {
		return diazotroph.Result{}, fmt.Errorf("prepare the environment of %s: %w", r.req.Objective.Repository, err)
	}
	defer env.close()
	r.env = env
	bctx, cancel := context.WithTimeoutCause(ctx, max(r.req.Budget-used, 0), errBudget)
	defer cancel()
	out, stage, err := r.generate(bctx)
	if s := diazotroph.StopOf(ctx); s != nil {
		return r.stopped(ctx, s, out), nil
	}
	if err != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(bctx), errBudget) {
			return r.exhausted(ctx, stage, out), nil
		}
		var stalled *sandbox.StallError
		if ctx.Err() == nil && errors.As(err, &stalled) {
			return r.stalled(ctx, stalled, out), nil
		}
		return diazotroph.Result{}, err
	}
	if out.Question != "" {
		return r.asked(ctx, out), nil
	}
	if strings.TrimSpace(out.Patch) == "" {
		return r.result(domain.RunnerOK, "", fmt.Sprintf("The %s generator produced no patch.\n\n%s", r.genName, out.Notes),
			domain.BundleMetadata{BranchName: r.branch}), nil
	}
	return r.apply(ctx, out)
}

// run is one Execute call, or one candidate's run (RunCandidate), or the
// delivery of the chosen candidate's patch (DeliverCandidate).
type run struct {
	p     *Patch
	req   diazotroph.Request
	start time.Time
	// branch and ws are the workorder's work branch and workspace, or a
	// candidate's own.
	branch string
	base   string // the snapshot's commit
	// from is the commit the round starts from and commits on: base, or
	// the head of the pull request it revises (revising); diffBase is
	// what its bundle's diff is against: base, or the merge base of base
	// and that head.
	from, diffBase string
	revising       bool
	// merged is the base commit merged into the pull request's head when
	// it conflicted with it ("" otherwise); conflicted are the files the
	// merge left with conflict markers, for the agent to resolve.
	merged     string
	conflicted []string
	ws         string
	// candidate is the candidate's number, 0 for the workorder's own run.
	candidate int
	mirror    string
	genName   string
	gen       patchgen.Generator
	// transcript is the generator run's, for every bundle of this run.
	transcript *domain.TranscriptRef
	// out is what the generator returned, once ran says it was asked:
	// every bundle after that names the generator and carries its
	// report, so that what the run cost is counted however it ended.
	out patchgen.Output
	ran bool
	// env is the repository's environment the generator runs in, nil
	// without one.
	env *prepared
	// resumed tells the agent of the partial work the run started from
	// ("" when it started from the snapshot's commit); resumeNote tells
	// the notes whether it did.
	resumed, resumeNote string
}

func (p *Patch) newRun(req diazotroph.Request) (*run, error) {
	o, w := req.Objective, req.WorkOrder
	misconfigured := func(format string, args ...any) (*run, error) {
		return nil, fmt.Errorf("workorder %s: %w: %w", w.WorkOrderID, fmt.Errorf(format, args...), diazotroph.ErrMisconfigured)
	}
	// The store only holds valid records; checking again here keeps a
	// hostile id or branch away from git whoever calls Execute.
	if err := schemas.Validate(schemas.Objective, o); err != nil {
		return misconfigured("%w", err)
	}
	if err := schemas.Validate(schemas.WorkOrder, w); err != nil {
		return misconfigured("%w", err)
	}
	if w.BranchName != "azolla/"+o.ObjectiveID {
		return misconfigured("branch %q is not the objective's work branch", w.BranchName)
	}
	if o.Repository == "" {
		return misconfigured("objective %s names no repository", o.ObjectiveID)
	}
	if req.Snapshot.Metadata.CommitSHA == "" {
		return misconfigured("context snapshot %s records no commit", req.Snapshot.ContextSnapshotID)
	}
	if err := gitops.ValidateBranch(w.BranchName); err != nil {
		return misconfigured("%w", err)
	}
	name := o.Generator
	if name == "" {
		name = p.o.Default
	}
	gen, ok := p.o.Generators[name]
	if !ok {
		why := p.o.Unconfigured[name]
		if why == "" {
			why = "no such generator"
		}
		return misconfigured("patch generator %q is not available: %s", name, why)
	}
	base := req.Snapshot.Metadata.CommitSHA
	return &run{p: p, req: req, start: time.Now(), branch: w.BranchName, base: base, from: base, diffBase: base,
		ws: p.Workspace(w.WorkOrderID), genName: name, gen: gen}, nil
}

// generate asks the generator for a patch in the prepared workspace. stage
// names what was under way when it failed.
func (r *run) generate(ctx context.Context) (out patchgen.Output, stage string, err error) {
	o := r.req.Objective
	prompt := r.req.Snapshot.FullPromptText
	if r.revising {
		prompt += fmt.Sprintf("\n\nThis round revises pull request %s: the worktree is its head, commit %s, and "+
			"your change is committed on top of it as a new commit. Change what the feedback asks for; the pull "+
			"request's earlier commits stay.", r.req.Revise.PullRequest, r.from)
	}
	if r.merged != "" {
		prompt += fmt.Sprintf("\n\nThe base branch moved on and the pull request conflicted with it: its head, "+
			"commit %s, has been merged into your worktree.", r.merged)
		if len(r.conflicted) > 0 {
			prompt += fmt.Sprintf(" These files conflict and hold git's conflict markers (<<<<<<<, =======, "+
				">>>>>>>): %s. Resolve each, keeping what both sides meant, and remove every marker.",
				strings.Join(r.conflicted, ", "))
		}
	}
	if r.resumed != "" {
		prompt += "\n\n" + r.resumed
	}
	out, err = r.gen.Generate(ctx, patchgen.Input{ObjectiveID: o.ObjectiveID, WorkOrderID: r.req.WorkOrder.WorkOrderID,
		BranchName: r.branch, BaseBranch: r.req.Snapshot.Metadata.BaseBranch, CommitSHA: r.from, Title: o.Title,
		AcceptanceCriteria: o.AcceptanceCriteria, Prompt: prompt, StaticPatch: o.Patch,
		Worktree: r.ws, BudgetUSDRemaining: r.req.WorkOrder.BudgetUSDRemaining, Candidate: r.candidate,
		Environment: r.env.extra(), HouseRules: r.houseRules(ctx), Home: r.agentHome(), Session: r.session()})
	r.out, r.ran = out, true
	r.transcript = r.p.transcript(out.Transcript)
	if errors.Is(err, patchgen.ErrNoStaticPatch) {
		err = fmt.Errorf("objective %s chose the static generator but carries no patch: %w", o.ObjectiveID,
			diazotroph.ErrMisconfigured)
	}
	if err != nil {
		return out, "generating the patch with the " + r.genName + " generator", err
	}
	return out, "", nil
}

// agentHome is the HOME of the objective's command agent, kept between
// its rounds so that its sessions can be continued; "" for a candidate,
// whose runs may be concurrent, and for the other generators.
func (r *run) agentHome() string {
	if r.candidate != 0 || r.gen.Name() != patchgen.CommandName {
		return ""
	}
	return filepath.Join(HomesDir(r.p.o.Dir), r.req.Objective.ObjectiveID)
}

// session is the agent's session the round continues.
func (r *run) session() string {
	if r.candidate != 0 || r.p.o.Fresh {
		return ""
	}
	return r.req.Session
}

// prepare fetches the repository and checks r's workspace out at the
// snapshot's commit on r's branch. stage names what was under way when it
// failed.
func (r *run) prepare(ctx context.Context) (stage string, err error) {
	o := r.req.Objective
	if r.mirror, err = r.p.mirrors.Sync(ctx, o.Repository); err != nil {
		return "fetching the repository", fmt.Errorf("fetch %s: %w", o.Repository, err)
	}
	salvaged := r.salvage(ctx)
	if r.revise(ctx) {
		r.resume(ctx, salvaged)
		return "", nil
	}
	if err := r.p.o.Git.PrepareWorkspace(ctx, r.mirror, r.ws, r.branch, r.base); err != nil {
		return "preparing the workspace", fmt.Errorf("prepare workspace %s: %w", r.ws, err)
	}
	r.resume(ctx, salvaged)
	return "", nil
}

// revise checks r's workspace out at the head of the pull request r's
// round revises, when there is one and its head can be had
// (docs/pull-requests.md#review-rounds), and says whether it did. A head
// that cannot be had is told in the notes, and the round starts from the
// snapshot's commit and replaces the pull request's commits.
func (r *run) revise(ctx context.Context) bool {
	rv := r.req.Revise
	if rv == nil || r.candidate != 0 {
		return false
	}
	g := r.p.o.Git
	err := g.PrepareWorkspace(ctx, r.mirror, r.ws, r.branch, rv.HeadSHA)
	var mb string
	if err == nil {
		mb, err = g.MergeBase(ctx, r.ws, r.base, rv.HeadSHA)
	}
	if err != nil {
		r.resumeNote += fmt.Sprintf("The head %s of pull request %s could not be had (%s): this round started from the "+
			"snapshot's commit and replaces the pull request's commits.\n", rv.HeadSHA, rv.PullRequest, oneLine(err.Error()))
		return false
	}
	r.from, r.diffBase, r.revising = rv.HeadSHA, mb, true
	r.resumeNote += fmt.Sprintf("Revised pull request %s: this round's commit is added on its head %s.\n",
		rv.PullRequest, rv.HeadSHA)
	switch {
	case mb == r.base:
	case rv.Conflicts && r.worksInTree():
		r.mergeBase(ctx)
	case rv.Conflicts:
		r.resumeNote += fmt.Sprintf("It conflicts with its base branch, which has moved on (to %s); the %s generator "+
			"does not work in the workspace, so the base was not merged in.\n", r.base, r.genName)
	default:
		r.resumeNote += fmt.Sprintf("Its base branch has moved on since (to %s) and the forge says it still merges: "+
			"the base was not merged in, and its diff stays against %s.\n", r.base, mb)
	}
	return true
}

// mergeBase merges the snapshot's commit (the base branch's head) into the
// pull request's head checked out in r's workspace, which the forge says
// conflicts with it: what merges cleanly is in the worktree, each
// conflicting file holds git's markers for the agent to resolve, and the
// round's commit is a merge of the head and the base. A merge that fails
// otherwise is told, and the round goes on without it.
func (r *run) mergeBase(ctx context.Context) {
	conflicts, err := r.p.o.Git.Merge(ctx, r.ws, r.p.o.Author, r.base)
	if err != nil {
		r.resumeNote += fmt.Sprintf("It conflicts with its base branch, but merging %s failed (%s): the round went on "+
			"without it.\n", r.base, oneLine(err.Error()))
		if err := r.p.o.Git.PrepareWorkspace(ctx, r.mirror, r.ws, r.branch, r.from); err != nil {
			r.resumeNote += fmt.Sprintf("Resetting the workspace failed too: %s\n", oneLine(err.Error()))
		}
		return
	}
	r.merged, r.conflicted, r.diffBase = r.base, conflicts, r.base
	if len(conflicts) == 0 {
		r.resumeNote += fmt.Sprintf("The forge said it conflicts with its base branch: %s was merged in (cleanly); "+
			"the round's commit is that merge.\n", r.base)
		return
	}
	r.resumeNote += fmt.Sprintf("The forge said it conflicts with its base branch: %s was merged in, %d file(s) "+
		"conflicting (%s), left to the agent to resolve; the round's commit is that merge.\n", r.base,
		len(conflicts), strings.Join(conflicts, ", "))
}

// apply refuses, applies and commits the candidate patch on a clean
// checkout, and reports the repository's diff.
func (r *run) apply(ctx context.Context, out patchgen.Output) (diazotroph.Result, error) {
	g := r.p.o.Git
	// A generator that may have edited the workspace (a command) leaves
	// it reset first: the patch is applied to the snapshot's tree, as it
	// would be anywhere else.
	if k, ok := r.gen.(patchgen.WorktreeKeeper); !ok || !k.KeepsWorktree() {
		if err := g.PrepareWorkspace(ctx, r.mirror, r.ws, r.branch, r.from); err != nil {
			return diazotroph.Result{}, fmt.Errorf("reset workspace %s: %w", r.ws, err)
		}
	}
	if _, err := r.checkPatch(out.Patch); err != nil {
		// Never stored with a secret of this worker's in it.
		out.Patch = r.p.o.Secrets.String(out.Patch)
		return r.applyFailed(out, "The patch was refused before anything was written: "+err.Error()), nil
	}
	if err := g.Apply(ctx, r.ws, out.Patch); err != nil {
		var ae *gitops.ApplyError
		if errors.As(err, &ae) {
			return r.applyFailed(out, "git apply refused the patch; nothing was written:\n"+strings.TrimSpace(ae.Output)), nil
		}
		return diazotroph.Result{}, err
	}
	// Apply staged exactly the patch on a clean checkout: the commit is the
	// index, with no "add -A" to pick up anything a generator that claims
	// to keep the worktree left in it.
	var head string
	var err error
	if r.merged != "" {
		head, err = g.CommitStagedMerge(ctx, r.ws, r.p.o.Author, commitMessage(r.req), r.merged)
	} else {
		head, err = g.CommitStaged(ctx, r.ws, r.p.o.Author, commitMessage(r.req))
	}
	if errors.Is(err, gitops.ErrNothingToCommit) {
		return r.applyFailed(out, "The patch applied but changed nothing."), nil
	}
	if err != nil {
		return diazotroph.Result{}, fmt.Errorf("commit on %s: %w", r.branch, err)
	}
	diff, err := g.Diff(ctx, r.ws, r.diffBase, head)
	if err != nil {
		return diazotroph.Result{}, fmt.Errorf("diff %s..%s: %w", r.diffBase, head, err)
	}
	notes := r.notes(diff, out.Notes)
	// A candidate's branch is internal: only the chosen patch, on the work
	// branch, is pushed (DeliverCandidate).
	if r.candidate == 0 {
		notes += r.push(ctx, head)
	}
	return r.result(domain.RunnerOK, diff, notes, domain.BundleMetadata{BranchName: r.branch,
		PRDescriptionDraft: prDescription(r.req, r.diffBase, diff), CommitSHA: head, RunReport: r.report(out)}), nil
}

// push sends the work branch at head to the repository's push remote, if
// it has one, and says how that went, for the notes.
func (r *run) push(ctx context.Context, head string) string {
	set := r.p.o.Settings(r.req.Objective.Repository)
	remote := set.PushRemote
	switch {
	case remote == "":
		return ""
	case set.PushProblem != "":
		return fmt.Sprintf("\nPush of %s to %s skipped: %s\n", r.branch, remote, set.PushProblem)
	}
	push := r.p.o.Git.PushWith
	if r.revising {
		// A commit added to a pull request's head: nothing a reviewer
		// has seen is replaced.
		push = r.p.o.Git.PushAdding
	}
	tries, err := pushTrying(ctx, pushBackoff, func() error { return push(ctx, r.ws, remote, r.branch, set.PushAuth) })
	if err != nil {
		return fmt.Sprintf("\nPush of %s to %s failed (%s): %v\n", r.branch, remote, triesText(tries), err)
	}
	notes := fmt.Sprintf("\nPushed %s to %s.\n", r.branch, remote)
	if tries > 1 {
		notes = fmt.Sprintf("\nPushed %s to %s (%s).\n", r.branch, remote, triesText(tries))
	}
	// Without the marker the branch counts as unpushed: the gate warns and
	// the workspace is kept as for any unpushed branch.
	if err := writePushed(r.p.o.Dir, Pushed{WorkOrderID: r.req.WorkOrder.WorkOrderID, BranchName: r.branch,
		CommitSHA: head, PushedAt: time.Now().UTC()}); err != nil {
		notes += fmt.Sprintf("The push could not be recorded (%v); the branch is treated as not pushed.\n", err)
	}
	return notes
}

// pushBackoff are the waits before a push is tried again after a
// transient failure (gitops.Transient): a connection dropped or refused
// on the way to the forge, even for half a minute, is not a reason to
// open no pull request.
var pushBackoff = []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
	8 * time.Second, 16 * time.Second}

// pushTrying runs push, and again after each of backoff's waits while it
// fails transiently; it returns how many times it ran and the last error.
func pushTrying(ctx context.Context, backoff []time.Duration, push func() error) (int, error) {
	tries := 1
	err := push()
	for _, wait := range backoff {
		if err == nil || !gitops.Transient(err) {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return tries, err
		case <-t.C:
		}
		tries++
		err = push()
	}
	return tries, err
}

func triesText(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

func (r *run) applyFailed(out patchgen.Output, why string) diazotroph.Result {
	notes := fmt.Sprintf("%s\n\nThe attempted patch came from the %s generator: %s\n", why, r.genName,
		strings.TrimSpace(out.Notes))
	return r.result(domain.RunnerApplyFailed, sanitize(out.Patch), notes, domain.BundleMetadata{BranchName: r.branch,
		RunReport: r.report(out)})
}

// report is what the generator's run reported of itself, its free text
// redacted like the notes; from the model endpoint's usage when the run
// wrote no report; nil when there is neither.
func (r *run) report(out patchgen.Output) *domain.RunReport {
	var rep domain.RunReport
	switch {
	case out.Report != nil:
		rep = *out.Report
	case out.Usage != nil:
		rep = out.Usage.Report()
	default:
		return nil
	}
	sec := r.p.o.Secrets
	rep.Model, rep.Summary, rep.SessionID = sec.String(rep.Model), sec.String(rep.Summary), sec.String(rep.SessionID)
	if rep.Transcript != nil {
		t := *rep.Transcript
		t.Text = sec.String(t.Text)
		rep.Transcript = &t
	}
	if runreport.Validate(rep) != nil {
		return nil // redaction cannot make a valid report invalid, but the record must stay valid
	}
	return &rep
}

func (r *run) exhausted(ctx context.Context, stage string, out patchgen.Output) diazotroph.Result {
	notes := fmt.Sprintf("The budget of %s ran out after %s while %s; the generator's processes were killed and no patch was delivered.\n",
		r.req.Budget, time.Since(r.start).Round(time.Millisecond), stage)
	if out.Notes != "" {
		notes += "\n" + out.Notes + "\n"
	}
	partial, kept := r.keepPartialNoted(ctx, "its budget ran out")
	return r.result(domain.RunnerBudgetExhausted, "", notes+kept, domain.BundleMetadata{BranchName: r.branch, Partial: partial})
}

// stalled is the outcome of a generator whose agent stopped progressing
// (docs/patches.md#a-run-that-makes-no-progress). The first line of its
// notes names the stall and its timeout, for the gate's reason.
func (r *run) stalled(ctx context.Context, s *sandbox.StallError, out patchgen.Output) diazotroph.Result {
	notes := fmt.Sprintf("The %s generator's agent wrote no output and changed no file for %s (executor.stall_timeout) "+
		"and was stopped after %s; its processes were killed and no patch was delivered.\n",
		r.genName, s.Timeout, time.Since(r.start).Round(time.Millisecond))
	if out.Notes != "" {
		notes += "\n" + out.Notes + "\n"
	}
	partial, kept := r.keepPartialNoted(ctx, "it stalled")
	return r.result(domain.RunnerStalled, "", notes+kept, domain.BundleMetadata{BranchName: r.branch, Partial: partial})
}

// stopped is the outcome of a run stopped because its work is no longer
// wanted (diazotroph.Stop): what its agent had written is kept, as for a
// budget that ran out. The first line of its notes says why.
func (r *run) stopped(ctx context.Context, s *diazotroph.Stop, out patchgen.Output) diazotroph.Result {
	notes := fmt.Sprintf("The run was stopped after %s: %s; the generator's processes were killed and no patch was delivered.\n",
		time.Since(r.start).Round(time.Millisecond), oneLine(s.Why))
	if out.Notes != "" {
		notes += "\n" + out.Notes + "\n"
	}
	partial, kept := r.keepPartialNoted(ctx, "it was stopped")
	return r.result(domain.RunnerStopped, "", notes+kept, domain.BundleMetadata{BranchName: r.branch, Partial: partial})
}

// asked is the outcome of a run whose agent asked a human a question and
// exited (docs/patches.md#questions): nothing is delivered, what it had
// written is kept as partial work, and the answer starts the next round.
// The question, redacted, is the first line of its notes and the
// bundle's metadata.question; its run report carries it too, so that a
// candidate's question is known from its record.
func (r *run) asked(ctx context.Context, out patchgen.Output) diazotroph.Result {
	q := r.p.o.Secrets.String(out.Question)
	notes := fmt.Sprintf("The agent asked a question after %s and delivered no patch: %s\n\nQuestion:\n%s\n",
		time.Since(r.start).Round(time.Millisecond), oneLine(q), "    "+strings.ReplaceAll(q, "\n", "\n    "))
	if out.Notes != "" {
		notes += "\n" + out.Notes + "\n"
	}
	partial, kept := r.keepPartialNoted(ctx, "its agent asked a question")
	meta := domain.BundleMetadata{BranchName: r.branch, Partial: partial, Question: q, RunReport: r.report(out)}
	if meta.RunReport == nil {
		meta.RunReport = &domain.RunReport{Source: domain.ReportFromExecutor}
	}
	meta.RunReport.Question = q
	return r.result(domain.RunnerQuestion, "", notes+kept, meta)
}

func (r *run) result(status, content, notes string, meta domain.BundleMetadata) diazotroph.Result {
	if r.resumeNote != "" {
		// Last: the first line of the notes is the gate's reason.
		notes = strings.TrimRight(notes, "\n") + "\n\n" + r.resumeNote
	}
	meta.Transcript = r.transcript
	if r.ran && bundleGenerators[r.genName] {
		meta.Generator = r.genName
	}
	if r.ran && meta.RunReport == nil {
		meta.RunReport = r.report(r.out)
	}
	return diazotroph.Result{Title: title(r.req, status), Content: content, Notes: notes, Metadata: meta,
		RunnerStatus: status}
}
