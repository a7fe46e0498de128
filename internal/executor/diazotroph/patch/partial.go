package patch

import (
	"context"
	"fmt"
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

// keepPartial keeps what r's worktree holds beyond the snapshot's commit
// on the workorder's partial ref, after the checks a patch gets; why says
// why the run delivered none. It returns the work (nil when there is none
// or it was refused) and a line for the notes.
func (r *run) keepPartial(ctx context.Context, why string) (*domain.PartialWork, string) {
	if r.candidate != 0 {
		return nil, "" // a candidate's worktree is its own; its workorder's round resumes nothing of it
	}
	// The run's own context may be ending with its budget: the work is
	// kept within a short allowance of its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	ref := gitops.PartialRef(r.req.Objective.ObjectiveID, r.req.WorkOrder.WorkOrderID)
	msg := fmt.Sprintf("azolla: partial work of %s (%s)\n\nObjective %s. Kept for its next round; never delivered as it is.\n",
		r.req.WorkOrder.WorkOrderID, why, r.req.Objective.ObjectiveID)
	check := func(patch string) ([]string, error) {
		if name, found := r.p.o.Secrets.Find(patch); found {
			return nil, fmt.Errorf("it holds the value of %s, a secret of this worker's", name)
		}
		return gitops.CheckPatch(r.ws, patch, r.p.o.Policy)
	}
	p, err := r.p.o.Git.KeepPartial(ctx, r.ws, ref, r.p.o.Author, msg, check)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("\nThe work left in the workspace was not kept: %s\n", oneLine(err.Error()))
	case p == nil:
		return nil, "\nThe workspace held no change to keep.\n"
	}
	files := p.Files
	if len(files) > maxPartialFiles {
		files = files[:maxPartialFiles]
	}
	w := &domain.PartialWork{Ref: ref, CommitSHA: p.CommitSHA, Files: files, FilesChanged: len(p.Files), Bytes: len(p.Patch)}
	return w, fmt.Sprintf("\nPartial work kept: %d file(s), %d bytes of diff, commit %s on %s (not the work branch); "+
		"the next round starts from it.\n%s", w.FilesChanged, w.Bytes, w.CommitSHA, ref, fileList(files))
}

// fileList is the notes' list of paths.
func fileList(files []string) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	return b.String()
}

// resume puts the round before's partial work in r's freshly prepared
// workspace, as changes not yet committed, when the generator works in the
// worktree (a command agent: one that keeps it reads nothing of it) and
// the repository resumes. Work that cannot be had (its workspace pruned,
// made on another commit than this round's) is told in the notes, and the
// round starts from the snapshot's commit.
func (r *run) resume(ctx context.Context) {
	prev := r.req.Resume
	if prev == nil || r.p.o.Fresh || r.candidate != 0 {
		return
	}
	if k, ok := r.gen.(patchgen.WorktreeKeeper); ok && k.KeepsWorktree() {
		return
	}
	from := r.p.Workspace(prev.WorkOrderID)
	if _, err := r.p.o.Git.ResumePartial(ctx, r.ws, from, prev.Partial.Ref, prev.Partial.CommitSHA); err != nil {
		r.resumeNote = fmt.Sprintf("The partial work of %s could not be resumed (%s): this round started from the snapshot's commit.\n",
			prev.WorkOrderID, oneLine(err.Error()))
		// Whatever a failed resume left is not this round's.
		if err := r.p.o.Git.PrepareWorkspace(ctx, r.mirror, r.ws, r.branch, r.base); err != nil {
			r.resumeNote += fmt.Sprintf("Resetting the workspace failed too: %s\n", oneLine(err.Error()))
		}
		return
	}
	why := prev.Why
	if why == "" {
		why = "it delivered no patch"
	}
	r.resumed = fmt.Sprintf("Resuming: the round before this one (%s) stopped before delivering a patch (%s). "+
		"What it had changed is already in your worktree, not committed: %d file(s), %s. Continue from it; "+
		"the whole change against the base commit is what the gate judges.",
		prev.WorkOrderID, oneLine(why), prev.Partial.FilesChanged, strings.Join(prev.Partial.Files, ", "))
	r.resumeNote = fmt.Sprintf("Resumed the partial work of %s (%d file(s), commit %s).\n",
		prev.WorkOrderID, prev.Partial.FilesChanged, prev.Partial.CommitSHA)
}
