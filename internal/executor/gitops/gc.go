package gitops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Gc runs "git gc --quiet" in the repository at dir: loose objects are
// packed, packs consolidated and unreachable objects older than git's
// gc.pruneExpire (two weeks by default) dropped. It runs in the
// foreground (gc.autoDetach=false is part of every run), so when it
// returns the work is done.
func (g Git) Gc(ctx context.Context, dir string) error {
	if _, err := g.run(ctx, call{dir: dir}, "gc", "--quiet"); err != nil {
		return fmt.Errorf("git gc in %s: %w", dir, err)
	}
	return nil
}

// List returns the mirror directories under Root, sorted: every directory
// named like MirrorName's output. Temporary clones, lock files and
// symbolic links are not mirrors. A missing Root has none.
func (m *Mirrors) List() ([]string, error) {
	root, err := filepath.Abs(m.Root)
	if err != nil {
		return nil, fmt.Errorf("list mirrors: %w", err)
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list mirrors in %s: %w", root, err)
	}
	var dirs []string
	for _, e := range entries {
		// ReadDir's type comes from lstat: a symlink is never a dir here.
		if e.IsDir() && isMirrorName(e.Name()) {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	return dirs, nil
}

// Gc runs Git.Gc on the mirror dir (one of List's) holding the same locks
// as Sync, so a fetch never races a repack of the same mirror.
func (m *Mirrors) Gc(ctx context.Context, dir string) error {
	root, err := filepath.Abs(m.Root)
	if err != nil {
		return fmt.Errorf("gc mirror: %w", err)
	}
	if filepath.Dir(dir) != root || !isMirrorName(filepath.Base(dir)) {
		return fmt.Errorf("gc mirror: %s is not a mirror directory under %s", dir, root)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("gc mirror: %s is not a directory", dir)
	}
	unlock, err := m.lockDir(ctx, dir)
	if err != nil {
		return fmt.Errorf("gc mirror %s: %w", dir, err)
	}
	defer unlock()
	release, err := flock(ctx, dir+".lock")
	if err != nil {
		return fmt.Errorf("gc mirror %s: %w", dir, err)
	}
	defer release()
	return m.Git.Gc(ctx, dir)
}

// isMirrorName reports whether name is what MirrorName returns for some
// repository: 32 lowercase hex digits and ".git".
func isMirrorName(name string) bool {
	hex, ok := strings.CutSuffix(name, ".git")
	if !ok || len(hex) != 32 {
		return false
	}
	for _, c := range hex {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
