package gitops

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// PartialRef is the ref a workorder's partial work is kept under: never a
// branch, so nothing pushes or reviews it by mistake.
func PartialRef(objectiveID, workOrderID string) string {
	return "refs/azolla/" + objectiveID + "/partial/" + workOrderID
}

// Partial is work a run left in its worktree without delivering it.
type Partial struct {
	// CommitSHA is the commit that holds it, on top of the worktree's HEAD.
	CommitSHA string
	// Patch is its diff against HEAD, as the commit holds it.
	Patch string
	// Files are the paths it changes.
	Files []string
}

// KeepPartial commits whatever dir's worktree holds beyond HEAD (changes,
// deletions, untracked files that are not ignored) to ref, and leaves the
// worktree, the index, HEAD and every branch as they were. check sees the
// diff first, as a patch would be checked; its error refuses the work and
// nothing is written. It returns nil when the worktree holds nothing.
func (g Git) KeepPartial(ctx context.Context, dir, ref string, a Author, message string,
	check func(patch string) ([]string, error)) (*Partial, error) {
	if err := validateCommitInput(a, message); err != nil {
		return nil, err
	}
	if err := validatePartialRef(ref); err != nil {
		return nil, err
	}
	c, done, err := g.stageWorktree(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("keep partial work: %w", err)
	}
	defer done()
	out, err := g.run(ctx, c, diffArgs([]string{"--cached"}, "HEAD")...)
	if err != nil {
		return nil, fmt.Errorf("keep partial work: %w", err)
	}
	patch := string(out)
	if strings.TrimSpace(patch) == "" {
		return nil, nil
	}
	files, err := check(patch)
	if err != nil {
		return nil, err
	}
	tree, err := g.runString(ctx, c, "write-tree")
	if err != nil {
		return nil, fmt.Errorf("keep partial work: write tree: %w", err)
	}
	head, err := g.HeadOf(ctx, dir)
	if err != nil {
		return nil, err
	}
	cc := call{dir: dir, stdin: strings.NewReader(message), env: a.env()}
	sha, err := g.runString(ctx, cc, "commit-tree", "--no-gpg-sign", tree, "-p", head, "-F", "-")
	if err != nil {
		return nil, fmt.Errorf("keep partial work: commit: %w", err)
	}
	if _, err := g.run(ctx, call{dir: dir}, "update-ref", ref, sha); err != nil {
		return nil, fmt.Errorf("keep partial work: %w", err)
	}
	return &Partial{CommitSHA: sha, Patch: patch, Files: files}, nil
}

// ResumePartial puts the partial work kept under ref in the workspace at
// from (another workorder's, on this host) into dir's worktree, as changes
// not yet committed on dir's HEAD, which must be the commit the work was
// made on. It returns the work's diff.
func (g Git) ResumePartial(ctx context.Context, dir, from, ref, sha string) (string, error) {
	if err := validatePartialRef(ref); err != nil {
		return "", err
	}
	if err := validateCommit(sha); err != nil {
		return "", err
	}
	from, err := filepath.Abs(from)
	if err != nil {
		return "", fmt.Errorf("resume partial work: %w", err)
	}
	if _, err := g.run(ctx, call{dir: dir}, "fetch", "--quiet", "--no-tags", "--", from, "+"+ref+":"+ref); err != nil {
		return "", fmt.Errorf("resume partial work from %s: %w", from, err)
	}
	got, err := g.runString(ctx, call{dir: dir}, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil || got != sha {
		return "", fmt.Errorf("resume partial work: %s is %q in %s, not %s", ref, got, from, sha)
	}
	head, err := g.HeadOf(ctx, dir)
	if err != nil {
		return "", err
	}
	parent, err := g.runString(ctx, call{dir: dir}, "rev-parse", "--verify", "--quiet", sha+"^")
	if err != nil || parent != head {
		return "", fmt.Errorf("resume partial work: %s was made on %s, the workspace is at %s", sha, parent, head)
	}
	patch, err := g.Diff(ctx, dir, head, sha)
	if err != nil {
		return "", err
	}
	if err := g.Apply(ctx, dir, patch); err != nil {
		return "", fmt.Errorf("resume partial work: %w", err)
	}
	// Apply staged it: the work is the worktree's, as the round before
	// left it, not yet committed.
	if _, err := g.run(ctx, call{dir: dir}, "reset", "--quiet"); err != nil {
		return "", fmt.Errorf("resume partial work: %w", err)
	}
	return patch, nil
}

// validatePartialRef refuses anything but a PartialRef.
func validatePartialRef(ref string) error {
	rest, ok := strings.CutPrefix(ref, "refs/azolla/")
	obj, wo, found := strings.Cut(rest, "/partial/")
	if !ok || !found || obj == "" || wo == "" || strings.ContainsAny(obj+wo, "/ \t\n:~^?*[\\") ||
		strings.Contains(ref, "..") || strings.HasPrefix(obj, "-") || strings.HasPrefix(wo, "-") {
		return fmt.Errorf("%q is not a partial work ref", ref)
	}
	return nil
}
