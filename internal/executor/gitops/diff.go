package gitops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// diffConfig pins the configuration that changes diff output and has no
// command-line option to override it.
var diffConfig = []string{
	"-c", "core.quotePath=true",
	"-c", "core.attributesFile=/dev/null",
	"-c", "core.bigFileThreshold=512m",
	"-c", "diff.noprefix=false",
	"-c", "diff.mnemonicPrefix=false",
	"-c", "diff.relative=false",
	"-c", "diff.suppressBlankEmpty=false",
}

// diffOptions are the options of every diff this package produces; each
// overrides the config that would otherwise decide it.
var diffOptions = []string{
	"--no-color", "--no-ext-diff", "--no-textconv", "--binary", "--full-index",
	"--src-prefix=a/", "--dst-prefix=b/", "--no-relative",
	"--unified=3", "--inter-hunk-context=0", "--diff-algorithm=myers", "--indent-heuristic",
	"--find-renames=50%", "-l1000", "-O/dev/null",
	"--submodule=short", "--ignore-submodules=none",
}

// DiffArgs is the git command line (without "git") of Diff:
//
//	-c core.quotePath=true -c core.attributesFile=/dev/null
//	-c core.bigFileThreshold=512m -c diff.noprefix=false
//	-c diff.mnemonicPrefix=false -c diff.relative=false
//	-c diff.suppressBlankEmpty=false
//	diff --no-color --no-ext-diff --no-textconv --binary --full-index
//	--src-prefix=a/ --dst-prefix=b/ --no-relative --unified=3
//	--inter-hunk-context=0 --diff-algorithm=myers --indent-heuristic
//	--find-renames=50% -l1000 -O/dev/null --submodule=short
//	--ignore-submodules=none --end-of-options <from> <to> --
//
// Running git with it in the repository prints exactly what Diff returns:
// the hardening options Diff adds do not change a diff.
func DiffArgs(from, to string) []string {
	return diffArgs(nil, from, to)
}

func diffArgs(extra []string, revs ...string) []string {
	args := append([]string{}, diffConfig...)
	args = append(args, "diff")
	args = append(args, extra...)
	args = append(args, diffOptions...)
	args = append(args, "--end-of-options")
	args = append(args, revs...)
	return append(args, "--")
}

// Diff returns the patch from commit from to commit to in dir, in a form
// fixed by DiffArgs whatever the user's configuration: a/ and b/ prefixes,
// renames found at 50% similarity, binary files as "GIT binary patch" data
// with full object ids. It is "" when the commits have the same tree.
func (g Git) Diff(ctx context.Context, dir, from, to string) (string, error) {
	if from == "" || to == "" {
		return "", errors.New("diff: empty revision")
	}
	out, err := g.run(ctx, call{dir: dir}, DiffArgs(from, to)...)
	if err != nil {
		return "", fmt.Errorf("diff %s %s: %w", from, to, err)
	}
	return string(out), nil
}

// WorktreeDiff returns everything that changed in dir's worktree against
// HEAD, untracked files that are not ignored included, as a patch that
// Apply takes on a clean checkout of HEAD; "" when nothing changed. It has
// the options of Diff. It leaves dir's index as it was: the changes are
// staged in a temporary copy of it.
func (g Git) WorktreeDiff(ctx context.Context, dir string) (string, error) {
	c, done, err := g.stageWorktree(ctx, dir)
	if err != nil {
		return "", fmt.Errorf("worktree diff: %w", err)
	}
	defer done()
	out, err := g.run(ctx, c, diffArgs([]string{"--cached"}, "HEAD")...)
	if err != nil {
		return "", fmt.Errorf("worktree diff: %w", err)
	}
	return string(out), nil
}

// stageWorktree stages everything in dir's worktree in a temporary copy of
// its index, and returns the call that sees that index; done removes it.
func (g Git) stageWorktree(ctx context.Context, dir string) (c call, done func(), err error) {
	indexPath, err := g.runString(ctx, call{dir: dir}, "rev-parse", "--git-path", "index")
	if err != nil {
		return c, nil, err
	}
	if !filepath.IsAbs(indexPath) {
		indexPath = filepath.Join(dir, indexPath)
	}
	tmpDir, err := os.MkdirTemp("", "azolla-index-")
	if err != nil {
		return c, nil, err
	}
	done = func() { _ = os.RemoveAll(tmpDir) }
	tmpIndex := filepath.Join(tmpDir, "index")
	// Starting from the real index keeps its stat data, so add -A hashes
	// only what changed; without one, git starts from an empty index.
	if err := copyFile(tmpIndex, indexPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		done()
		return c, nil, fmt.Errorf("copy index: %w", err)
	}
	c = call{dir: dir, env: []string{"GIT_INDEX_FILE=" + tmpIndex}}
	if _, err := g.run(ctx, c, "add", "-A"); err != nil {
		done()
		return c, nil, fmt.Errorf("stage changes: %w", err)
	}
	return c, done, nil
}

// copyFile copies the file at src to a new file dst.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
