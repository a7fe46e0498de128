package gitops

import (
	"context"
	"fmt"
	"strings"
)

// Merge starts merging commit other into dir's HEAD, as a, without committing
// (a base branch that moved, into a pull request that conflicts with it):
// what merges cleanly is staged and written, and each conflicting file is
// left in the worktree with git's conflict markers. It returns the paths
// that conflict, none when the merge is clean. The merge is never
// committed here: CommitStagedMerge commits the result, a reset forgets
// it.
func (g Git) Merge(ctx context.Context, dir string, a Author, other string) (conflicts []string, err error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	if err := validateCommit(other); err != nil {
		return nil, err
	}
	// rerere and a user's merge drivers or hooks are not for azolla's
	// merges: the configuration is the workspace's own (no template).
	// git wants an identity even for a merge it does not commit.
	_, err = g.run(ctx, call{dir: dir, env: a.env()}, "-c", "rerere.enabled=false", "-c", "merge.conflictStyle=merge",
		"merge", "--no-commit", "--no-ff", "--no-edit", "--no-verify", "--quiet", "--end-of-options", other)
	if err == nil {
		return nil, nil
	}
	if exitCode(err) != 1 {
		return nil, fmt.Errorf("merge %s: %w", other, err)
	}
	out, lerr := g.runString(ctx, call{dir: dir}, "diff", "--name-only", "--diff-filter=U", "-z")
	if lerr != nil {
		return nil, fmt.Errorf("merge %s: list the conflicts: %w", other, lerr)
	}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			conflicts = append(conflicts, p)
		}
	}
	if len(conflicts) == 0 {
		return nil, fmt.Errorf("merge %s: %w", other, err)
	}
	return conflicts, nil
}

// CommitStagedMerge commits dir's index as a merge of HEAD and other, by
// a, and moves the branch HEAD is on to it: the commit's first parent is
// HEAD, its second other. It returns the commit.
func (g Git) CommitStagedMerge(ctx context.Context, dir string, a Author, message, other string) (string, error) {
	if err := validateCommitInput(a, message); err != nil {
		return "", err
	}
	if err := validateCommit(other); err != nil {
		return "", err
	}
	head, err := g.HeadOf(ctx, dir)
	if err != nil {
		return "", err
	}
	tree, err := g.runString(ctx, call{dir: dir}, "write-tree")
	if err != nil {
		return "", fmt.Errorf("commit merge: %w", err)
	}
	cc := call{dir: dir, stdin: strings.NewReader(message), env: a.env()}
	sha, err := g.runString(ctx, cc, "commit-tree", "--no-gpg-sign", tree, "-p", head, "-p", other, "-F", "-")
	if err != nil {
		return "", fmt.Errorf("commit merge: %w", err)
	}
	if _, err := g.run(ctx, call{dir: dir}, "update-ref", "-m", "azolla: merge", "HEAD", sha, head); err != nil {
		return "", fmt.Errorf("commit merge: %w", err)
	}
	return sha, nil
}
