package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// PrepareWorkspace makes dir a clone of mirror with branch checked out at
// exactly sha and nothing else in the worktree: the branch is created or
// reset, local changes are discarded and untracked and ignored files are
// removed, so a rerun starts from the same state as the first run.
//
// A missing (or empty) dir is cloned into a temporary sibling that is
// renamed into place once checked out. An existing dir must be the top of a
// clone whose origin is mirror; anything else is refused with an error
// wrapping ErrNotWorkspace and left untouched. The mirror is fetched first,
// so a sha newer than the workspace's last fetch is found.
func (g Git) PrepareWorkspace(ctx context.Context, mirror, dir, branch, sha string) error {
	if err := ValidateRepository(mirror); err != nil {
		return err
	}
	if err := ValidateBranch(branch); err != nil {
		return err
	}
	if err := validateCommit(sha); err != nil {
		return err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("prepare workspace: %w", err)
	}
	empty, err := isMissingOrEmpty(dir)
	if err != nil {
		return fmt.Errorf("prepare workspace %s: %w", dir, err)
	}
	if !empty {
		if err := g.checkWorkspace(ctx, mirror, dir); err != nil {
			return err
		}
		if _, err := g.run(ctx, call{dir: dir}, "fetch", "--quiet", "--prune", "--no-tags", "origin"); err != nil {
			return fmt.Errorf("prepare workspace %s: fetch from mirror: %w", dir, err)
		}
		return g.checkoutExactly(ctx, dir, branch, sha, false)
	}

	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("prepare workspace %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("prepare workspace %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if _, err := g.run(ctx, call{dir: parent},
		"clone", "--no-checkout", "--quiet", "--template=", "--", mirror, tmp); err != nil {
		return fmt.Errorf("prepare workspace %s: clone mirror: %w", dir, err)
	}
	if err := g.checkoutExactly(ctx, tmp, branch, sha, true); err != nil {
		return err
	}
	// os.Rename does not replace a directory, even an empty one. Remove
	// fails on a non-empty one, and so does the rename if another preparer
	// won the race: then use its clone.
	_ = os.Remove(dir)
	if err := os.Rename(tmp, dir); err != nil {
		if empty, _ := isMissingOrEmpty(dir); empty {
			return fmt.Errorf("prepare workspace %s: move clone into place: %w", dir, err)
		}
		return g.PrepareWorkspace(ctx, mirror, dir, branch, sha)
	}
	return nil
}

// checkWorkspace refuses dir unless it is the top of a worktree whose origin
// is mirror.
func (g Git) checkWorkspace(ctx context.Context, mirror, dir string) error {
	top, err := g.runString(ctx, call{dir: dir}, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("prepare workspace: %s exists and is not a git worktree: %w", dir, ErrNotWorkspace)
	}
	if !samePath(top, dir) {
		return fmt.Errorf("prepare workspace: %s is inside the worktree %s, not its top: %w", dir, top, ErrNotWorkspace)
	}
	origin, err := g.runString(ctx, call{dir: dir}, "config", "--get", "remote.origin.url")
	if err != nil || filepath.Clean(origin) != filepath.Clean(mirror) {
		return fmt.Errorf("prepare workspace: %s is a clone of %q, not of the mirror %s: %w", dir, origin, mirror, ErrNotWorkspace)
	}
	return nil
}

// checkoutExactly points branch at sha, checks it out and makes the worktree
// and index match it. A fresh clone (--no-checkout, so no index and nothing
// in the worktree) needs only the checkout; a reused workspace also loses
// its untracked and ignored files.
func (g Git) checkoutExactly(ctx context.Context, dir, branch, sha string, fresh bool) error {
	c := call{dir: dir}
	// The object must be the commit itself: "checkout -B" would peel an
	// annotated tag's id to its commit and put the branch elsewhere. With
	// that settled here, the checkout cannot leave HEAD anywhere but sha.
	peeled, err := g.runString(ctx, c, "rev-parse", "--verify", "--quiet", "--end-of-options", sha+"^{commit}")
	switch {
	case exitCode(err) == 1:
		return fmt.Errorf("prepare workspace %s: %w: %s is not in the mirror", dir, ErrCommitNotFound, sha)
	case err != nil:
		return fmt.Errorf("prepare workspace %s: look up %s: %w", dir, sha, err)
	case peeled != sha:
		return fmt.Errorf("prepare workspace %s: %w: %s is not a commit but leads to %s", dir, ErrCommitNotFound, sha, peeled)
	}
	// branch and sha are validated, so neither can be read as an option.
	// --force resets the index and worktree to sha as "reset --hard" does
	// (unmerged entries, staged and modified files alike) and drops a
	// merge or cherry-pick in progress.
	steps := [][]string{{"checkout", "--quiet", "--force", "--no-track", "-B", branch, sha, "--"}}
	if !fresh {
		steps = append(steps, []string{"clean", "-ffdx", "--quiet", "--"})
	}
	for _, args := range steps {
		if _, err := g.run(ctx, c, args...); err != nil {
			return fmt.Errorf("prepare workspace %s: %s: %w", dir, args[0], err)
		}
	}
	return nil
}

func isMissingOrEmpty(dir string) (bool, error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%s exists and is not a directory: %w", dir, ErrNotWorkspace)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	return len(entries) == 0, nil
}

// samePath reports whether a and b name the same directory.
func samePath(a, b string) bool {
	ai, errA := os.Stat(a)
	bi, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ai, bi)
}
