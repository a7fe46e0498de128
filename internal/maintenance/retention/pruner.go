package retention

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/environment"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/maintenance"
	"github.com/azolla/azolla/internal/store"
)

// PrunerStore is what a Pruner reads of the store to decide each workspace
// (objectives, their rounds and pause states) and deletes of it (the
// transcripts of finished work).
type PrunerStore interface {
	store.ObjectiveQuerier
	store.RunQuerier
	store.PauseQuerier
	store.TranscriptQuerier
}

// Pruner is the retention pass over one git dir, as a background service
// (Start, Stop) or one pass at a time (RunOnce).
type Pruner struct {
	Store PrunerStore
	Git   gitops.Git
	// Dir is PATCH_DIAZOTROPH's git dir (patch.git_dir): absolute.
	Dir string
	// Retention is how long a workspace is kept once prunable.
	Retention time.Duration
	// Interval is the time between passes of Start (default an hour).
	Interval time.Duration
	// DryRun reports what a pass would remove and gc, and changes nothing.
	DryRun bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log gets one line per pruned entry, orphan and error (default: none).
	Log *slog.Logger
	// Environments, when set, are this host's repository environments:
	// each pass evicts those least recently used beyond their
	// repository's cap (not under DryRun) and reports what is left.
	Environments *environment.Store

	loopOnce sync.Once
	loop     *maintenance.Loop[Report]
}

// background is the pruner as a background service: every worker prunes
// its own git dir, so it needs no leadership.
func (p *Pruner) background() *maintenance.Loop[Report] {
	p.loopOnce.Do(func() {
		interval := p.Interval
		if interval <= 0 {
			interval = time.Hour
		}
		p.loop = &maintenance.Loop[Report]{Name: "workspace retention", Interval: interval, Pass: p.RunOnce, Log: p.log()}
	})
	return p.loop
}

// Start runs a pass at once and then every Interval, in the background,
// until Stop or ctx is done.
func (p *Pruner) Start(ctx context.Context) { p.background().Start(ctx) }

// Stop ends the service and waits for the pass in flight.
func (p *Pruner) Stop() { p.background().Stop() }

// RunOnce is one pass: every workspace entry decided and, if it may go,
// removed; then every mirror gc'd. Per-item errors are in the report; the
// error is for a pass that could not run at all.
func (p *Pruner) RunOnce(ctx context.Context) (Report, error) {
	rep := Report{DryRun: p.DryRun, Pruned: []Entry{}, Kept: []Entry{}, Orphans: []Entry{}, Mirrors: []Mirror{},
		TranscriptsPruned: []string{}, HomesPruned: []string{}, Errors: []string{}, Environments: []environment.Usage{}}
	if !filepath.IsAbs(p.Dir) {
		return rep, fmt.Errorf("retention pass: git dir %q is not an absolute path", p.Dir)
	}
	if p.Retention <= 0 {
		return rep, fmt.Errorf("retention pass: retention must be positive, got %s", p.Retention)
	}
	if err := p.workspaces(ctx, &rep); err != nil {
		return rep, err
	}
	p.mirrors(ctx, &rep)
	p.transcripts(ctx, &rep)
	p.homes(ctx, &rep)
	if p.Environments != nil && !p.DryRun {
		usage, err := p.Environments.Prune()
		if err != nil {
			rep.Errors = append(rep.Errors, "environments: "+err.Error())
		}
		rep.Environments = append(rep.Environments, usage...)
	}
	if n := len(rep.Pruned) + len(rep.Mirrors) + len(rep.TranscriptsPruned) + len(rep.Errors); n > 0 {
		p.log().Info("workspace retention pass", "dry_run", p.DryRun, "pruned", len(rep.Pruned),
			"transcripts_pruned", len(rep.TranscriptsPruned),
			"bytes_freed", rep.BytesFreed, "kept", len(rep.Kept), "orphans", len(rep.Orphans),
			"mirrors_gc", len(rep.Mirrors), "errors", len(rep.Errors))
	}
	return rep, ctx.Err()
}

// workspaces decides every entry of the workspaces directory.
func (p *Pruner) workspaces(ctx context.Context, rep *Report) error {
	root, err := filepath.EvalSymlinks(patch.WorkspacesDir(p.Dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("retention pass: workspaces directory: %w", err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("retention pass: read workspaces directory: %w", err)
	}
	pass := &pass{p: p, root: root, now: p.now(), objectives: map[string]*objectiveFacts{}}
	for _, de := range entries {
		if ctx.Err() != nil {
			return nil
		}
		e, err := pass.entry(ctx, de)
		if err != nil {
			e.Reason, e.Detail = Undecided, err.Error()
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", de.Name(), err))
			p.log().Warn("workspace retention: entry left as it is", "entry", de.Name(), "error", err)
		}
		switch e.Reason {
		case Done, Superseded:
			p.prune(pass, rep, e)
		case Unknown, Symlink, NotADirectory:
			rep.Orphans = append(rep.Orphans, e)
			p.log().Info("workspace retention: orphan left alone", "entry", e.Name, "reason", e.Reason)
		default:
			rep.Kept = append(rep.Kept, e)
		}
	}
	return nil
}

// prune removes an entry the rule lets go (under DryRun, only lists it).
func (p *Pruner) prune(pass *pass, rep *Report, e Entry) {
	if !p.DryRun {
		if err := pass.remove(&e); err != nil {
			e.Reason, e.Detail = Undecided, err.Error()
			rep.Kept = append(rep.Kept, e)
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", e.Name, err))
			p.log().Warn("workspace retention: removal failed", "entry", e.Name, "error", err)
			return
		}
		// The marker of a workspace that is gone proves nothing. Left
		// behind it is harmless (a rerun clears it, and it counts only
		// when it names the branch's head), so a failure is reported only.
		if e.Kind == patch.RunnerWorkspace {
			if err := patch.ClearPushed(p.Dir, e.WorkOrderID); err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s: workspace removed, but: %v", e.Name, err))
			}
		}
		p.log().Info("workspace pruned", "entry", e.Name, "work_order_id", e.WorkOrderID,
			"objective_id", e.ObjectiveID, "reason", e.Reason, "branch", e.Branch, "bytes", e.Bytes)
	}
	rep.Pruned, rep.BytesFreed = append(rep.Pruned, e), rep.BytesFreed+e.Bytes
}

// mirrors gc's every mirror (under DryRun, lists them).
func (p *Pruner) mirrors(ctx context.Context, rep *Report) {
	m := &gitops.Mirrors{Git: p.Git, Root: patch.MirrorsDir(p.Dir)}
	dirs, err := m.List()
	if err != nil {
		rep.Errors = append(rep.Errors, err.Error())
		p.log().Warn("workspace retention: mirrors not gc'd", "error", err)
		return
	}
	for _, dir := range dirs {
		if ctx.Err() != nil {
			return
		}
		if p.DryRun {
			rep.Mirrors = append(rep.Mirrors, Mirror{Dir: dir})
			continue
		}
		before, _ := patch.DiskUsage(dir)
		if err := m.Gc(ctx, dir); err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			p.log().Warn("workspace retention: mirror gc failed", "mirror", dir, "error", err)
			continue
		}
		after, _ := patch.DiskUsage(dir)
		freed := max(before-after, 0)
		rep.Mirrors, rep.MirrorBytesFreed = append(rep.Mirrors, Mirror{Dir: dir, BytesFreed: freed}), rep.MirrorBytesFreed+freed
	}
}

func (p *Pruner) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Pruner) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.New(slog.DiscardHandler)
}
