package gitops

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
)

// ErrFileNotFound: the commit has no file at that path.
var ErrFileNotFound = errors.New("no such file at the commit")

// ReadFile returns the content of the file at p (slash-separated, relative
// to the repository's root) in commit, read from the object store: what the
// commit holds, whatever the worktree has since become. A file larger than
// max bytes is refused; a path that is not clean and relative is refused
// before git runs.
func (g Git) ReadFile(ctx context.Context, repoDir, commit, p string, max int64) ([]byte, error) {
	if err := validateCommit(commit); err != nil {
		return nil, err
	}
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") ||
		strings.ContainsAny(p, "\x00\n:") {
		return nil, fmt.Errorf("read %q at %s: not a clean relative path", p, commit)
	}
	// "<commit>:<path>" takes the rest of the argument as the path, so the
	// object's type is asked apart.
	obj, err := g.runString(ctx, call{dir: repoDir}, "rev-parse", "--verify", "--quiet", "--end-of-options",
		commit+":"+p)
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return nil, fmt.Errorf("read %s at %s: %w", p, commit, ErrFileNotFound)
		}
		return nil, fmt.Errorf("read %s at %s: %w", p, commit, err)
	}
	if validateCommit(obj) != nil {
		return nil, fmt.Errorf("read %s at %s: unexpected output %q from git rev-parse", p, commit, obj)
	}
	kind, err := g.runString(ctx, call{dir: repoDir}, "cat-file", "-t", obj)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", p, commit, err)
	}
	if kind != "blob" {
		return nil, fmt.Errorf("read %s at %s: a %s, not a file: %w", p, commit, kind, ErrFileNotFound)
	}
	size, err := g.runString(ctx, call{dir: repoDir}, "cat-file", "-s", obj)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", p, commit, err)
	}
	var n int64
	if _, err := fmt.Sscan(size, &n); err != nil || n > max {
		return nil, fmt.Errorf("read %s at %s: %s bytes, more than the %d read", p, commit, size, max)
	}
	out, err := g.run(ctx, call{dir: repoDir}, "cat-file", "blob", obj)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", p, commit, err)
	}
	return out, nil
}

// ListRoot returns the names of the entries at the root of commit's tree:
// files, directories and links alike.
func (g Git) ListRoot(ctx context.Context, repoDir, commit string) ([]string, error) {
	if err := validateCommit(commit); err != nil {
		return nil, err
	}
	w := &nulSplitter{max: -1}
	if _, err := g.run(ctx, call{dir: repoDir, stdout: w}, "ls-tree", "-z", "--name-only", "--end-of-options", commit); err != nil {
		return nil, fmt.Errorf("list the root of %s: %w", commit, err)
	}
	if len(w.partial) > 0 {
		w.add(string(w.partial))
	}
	return w.files, nil
}
