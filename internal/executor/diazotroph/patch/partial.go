package patch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
)

// Partial work (docs/patches.md#partial-work): what a run that delivered
// no patch left in its workspace is kept on a ref of its own, checked as a
// patch is, and the next round of the objective starts from it.

// maxPartialFiles bounds the paths a bundle lists of partial work.
const maxPartialFiles = 100

// keepPartial keeps what r's worktree holds beyond its HEAD on the
// workorder's partial ref, after the checks a patch gets; why says why the
// run delivered none. It returns nil when there is nothing to keep.
func (r *run) keepPartial(ctx context.Context, why string) (*domain.PartialWork, error) {
	if r.candidate != 0 {
		return nil, nil // a candidate's worktree is its own; its workorder's round resumes nothing of it
	}
	// The run's own context may be ending with its budget: the work is
	// kept within a short allowance of its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	ref := gitops.PartialRef(r.req.Objective.ObjectiveID, r.req.WorkOrder.WorkOrderID)
	msg := fmt.Sprintf("azolla: partial work of %s (%s)\n\nObjective %s. Kept for its next round; never delivered as it is.\n",
		r.req.WorkOrder.WorkOrderID, why, r.req.Objective.ObjectiveID)
	p, err := r.p.o.Git.KeepPartial(ctx, r.ws, ref, r.p.o.Author, msg, r.checkPatch)
	if err != nil || p == nil {
		return nil, err
	}
	files := p.Files
	if len(files) > maxPartialFiles {
		files = files[:maxPartialFiles]
	}
	return &domain.PartialWork{Ref: ref, CommitSHA: p.CommitSHA, Files: files, FilesChanged: len(p.Files),
		Bytes: len(p.Patch)}, nil
}

// checkPatch refuses what no patch of r's may carry before anything is
// written (docs/patches.md, step 3): a value of one of this worker's
// secrets, which would be committed and pushed, or what gitops.CheckPatch
// refuses. It returns the paths the patch changes.
func (r *run) checkPatch(patch string) ([]string, error) {
	if name, found := r.p.o.Secrets.Find(patch); found {
		return nil, fmt.Errorf("it holds the value of %s, a secret of this worker's, which would have been committed "+
			"and pushed with the branch", name)
	}
	return gitops.CheckPatch(r.ws, patch, r.p.o.Policy)
}

// keepPartialNoted is keepPartial for a run that ends without a patch, and
// the words its notes get.
func (r *run) keepPartialNoted(ctx context.Context, why string) (*domain.PartialWork, string) {
	w, err := r.keepPartial(ctx, why)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("\nThe work left in the workspace was not kept: %s\n", oneLine(err.Error()))
	case w == nil:
		return nil, "\nThe workspace held no change to keep.\n"
	}
	return w, fmt.Sprintf("\nPartial work kept: %d file(s), %d bytes of diff, commit %s on %s (not the work branch); "+
		"the next round starts from it.\n%s", w.FilesChanged, w.Bytes, w.CommitSHA, w.Ref, fileList(w.Files))
}

// fileList is the notes' list of paths.
func fileList(files []string) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	return b.String()
}

// worksInTree says whether r's generator works in the workspace (a
// command agent): one that keeps it reads nothing of partial work.
func (r *run) worksInTree() bool {
	k, ok := r.gen.(patchgen.WorktreeKeeper)
	return r.candidate == 0 && !(ok && k.KeepsWorktree())
}

// salvage keeps, before r's workspace is reset, the work an earlier run of
// the same workorder left in it: a run whose worker stopped (killed, its
// claim taken over) before it reported. nil when there is none to keep.
func (r *run) salvage(ctx context.Context) *domain.PartialWork {
	if !r.worksInTree() {
		return nil
	}
	if _, err := os.Stat(filepath.Join(r.ws, ".git")); err != nil {
		return nil
	}
	pw, err := r.keepPartial(ctx, "an earlier run of this workorder ended without reporting")
	if err != nil {
		r.resumeNote = fmt.Sprintf("Work an earlier run of this workorder left in its workspace was not salvaged: %s\n",
			oneLine(err.Error()))
	}
	return pw
}

// resume puts partial work in r's freshly prepared workspace, as changes
// not yet committed: what salvage kept of an earlier run of the same
// workorder, else the round before's, unless the repository starts every
// round fresh. Work that cannot be had (its workspace pruned, made on
// another commit than this round's) is told in the notes, and the round
// starts from the snapshot's commit.
func (r *run) resume(ctx context.Context, salvaged *domain.PartialWork) {
	from, pw, told := r.ws, salvaged, ""
	switch prev := r.req.Resume; {
	case salvaged != nil:
		told = fmt.Sprintf("Resuming: an earlier run of this same workorder (%s) ended without reporting (its worker stopped).",
			r.req.WorkOrder.WorkOrderID)
	case prev == nil || r.p.o.Fresh || !r.worksInTree():
		return
	default:
		why := prev.Why
		if why == "" {
			why = "it delivered no patch"
		}
		from, pw = r.p.Workspace(prev.WorkOrderID), &prev.Partial
		told = fmt.Sprintf("Resuming: the round before this one (%s) stopped before delivering a patch (%s).",
			prev.WorkOrderID, oneLine(why))
	}
	if r.merged != "" {
		r.resumeNote += fmt.Sprintf("The partial work %s was not resumed: this round merges the base branch into the "+
			"pull request instead.\n", pw.Ref)
		return
	}
	if _, err := r.p.o.Git.ResumePartial(ctx, r.ws, from, pw.Ref, pw.CommitSHA); err != nil {
		r.resumeNote += fmt.Sprintf("The partial work %s could not be resumed (%s): this round started from %s.\n",
			pw.Ref, oneLine(err.Error()), r.from)
		// Whatever a failed resume left is not this round's.
		if err := r.p.o.Git.PrepareWorkspace(ctx, r.mirror, r.ws, r.branch, r.from); err != nil {
			r.resumeNote += fmt.Sprintf("Resetting the workspace failed too: %s\n", oneLine(err.Error()))
		}
		return
	}
	r.resumed = told + fmt.Sprintf(" What it had changed is already in your worktree, not committed: %d file(s), %s. "+
		"Continue from it; the whole change against the base commit is what the gate judges.",
		pw.FilesChanged, strings.Join(pw.Files, ", "))
	r.resumeNote += fmt.Sprintf("Resumed the partial work %s (%d file(s), commit %s).\n", pw.Ref, pw.FilesChanged, pw.CommitSHA)
}
