package remoteworker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/executor/atomicfile"
)

// recordsDir holds, in a git dir, a record per workorder whose
// PATCH_DIAZOTROPH workspace a remote worker made or used; the retention
// pass of a worker with a store ignores it.
const recordsDir = "remote-worker"

// WorkspaceRecord is what a remote worker knows of one workorder's
// workspace in its git dir. A worker has no store, so this record, written
// when a job starts and again when it ends, is all the remote retention
// pass goes by: when the workspace was last used, and what its branch held
// at the start.
type WorkspaceRecord struct {
	WorkOrderID string `json:"work_order_id"`
	// BranchName is the workorder's work branch.
	BranchName string `json:"branch_name"`
	// BaseCommit is the context snapshot's commit, the branch's start.
	BaseCommit string    `json:"base_commit,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	// FinishedAt is when the run ended; nil when the worker died during
	// it.
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Candidate, when set, says the workspace is that candidate's of a
	// best-of-N run (WorkOrderID is then the workspace's name,
	// <work_order_id>-c<k>); its branch is internal and never pushed, and
	// its patch went to the control plane with the job's result.
	Candidate int `json:"candidate,omitempty"`
}

// lastUsed is when the workspace was last in use.
func (r WorkspaceRecord) lastUsed() time.Time {
	if r.FinishedAt != nil {
		return *r.FinishedAt
	}
	return r.StartedAt
}

// Workspaces keeps the records of the workspaces this worker runs jobs in
// (git dir Dir, patch.git_dir) and knows which are in use, so its Pruner
// never removes the workspace of a running job.
type Workspaces struct {
	// Dir is PATCH_DIAZOTROPH's git dir: absolute.
	Dir string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log gets what could not be recorded (default: nothing).
	Log *slog.Logger

	// mu is held to mark a workspace in use and, by the pruner, while it
	// removes one: a job starting on a workspace being removed waits for
	// the removal, then clones afresh.
	mu    sync.Mutex
	inUse map[string]int
}

// Begin records that a job of workOrderID is about to run in its
// workspace, and marks the workspace in use until the returned end is
// called, once the run is over. Recording is best effort: a workspace
// without a record is never pruned, so a failure to write one is only
// logged.
func (w *Workspaces) Begin(workOrderID, branch, base string) (end func()) {
	return w.begin(WorkspaceRecord{WorkOrderID: workOrderID, BranchName: branch, BaseCommit: base})
}

// BeginCandidate is Begin for candidate k's workspace, named workspace,
// on its own branch.
func (w *Workspaces) BeginCandidate(workspace, branch, base string, k int) (end func()) {
	return w.begin(WorkspaceRecord{WorkOrderID: workspace, BranchName: branch, BaseCommit: base, Candidate: k})
}

func (w *Workspaces) begin(rec WorkspaceRecord) (end func()) {
	workOrderID := rec.WorkOrderID
	w.mu.Lock()
	if w.inUse == nil {
		w.inUse = map[string]int{}
	}
	w.inUse[workOrderID]++
	w.mu.Unlock()

	rec.StartedAt = w.now()
	w.writeLogged(rec)
	return func() {
		at := w.now()
		rec.FinishedAt = &at
		w.writeLogged(rec)
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.inUse[workOrderID]--; w.inUse[workOrderID] <= 0 {
			delete(w.inUse, workOrderID)
		}
	}
}

// busy reports whether a job runs in workOrderID's workspace; w.mu is
// held.
func (w *Workspaces) busy(workOrderID string) bool { return w.inUse[workOrderID] > 0 }

func (w *Workspaces) writeLogged(rec WorkspaceRecord) {
	if err := w.write(rec); err != nil {
		w.log().Warn("workspace record not written: the workspace will not be pruned", "work_order_id",
			rec.WorkOrderID, "error", err)
	}
}

// write stores rec atomically: a reader sees the whole record or the one
// before.
func (w *Workspaces) write(rec WorkspaceRecord) error {
	path, err := w.recordPath(rec.WorkOrderID)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteJSON(path, rec); err != nil {
		return fmt.Errorf("record workspace of %s: %w", rec.WorkOrderID, err)
	}
	return nil
}

// read returns the record stored under name (a file of the records
// directory).
func (w *Workspaces) read(name string) (WorkspaceRecord, error) {
	var rec WorkspaceRecord
	b, err := os.ReadFile(filepath.Join(w.Dir, recordsDir, name))
	if err != nil {
		return rec, fmt.Errorf("read workspace record %s: %w", name, err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("read workspace record %s: %w", name, err)
	}
	if rec.WorkOrderID+recordExt != name {
		return rec, fmt.Errorf("read workspace record %s: it names workorder %q", name, rec.WorkOrderID)
	}
	if err := plainName(rec.WorkOrderID); err != nil {
		return rec, fmt.Errorf("read workspace record %s: %w", name, err)
	}
	return rec, nil
}

// forget removes workOrderID's record, if any.
func (w *Workspaces) forget(workOrderID string) error {
	path, err := w.recordPath(workOrderID)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove workspace record of %s: %w", workOrderID, err)
	}
	return nil
}

// recordExt ends every record's file name.
const recordExt = ".json"

func (w *Workspaces) recordPath(workOrderID string) (string, error) {
	if err := plainName(workOrderID); err != nil {
		return "", err
	}
	return filepath.Join(w.Dir, recordsDir, workOrderID+recordExt), nil
}

// plainName refuses a workorder id that is not a plain file name, or that
// reads as one of the git dir's temporary entries: it names a file, and a
// directory that may be removed.
func plainName(workOrderID string) error {
	if workOrderID == "" || strings.HasPrefix(workOrderID, ".") ||
		strings.ContainsAny(workOrderID, `/\`) || strings.ContainsRune(workOrderID, 0) {
		return fmt.Errorf("workorder id %q is not a plain file name", workOrderID)
	}
	return nil
}

func (w *Workspaces) now() time.Time {
	if w.Now != nil {
		return w.Now().UTC()
	}
	return time.Now().UTC()
}

func (w *Workspaces) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.New(slog.DiscardHandler)
}
