package gitops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Mirrors keeps one bare mirror per repository under Root. The zero value
// with Root set is ready; a Mirrors must not be copied after first use.
type Mirrors struct {
	Git  Git
	Root string

	mu    sync.Mutex
	locks map[string]chan struct{} // one-slot semaphores, so waits end with ctx
}

// MirrorName is the directory name, under Mirrors.Root, of repo's mirror: the
// first 32 hex digits of sha256(repo) plus ".git". repo is hashed as given,
// so two spellings of one URL get two mirrors.
func MirrorName(repo string) string {
	sum := sha256.Sum256([]byte(repo))
	return hex.EncodeToString(sum[:16]) + ".git"
}

// Sync makes the mirror of repo current and returns its directory. The first
// Sync clones it ("clone --mirror") into a temporary directory and renames
// that into place, so a crash never leaves a half mirror behind; later ones
// "fetch --prune" from origin. Syncs of one mirror are serialized within the
// process and, through flock on "<dir>.lock", across processes.
func (m *Mirrors) Sync(ctx context.Context, repo string) (dir string, err error) {
	if err := ValidateRepository(repo); err != nil {
		return "", err
	}
	if m.Root == "" {
		return "", errors.New("sync mirror: Mirrors.Root is empty")
	}
	root, err := filepath.Abs(m.Root)
	if err != nil {
		return "", fmt.Errorf("sync mirror: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("sync mirror: create root: %w", err)
	}
	name := MirrorName(repo)
	dir = filepath.Join(root, name)
	shown := redactArgs([]string{repo})[0] // for messages: no password

	unlock, err := m.lockDir(ctx, dir)
	if err != nil {
		return "", fmt.Errorf("sync mirror of %s: %w", shown, err)
	}
	defer unlock()
	release, err := flock(ctx, dir+".lock")
	if err != nil {
		return "", fmt.Errorf("sync mirror of %s: %w", shown, err)
	}
	defer release()

	if _, err := os.Stat(dir); err == nil {
		if _, err := m.Git.run(ctx, call{dir: dir}, "fetch", "--prune", "--quiet", "origin"); err != nil {
			return "", fmt.Errorf("sync mirror of %s: fetch: %w", shown, err)
		}
		return dir, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("sync mirror of %s: %w", shown, err)
	}

	// Temporary directories of clones that crashed; we hold the lock, so
	// nobody else is cloning into them.
	stale, _ := filepath.Glob(filepath.Join(root, "."+name+".tmp-*"))
	for _, s := range stale {
		_ = os.RemoveAll(s)
	}
	tmp, err := os.MkdirTemp(root, "."+name+".tmp-")
	if err != nil {
		return "", fmt.Errorf("sync mirror of %s: %w", shown, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if _, err := m.Git.run(ctx, call{dir: root}, "clone", "--mirror", "--quiet", "--template=", "--", repo, tmp); err != nil {
		return "", fmt.Errorf("sync mirror of %s: clone: %w", shown, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("sync mirror of %s: move clone into place: %w", shown, err)
	}
	return dir, nil
}

// lockDir takes the in-process lock of one mirror directory.
func (m *Mirrors) lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	m.mu.Lock()
	if m.locks == nil {
		m.locks = make(map[string]chan struct{})
	}
	l, ok := m.locks[dir]
	if !ok {
		l = make(chan struct{}, 1)
		m.locks[dir] = l
	}
	m.mu.Unlock()
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for another sync: %w", ctx.Err())
	}
}

// flock takes an exclusive flock on path, creating the file, and polls so
// that ctx can end the wait.
func flock(ctx context.Context, path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	delay := 10 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for lock %s: %w", path, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, 250*time.Millisecond)
	}
	// Closing the file releases the lock.
	return func() { f.Close() }, nil
}
