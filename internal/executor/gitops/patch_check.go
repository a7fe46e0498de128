package gitops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// PatchPolicy is what CheckPatch lets through beyond plain text changes.
type PatchPolicy struct {
	// AllowBinary lets "GIT binary patch" data and "Binary files differ"
	// sections through.
	AllowBinary bool
	// MaxBytes bounds the patch's size; 0 means no limit.
	MaxBytes int
}

// CheckPatch reads patch as "git apply -p1" would and returns every path it
// reads or writes (old and new names, rename and copy sources; -p1 stripped,
// repeated slashes collapsed), in order of first mention. It writes nothing;
// its only disk access is Lstat of each path and its parents inside
// worktree, skipped when worktree is "".
//
// It refuses with a *RefusedError (errors.Is ErrPatchRefused) a patch that
// is empty, names no file, is over p.MaxBytes, has a malformed header or
// hunk, names a path that is empty, absolute, has a control character, an
// empty, "." or ".." component or a ".git" component (any case), creates or
// touches a symbolic link or submodule, reaches a path through a symbolic
// link that exists in worktree, or has binary content p does not allow.
// Any other error is a failure to look at the worktree.
func CheckPatch(worktree, patch string, p PatchPolicy) (paths []string, err error) {
	if p.MaxBytes > 0 && len(patch) > p.MaxBytes {
		return nil, refuse("", "patch is %d bytes, over the limit of %d", len(patch), p.MaxBytes)
	}
	if strings.TrimSpace(patch) == "" {
		return nil, refuse("", "empty patch")
	}
	files, err := parsePatch(patch, p.AllowBinary)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, refuse("", "no file changes in the patch")
	}
	seen := make(map[string]bool)
	for _, f := range files {
		if f.symlink {
			return nil, refuse(f.names[0], "symbolic links are not allowed")
		}
		if f.gitlink {
			return nil, refuse(f.names[0], "submodules are not allowed")
		}
		for _, name := range f.names {
			if seen[name] {
				continue
			}
			seen[name] = true
			if why := unsafePath(name); why != "" {
				return nil, refuse(name, "%s", why)
			}
			paths = append(paths, name)
		}
	}
	if worktree == "" {
		return paths, nil
	}
	for _, name := range paths {
		if err := noSymlinkOnPath(worktree, name); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// unsafePath says what is wrong with a path a patch names, or "".
func unsafePath(name string) string {
	switch {
	case name == "":
		return "empty path"
	case hasControl(name):
		return "control character in path"
	case strings.HasPrefix(name, "/"):
		return "absolute path"
	}
	for comp := range strings.SplitSeq(name, "/") {
		switch {
		case comp == "":
			return "empty path component"
		case comp == "." || comp == "..":
			return "'.' or '..' path component"
		case strings.EqualFold(comp, ".git"):
			return "path inside .git"
		}
	}
	return ""
}

// noSymlinkOnPath refuses name if it, or any directory leading to it, is a
// symbolic link in worktree: git would write through it.
func noSymlinkOnPath(worktree, name string) error {
	prefix := worktree
	for comp := range strings.SplitSeq(name, "/") {
		prefix = filepath.Join(prefix, comp)
		fi, err := os.Lstat(prefix)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil // nothing deeper exists either
		}
		if err != nil {
			return fmt.Errorf("check patch path %q: %w", name, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(worktree, prefix)
			return refuse(name, "%q is a symbolic link in the worktree", filepath.ToSlash(rel))
		}
	}
	return nil
}
