package retention

import (
	"context"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/lifecycle/pause"
)

// branch applies the rule that matters (see doc.go) to the workspace at
// path: how its branch is accounted for, or "" and why it must stay.
func (ps *pass) branch(ctx context.Context, path string, f *objectiveFacts, w *domain.WorkOrder,
	kind patch.EntryKind) (string, string, error) {
	if kind != patch.RunnerWorkspace {
		return BranchDerived, "", nil
	}
	g := ps.p.Git
	head, err := g.ResolveBranch(ctx, path, w.BranchName)
	if errors.Is(err, gitops.ErrBranchNotFound) {
		return BranchNoWork, "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("read branch %s in %s: %w", w.BranchName, path, err)
	}

	m, ok, err := patch.ReadPushed(ps.p.Dir, w.WorkOrderID)
	if err != nil {
		return "", "", err
	}
	if ok && m.BranchName == w.BranchName && m.CommitSHA == head {
		return BranchPushed, "", nil
	}

	pauses, err := ps.pauses(ctx, f)
	if err != nil {
		return "", "", err
	}
	for _, p := range pauses {
		if p.WorkOrderID == w.WorkOrderID && pause.Warned(p) {
			return BranchWarned, "", nil
		}
	}

	snap, err := ps.p.Store.GetContextSnapshot(ctx, w.ContextSnapshotID)
	if err != nil {
		return "", "", fmt.Errorf("look up context snapshot %s: %w", w.ContextSnapshotID, err)
	}
	if base := snap.Metadata.CommitSHA; base != "" {
		n, err := g.CountCommits(ctx, path, base, head)
		if err != nil {
			return "", "", fmt.Errorf("compare %s with the snapshot's commit in %s: %w", w.BranchName, path, err)
		}
		if n == 0 {
			return BranchNoWork, "", nil
		}
	}
	return "", fmt.Sprintf("branch %s at %s was not pushed and no pause state of %s warned about it",
		w.BranchName, head, w.WorkOrderID), nil
}
