package remoteworker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/maintenance"
)

// Pruner removes the workspaces of finished jobs from a remote worker's
// git dir and gc's its mirrors, every Interval (patch.gc_interval), the
// way `azolla worker` prunes its own (package retention), with what a
// worker without a store can know (docs/remote-workers.md#workspaces):
//
//   - only workspaces this worker recorded (Workspaces.Begin) are
//     considered; anything else in the git dir is left alone;
//   - a workspace in use is never touched; one is prunable once Retention
//     (patch.retention) has passed since its job ended (or, if the worker
//     died during it, started);
//   - its work branch must have nothing to lose: pushed (the push marker
//     names the commit the branch points at in the workspace), or no
//     branch, or no commit beyond the snapshot's. A branch with unpushed
//     work is kept however old: a remote worker cannot see whether the
//     gate's pause state warned the human, so it never assumes so. A
//     best-of-N candidate's workspace (Workspaces.BeginCandidate) has
//     nothing to lose: its branch is internal, and its patch went to the
//     control plane with the job's result.
//
// A removed workspace takes its push marker, its unfinished clones and
// its record with it.
type Pruner struct {
	Workspaces *Workspaces
	Git        gitops.Git
	// Retention is how long a finished workspace is kept.
	Retention time.Duration
	// Interval is the time between passes of Start (default an hour).
	Interval time.Duration
	// Log gets one line per pruned workspace and error (default: none).
	Log *slog.Logger

	loopOnce sync.Once
	loop     *maintenance.Loop[PruneCounts]
}

// PruneCounts says what one pass did.
type PruneCounts struct {
	Pruned     int   // workspaces removed
	BytesFreed int64 // their size
	InUse      int   // kept: a job runs in it
	Retained   int   // kept: Retention has not passed
	Unpushed   int   // kept: its branch holds work that was not pushed
	Forgotten  int   // records whose workspace was already gone, removed
	MirrorsGCd int   // mirrors gc'd
	Errors     int   // items left as they were; logged
}

// background is the pruner as a background service; each worker prunes
// only its own git dir, so it needs no leadership.
func (p *Pruner) background() *maintenance.Loop[PruneCounts] {
	p.loopOnce.Do(func() {
		interval := p.Interval
		if interval <= 0 {
			interval = time.Hour
		}
		p.loop = &maintenance.Loop[PruneCounts]{Name: "remote workspace retention", Interval: interval,
			Pass: p.RunOnce, Log: p.log()}
	})
	return p.loop
}

// Start runs a pass at once and then every Interval, in the background,
// until Stop or ctx is done.
func (p *Pruner) Start(ctx context.Context) { p.background().Start(ctx) }

// Stop ends the service and waits for the pass in flight.
func (p *Pruner) Stop() { p.background().Stop() }

// RunOnce is one pass over the workspace records, then the mirrors. The
// error is for a pass that could not run at all; one workspace's error is
// logged and counted, and the pass goes on.
func (p *Pruner) RunOnce(ctx context.Context) (PruneCounts, error) {
	var c PruneCounts
	w := p.Workspaces
	switch {
	case w == nil || !filepath.IsAbs(w.Dir):
		return c, errors.New("remote retention pass: the git dir is not an absolute path")
	case p.Retention <= 0:
		return c, fmt.Errorf("remote retention pass: retention must be positive, got %s", p.Retention)
	}
	entries, err := os.ReadDir(filepath.Join(w.Dir, recordsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return c, fmt.Errorf("remote retention pass: read the workspace records: %w", err)
	}
	for _, e := range entries {
		if ctx.Err() != nil {
			return c, ctx.Err()
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), recordExt) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := p.consider(ctx, e.Name(), &c); err != nil {
			c.Errors++
			p.log().Warn("remote workspace retention: workspace left as it is", "record", e.Name(), "error", err)
		}
	}
	p.mirrors(ctx, &c)
	if c.Pruned+c.Forgotten+c.Errors > 0 {
		p.log().Info("remote workspace retention pass", "pruned", c.Pruned, "bytes_freed", c.BytesFreed,
			"unpushed_kept", c.Unpushed, "forgotten", c.Forgotten, "mirrors_gc", c.MirrorsGCd, "errors", c.Errors)
	}
	return c, ctx.Err()
}

// consider decides one recorded workspace and removes it if it may go.
// The decision and the removal hold the in-use lock, so no job starts in
// the workspace meanwhile.
func (p *Pruner) consider(ctx context.Context, name string, c *PruneCounts) error {
	w := p.Workspaces
	rec, err := w.read(name)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.busy(rec.WorkOrderID):
		c.InUse++
		return nil
	case w.now().Before(rec.lastUsed().Add(p.Retention)):
		c.Retained++
		return nil
	}
	root, err := filepath.EvalSymlinks(patch.WorkspacesDir(w.Dir))
	if errors.Is(err, fs.ErrNotExist) {
		c.Forgotten++
		return w.forget(rec.WorkOrderID)
	}
	if err != nil {
		return fmt.Errorf("workspaces directory: %w", err)
	}
	ws := filepath.Join(root, rec.WorkOrderID) // a plain name: read checked it
	fi, err := os.Lstat(ws)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Forgotten++
		return w.forget(rec.WorkOrderID)
	case err != nil:
		return fmt.Errorf("look at %s: %w", ws, err)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (a symbolic link is never followed); left alone", ws)
	}
	why, err := p.unpushed(ctx, ws, rec)
	if err != nil {
		return err
	}
	if why != "" {
		c.Unpushed++
		p.log().Info("remote workspace retention: kept, its branch holds unpushed work", "work_order_id",
			rec.WorkOrderID, "detail", why)
		return nil
	}
	size, _ := patch.DiskUsage(ws)
	if err := os.RemoveAll(ws); err != nil {
		return fmt.Errorf("remove %s: %w", ws, err)
	}
	c.Pruned++
	c.BytesFreed += size
	p.log().Info("remote workspace pruned", "work_order_id", rec.WorkOrderID, "branch", rec.BranchName,
		"last_used", rec.lastUsed(), "bytes", size)
	// The workspace is gone: what is left of it proves or holds nothing.
	var errs []error
	errs = append(errs, removeTempClones(root, rec.WorkOrderID), patch.ClearPushed(w.Dir, rec.WorkOrderID))
	errs = append(errs, w.forget(rec.WorkOrderID))
	return errors.Join(errs...)
}

// unpushed applies the branch rule: "" when the workspace at ws has
// nothing to lose, else why it must stay.
func (p *Pruner) unpushed(ctx context.Context, ws string, rec WorkspaceRecord) (string, error) {
	if rec.Candidate > 0 {
		// A candidate's branch is never pushed: what it holds is the
		// patch its job's result carried to the control plane.
		return "", nil
	}
	head, err := p.Git.ResolveBranch(ctx, ws, rec.BranchName)
	if errors.Is(err, gitops.ErrBranchNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read branch %s in %s: %w", rec.BranchName, ws, err)
	}
	m, ok, err := patch.ReadPushed(p.Workspaces.Dir, rec.WorkOrderID)
	if err != nil {
		return "", err
	}
	if ok && m.BranchName == rec.BranchName && m.CommitSHA == head {
		return "", nil
	}
	if rec.BaseCommit != "" {
		n, err := p.Git.CountCommits(ctx, ws, rec.BaseCommit, head)
		if err != nil {
			return "", fmt.Errorf("compare %s with the snapshot's commit in %s: %w", rec.BranchName, ws, err)
		}
		if n == 0 {
			return "", nil
		}
	}
	return fmt.Sprintf("branch %s at %s was not pushed from this worker", rec.BranchName, head), nil
}

// removeTempClones removes the clones of workOrderID's workspace that a
// worker left unfinished in root (see patch's layout).
func removeTempClones(root, workOrderID string) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("read %s: %w", root, err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() { // from lstat: a symbolic link is not a directory here
			continue
		}
		for _, o := range patch.Owners(e.Name()) {
			if o.Kind == patch.TempClone && o.WorkOrderID == workOrderID {
				if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
					errs = append(errs, fmt.Errorf("remove %s: %w", e.Name(), err))
				}
				break
			}
		}
	}
	return errors.Join(errs...)
}

// mirrors gc's every mirror of the git dir.
func (p *Pruner) mirrors(ctx context.Context, c *PruneCounts) {
	m := &gitops.Mirrors{Git: p.Git, Root: patch.MirrorsDir(p.Workspaces.Dir)}
	dirs, err := m.List()
	if err != nil {
		c.Errors++
		p.log().Warn("remote workspace retention: mirrors not gc'd", "error", err)
		return
	}
	for _, dir := range dirs {
		if ctx.Err() != nil {
			return
		}
		if err := m.Gc(ctx, dir); err != nil {
			c.Errors++
			p.log().Warn("remote workspace retention: mirror gc failed", "mirror", dir, "error", err)
			continue
		}
		c.MirrorsGCd++
	}
}

func (p *Pruner) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.New(slog.DiscardHandler)
}
