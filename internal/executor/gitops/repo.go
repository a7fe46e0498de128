package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
)

// ResolveBranch returns the full commit id of refs/heads/<branch> in the
// repository at repoDir (a mirror or a worktree). A missing branch is an
// error wrapping ErrBranchNotFound.
func (g Git) ResolveBranch(ctx context.Context, repoDir, branch string) (sha string, err error) {
	if err := ValidateBranch(branch); err != nil {
		return "", err
	}
	sha, err = g.runString(ctx, call{dir: repoDir},
		"rev-parse", "--verify", "--quiet", "--end-of-options", "refs/heads/"+branch+"^{commit}")
	if exitCode(err) == 1 {
		return "", fmt.Errorf("resolve branch %q: %w", branch, ErrBranchNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("resolve branch %q: %w", branch, err)
	}
	if validateCommit(sha) != nil {
		return "", fmt.Errorf("resolve branch %q: unexpected output %q from git rev-parse", branch, sha)
	}
	return sha, nil
}

// DefaultBranch returns the branch HEAD points at in repoDir. For a mirror
// that is the upstream's default branch as of the first clone.
func (g Git) DefaultBranch(ctx context.Context, repoDir string) (string, error) {
	name, err := g.runString(ctx, call{dir: repoDir}, "symbolic-ref", "--quiet", "--short", "HEAD")
	if exitCode(err) == 1 {
		return "", errors.New("default branch: HEAD is detached")
	}
	if err != nil {
		return "", fmt.Errorf("default branch: %w", err)
	}
	return name, nil
}

// ListFiles returns the first max paths tracked at rev, in git's order, and
// how many there are in all. max < 0 returns them all. Paths are exactly as
// stored, never quoted.
func (g Git) ListFiles(ctx context.Context, repoDir, rev string, max int) (files []string, total int, err error) {
	if rev == "" {
		return nil, 0, errors.New("list files: empty revision")
	}
	w := &nulSplitter{max: max}
	_, err = g.run(ctx, call{dir: repoDir, stdout: w},
		"ls-tree", "-r", "-z", "--name-only", "--full-tree", "--end-of-options", rev)
	if err != nil {
		return nil, 0, fmt.Errorf("list files at %q: %w", rev, err)
	}
	if len(w.partial) > 0 {
		w.add(string(w.partial))
	}
	return w.files, w.total, nil
}

// nulSplitter counts NUL-terminated names and keeps the first max.
type nulSplitter struct {
	max     int
	files   []string
	total   int
	partial []byte
}

func (n *nulSplitter) Write(p []byte) (int, error) {
	written := len(p)
	for {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			n.partial = append(n.partial, p...)
			return written, nil
		}
		if len(n.partial) > 0 {
			n.add(string(append(n.partial, p[:i]...)))
			n.partial = n.partial[:0]
		} else {
			n.add(string(p[:i]))
		}
		p = p[i+1:]
	}
}

func (n *nulSplitter) add(name string) {
	if n.max < 0 || len(n.files) < n.max {
		n.files = append(n.files, name)
	}
	n.total++
}

// HeadOf returns the commit id HEAD points at in dir.
func (g Git) HeadOf(ctx context.Context, dir string) (string, error) {
	sha, err := g.runString(ctx, call{dir: dir}, "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	if validateCommit(sha) != nil {
		return "", fmt.Errorf("read HEAD: unexpected output %q from git rev-parse", sha)
	}
	return sha, nil
}

// MergeBase returns the best common ancestor of commits a and b in dir.
func (g Git) MergeBase(ctx context.Context, dir, a, b string) (string, error) {
	if err := validateCommit(a); err != nil {
		return "", err
	}
	if err := validateCommit(b); err != nil {
		return "", err
	}
	sha, err := g.runString(ctx, call{dir: dir}, "merge-base", "--end-of-options", a, b)
	if err != nil {
		return "", fmt.Errorf("merge-base %s %s: %w", a, b, err)
	}
	if validateCommit(sha) != nil {
		return "", fmt.Errorf("merge-base: unexpected output %q", sha)
	}
	return sha, nil
}

// CountCommits returns how many commits are reachable from to but not from
// from ("rev-list --count from..to").
func (g Git) CountCommits(ctx context.Context, dir, from, to string) (int, error) {
	if from == "" || to == "" {
		return 0, errors.New("count commits: empty revision")
	}
	out, err := g.runString(ctx, call{dir: dir}, "rev-list", "--count", "--end-of-options", from+".."+to, "--")
	if err != nil {
		return 0, fmt.Errorf("count commits %s..%s: %w", from, to, err)
	}
	n, err := strconv.Atoi(out)
	if err != nil {
		return 0, fmt.Errorf("count commits %s..%s: unexpected output %q", from, to, out)
	}
	return n, nil
}
