package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/azolla/azolla/internal/executor/atomicfile"
)

// Pushed is a push marker: the record, written by Execute once a push of
// the work branch has succeeded, of which commit went out. It lives in
// <dir>/pushed/<work_order_id>, beside the workspaces and not in one, so
// resetting or cleaning a worktree never touches it and nothing in it is
// read from the repository.
//
// A marker is removed before every run of its workorder (the run moves the
// branch), so it never outlives the push it records. Readers still compare
// CommitSHA with the branch they care about: the gate with the bundle's
// commit, the retention pass with the branch's head in the workspace. A
// branch counts as pushed only when they match.
type Pushed struct {
	WorkOrderID string    `json:"work_order_id"`
	BranchName  string    `json:"branch_name"`
	CommitSHA   string    `json:"commit_sha"`
	PushedAt    time.Time `json:"pushed_at"`
}

// PushMarker is the path of a workorder's push marker in git dir dir.
func PushMarker(dir, workOrderID string) string {
	return filepath.Join(dir, pushedDir, workOrderID)
}

// ReadPushed returns the push marker of a workorder; ok=false when there
// is none.
func ReadPushed(dir, workOrderID string) (p Pushed, ok bool, err error) {
	b, err := os.ReadFile(PushMarker(dir, workOrderID))
	if errors.Is(err, fs.ErrNotExist) {
		return Pushed{}, false, nil
	}
	if err != nil {
		return Pushed{}, false, fmt.Errorf("read push marker of %s: %w", workOrderID, err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return Pushed{}, false, fmt.Errorf("read push marker of %s: %w", workOrderID, err)
	}
	if p.WorkOrderID != workOrderID {
		return Pushed{}, false, fmt.Errorf("read push marker of %s: it names workorder %q", workOrderID, p.WorkOrderID)
	}
	return p, true, nil
}

// writePushed records p, atomically: a reader sees the whole marker or
// none.
func writePushed(dir string, p Pushed) error {
	if err := atomicfile.WriteJSON(PushMarker(dir, p.WorkOrderID), p); err != nil {
		return fmt.Errorf("write push marker of %s: %w", p.WorkOrderID, err)
	}
	return nil
}

// DiskUsage is the total size of the regular files under path (a
// workspace, a mirror); symbolic links are counted as themselves, never
// followed.
func DiskUsage(path string) (int64, error) {
	var total int64
	err := filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	return total, err
}

// ClearPushed removes a workorder's push marker, if any: before a run
// moves the branch, and when the retention pass removes the workspace.
func ClearPushed(dir, workOrderID string) error {
	if err := os.Remove(PushMarker(dir, workOrderID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove push marker of %s: %w", workOrderID, err)
	}
	return nil
}
