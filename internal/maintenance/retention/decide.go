package retention

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/store"
)

// pass is one RunOnce over the workspaces directory root (symlinks in its
// own path resolved), with what it read from the store so far.
type pass struct {
	p          *Pruner
	root       string
	now        time.Time
	objectives map[string]*objectiveFacts
}

// objectiveFacts is what the decisions about one objective's workspaces
// read from the store, read once per pass.
type objectiveFacts struct {
	o *domain.Objective
	// workOrders are oldest first, as the store lists them.
	workOrders []*domain.WorkOrder
	pauses     []*domain.PauseState // nil until needed
}

// entry decides one entry of the workspaces directory. Its Reason is one
// of Done or Superseded when it may be removed now.
func (ps *pass) entry(ctx context.Context, de fs.DirEntry) (Entry, error) {
	e := Entry{Name: de.Name()}
	path, err := ps.within(e.Name)
	if err != nil {
		return e, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return e, fmt.Errorf("look at %s: %w", path, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Reason, e.Detail = Symlink, "a symbolic link: not followed"
		return e, nil
	case !fi.IsDir():
		e.Reason, e.Detail = NotADirectory, "not a directory"
		return e, nil
	}
	w, kind, err := ps.owner(ctx, e.Name)
	if err != nil {
		return e, err
	}
	if w == nil {
		e.Reason, e.Detail = Unknown, "no PATCH_DIAZOTROPH workorder in the store accounts for it"
		return e, nil
	}
	e.WorkOrderID, e.ObjectiveID, e.Kind = w.WorkOrderID, w.ObjectiveID, kind
	f, err := ps.objective(ctx, w.ObjectiveID)
	if err != nil {
		return e, err
	}
	reason, since, detail, err := ps.lifecycle(ctx, f, w)
	if err != nil {
		return e, err
	}
	e.Detail = detail
	if reason == Active {
		e.Reason = Active
		return e, nil
	}
	at := since.Add(ps.p.Retention)
	e.PrunableAt = &at
	if ps.now.Before(at) {
		e.Reason = Retained
		return e, nil
	}
	branch, why, err := ps.branch(ctx, path, f, w, kind)
	if err != nil {
		return e, err
	}
	if branch == "" {
		e.Reason, e.Detail = UnpushedNotWarned, why
		return e, nil
	}
	e.Reason, e.Branch = reason, branch
	e.Bytes, err = patch.DiskUsage(path)
	if err != nil {
		return e, fmt.Errorf("measure %s: %w", path, err)
	}
	return e, nil
}

// owner is the PATCH_DIAZOTROPH workorder whose workspace name is, nil if
// none.
func (ps *pass) owner(ctx context.Context, name string) (*domain.WorkOrder, patch.EntryKind, error) {
	for _, o := range patch.Owners(name) {
		w, err := ps.p.Store.GetWorkOrder(ctx, o.WorkOrderID)
		if errors.Is(err, domain.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("look up workorder %s: %w", o.WorkOrderID, err)
		}
		if w.DiazotrophType != diazotroph.PatchType {
			continue // not a directory PATCH_DIAZOTROPH made
		}
		return w, o.Kind, nil
	}
	return nil, "", nil
}

func (ps *pass) objective(ctx context.Context, id string) (*objectiveFacts, error) {
	if f, ok := ps.objectives[id]; ok {
		return f, nil
	}
	o, err := ps.p.Store.GetObjective(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("look up objective %s: %w", id, err)
	}
	wos, err := ps.p.Store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	if err != nil {
		return nil, fmt.Errorf("list the workorders of objective %s: %w", id, err)
	}
	f := &objectiveFacts{o: o, workOrders: wos}
	ps.objectives[id] = f
	return f, nil
}

// lifecycle says whether w is finished with (Done, Superseded) and since
// when, or Active.
func (ps *pass) lifecycle(ctx context.Context, f *objectiveFacts, w *domain.WorkOrder) (Reason, time.Time, string, error) {
	for i, x := range f.workOrders {
		if x.WorkOrderID == w.WorkOrderID && i+1 < len(f.workOrders) {
			next := f.workOrders[i+1]
			return Superseded, next.CreatedAt, "superseded by workorder " + next.WorkOrderID, nil
		}
	}
	// w is the newest workorder (or newer than the list read earlier in
	// this pass, so newest too).
	if f.o.Status != domain.StatusDone {
		return Active, time.Time{}, fmt.Sprintf("the newest workorder of objective %s, which is %s", f.o.ObjectiveID,
			f.o.Status), nil
	}
	since := f.o.UpdatedAt
	rr, err := ps.p.Store.GetRunRecord(ctx, w.WorkOrderID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
	case err != nil:
		return "", time.Time{}, "", fmt.Errorf("look up the run record of %s: %w", w.WorkOrderID, err)
	case rr.UpdatedAt.After(since):
		since = rr.UpdatedAt
	}
	return Done, since, fmt.Sprintf("objective %s is DONE", f.o.ObjectiveID), nil
}

// pauses are the objective's pause states.
func (ps *pass) pauses(ctx context.Context, f *objectiveFacts) ([]*domain.PauseState, error) {
	if f.pauses == nil {
		all, err := ps.p.Store.ListPauseStates(ctx, f.o.ObjectiveID)
		if err != nil {
			return nil, fmt.Errorf("list the pause states of objective %s: %w", f.o.ObjectiveID, err)
		}
		f.pauses = append([]*domain.PauseState{}, all...)
	}
	return f.pauses, nil
}
