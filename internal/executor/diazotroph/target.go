package diazotroph

import (
	"context"
	"errors"

	"github.com/azolla/azolla/internal/domain"
)

// PatchType is the diazotroph_type of every objective that names a
// repository (docs/protocol/patch-flow.md#the-workorder).
const PatchType = "PATCH_DIAZOTROPH"

// Target is the repository state a run starts from, frozen into the context
// snapshot at scheduling time (docs/protocol/patch-flow.md#the-snapshot).
type Target struct {
	Repository string
	// BaseBranch is the objective's base branch, or the repository's
	// default branch when the objective names none.
	BaseBranch string
	// CommitSHA is BaseBranch's head when the target was resolved.
	CommitSHA string
	// Files are the first tracked files at CommitSHA, TotalFiles all of
	// them: a bounded listing for the prompt.
	Files      []string
	TotalFiles int
}

// Targets resolves repositories for the scheduler.
type Targets interface {
	// Resolve fetches repository and reads baseBranch's head ("" means
	// the default branch). Errors wrapping ErrBadTarget need a human;
	// others (an unreachable host) are worth retrying.
	Resolve(ctx context.Context, repository, baseBranch string) (Target, error)
}

// ErrBadTarget marks a target no retry can fix: an invalid repository, or a
// base branch the repository does not have.
var ErrBadTarget = errors.New("bad target")

// ErrMisconfigured marks an Execute error no retry can fix, such as an
// objective choosing a generator that is not configured.
var ErrMisconfigured = errors.New("misconfigured")

// Check is what a gate check may read: an output bundle the built-in gate
// checks (docs/protocol/patch-flow.md#checking-the-bundle) have passed.
type Check struct {
	WorkOrder domain.WorkOrder
	Objective domain.Objective
	Snapshot  domain.ContextSnapshot
	Bundle    domain.OutputBundle
}

// Verdict is a gate check's judgement.
type Verdict struct {
	Pass bool
	// Reason says what was checked and, on a FAIL, what failed.
	Reason string
	// Unpushed is set when the work branch was not pushed anywhere, so it
	// lives only in the runner's workspace until that is pruned: the gate
	// warns the human in the pause state.
	Unpushed bool
	// Environment says a FAIL is the environment's, not the patch's: its
	// setup failed, a gate command could not start, or a run hit a
	// sandbox limit. Fix says which setting to change. The objective is
	// then BLOCKED until a human fixes it, and no round is charged.
	Environment bool
	Fix         string
}

// Checker is implemented by diazotrophs whose output has checks of its own
// (a patch's gate commands). The gate runs it with the workorder's claim
// held; an error means the check could not be run and is retried.
type Checker interface {
	Check(ctx context.Context, c Check) (Verdict, error)
}
