package gitops

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Export writes the files of commit (their content and modes, symlinks as
// symlinks, without .git) into dest, an existing empty directory: a
// checkout that no later change to the repository's worktree can touch.
// Paths from the archive are checked before they are written: none may
// leave dest, or go through a symlink the archive made.
func (g Git) Export(ctx context.Context, repoDir, commit, dest string) error {
	if err := validateCommit(commit); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := g.run(ctx, call{dir: repoDir, stdout: pw}, "archive", "--format=tar", "--end-of-options", commit)
		pw.CloseWithError(err)
		done <- err
	}()
	err := untar(pr, dest)
	if err == nil {
		// The archive's end-of-archive blocks follow its last entry.
		_, err = io.Copy(io.Discard, pr)
	}
	_ = pr.CloseWithError(errors.New("export stopped"))
	if gerr := <-done; gerr != nil && err == nil {
		err = gerr
	}
	if err != nil {
		return fmt.Errorf("export %s: %w", commit, err)
	}
	return nil
}

// untar extracts a tar stream of a commit into dest.
func untar(r io.Reader, dest string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			if h.Typeflag == tar.TypeXGlobalHeader || name == "." {
				continue
			}
			return fmt.Errorf("archive entry %q leaves the checkout", h.Name)
		}
		at := filepath.Join(dest, filepath.FromSlash(name))
		if err := noSymlinkBetween(dest, filepath.Dir(at)); err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(at, 0o755); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, at); err != nil {
				return err
			}
		case tar.TypeReg:
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			f, err := os.OpenFile(at, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeXGlobalHeader:
		default:
			return fmt.Errorf("archive entry %q: unexpected type %c", h.Name, h.Typeflag)
		}
	}
}

// noSymlinkBetween refuses a directory dir under root reached through a
// symlink.
func noSymlinkBetween(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." {
		return err
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			if os.IsNotExist(err) {
				return os.MkdirAll(dir, 0o755)
			}
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("archive path %s goes through a symlink", dir)
		}
	}
	return nil
}
