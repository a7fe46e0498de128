package retention

import (
	"time"

	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/environment"
)

// Reason says why an entry was pruned, kept or left alone.
type Reason string

// Why a workspace was pruned.
const (
	// Done: its objective is DONE.
	Done Reason = "DONE"
	// Superseded: a retry made a newer workorder of its objective.
	Superseded Reason = "SUPERSEDED"
)

// Why a workspace was kept.
const (
	// Active: the newest workorder of an objective that is not DONE.
	Active Reason = "ACTIVE"
	// Retained: prunable, but patch.retention has not passed yet.
	Retained Reason = "RETAINED"
	// UnpushedNotWarned: its branch holds commits that were not pushed and
	// no pause state warned the human: it is kept until one of them changes.
	UnpushedNotWarned Reason = "UNPUSHED_NOT_WARNED"
	// Undecided: an error stopped the decision (see Report.Errors).
	Undecided Reason = "ERROR"
)

// Why an entry is an orphan, left alone.
const (
	// Unknown: no workorder in the store accounts for the name.
	Unknown Reason = "NOT_A_WORKORDER"
	// Symlink: a symbolic link, never followed.
	Symlink Reason = "SYMLINK"
	// NotADirectory: a file or other non-directory.
	NotADirectory Reason = "NOT_A_DIRECTORY"
)

// How a pruned runner workspace's branch was accounted for.
const (
	BranchPushed  = "pushed"
	BranchWarned  = "warned"
	BranchNoWork  = "nothing unpushed"
	BranchDerived = "no branch of its own"
)

// Entry is one entry of the workspaces directory and what the pass made
// of it.
type Entry struct {
	// Name is the entry's name in the workspaces directory.
	Name        string          `json:"name"`
	WorkOrderID string          `json:"work_order_id,omitempty"`
	ObjectiveID string          `json:"objective_id,omitempty"`
	Kind        patch.EntryKind `json:"kind,omitempty"`
	Reason      Reason          `json:"reason"`
	// Branch says, for a pruned entry, why its branch could go.
	Branch string `json:"branch,omitempty"`
	// Detail is a sentence for a human.
	Detail string `json:"detail,omitempty"`
	// PrunableAt is when patch.retention has passed (or will).
	PrunableAt *time.Time `json:"prunable_at,omitempty"`
	// Bytes is the size of a pruned entry's files.
	Bytes int64 `json:"bytes,omitempty"`
}

// Mirror is one mirror the pass gc'd (or, dry, would).
type Mirror struct {
	Dir string `json:"dir"`
	// BytesFreed is how much smaller gc made it.
	BytesFreed int64 `json:"bytes_freed"`
}

// Report is what one pass did; under DryRun, what it would have done.
type Report struct {
	DryRun bool `json:"dry_run"`
	// Pruned were removed (under DryRun: would be).
	Pruned []Entry `json:"pruned"`
	// BytesFreed is the pruned entries' size.
	BytesFreed int64   `json:"bytes_freed"`
	Kept       []Entry `json:"kept"`
	// Orphans are entries no workorder accounts for: left alone.
	Orphans []Entry  `json:"orphans"`
	Mirrors []Mirror `json:"mirrors"`
	// MirrorBytesFreed is what gc saved across the mirrors.
	MirrorBytesFreed int64 `json:"mirror_bytes_freed"`
	// TranscriptsPruned are the workorders whose stored run transcript
	// was deleted (under DryRun: would be).
	TranscriptsPruned []string `json:"transcripts_pruned"`
	// HomesPruned are the objectives whose agent's home was removed
	// (under DryRun: would be).
	HomesPruned []string `json:"homes_pruned"`
	// Environments are what each repository's environments hold on this
	// host after the pass evicted past their caps.
	Environments []environment.Usage `json:"environments"`
	// Errors are the per-entry and per-mirror errors; each left its item
	// as it was.
	Errors []string `json:"errors"`
}

// KeptBy counts the kept entries by reason.
func (r Report) KeptBy() map[Reason]int {
	out := map[Reason]int{}
	for _, e := range r.Kept {
		out[e.Reason]++
	}
	return out
}
