package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ctime is path's change time in Unix nanoseconds.
func ctime(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &st))
	return st.Ctim.Nano()
}

// changeUntilAfter rewrites path until its change time is after t: file
// systems stamp changes with a coarse clock.
func changeUntilAfter(t *testing.T, path string, after int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
		return ctime(t, path) > after
	}, 10*time.Second, time.Millisecond)
}

func TestChangedAfter_SeesTheTreeButGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{".git/objects", "src/pkg", "sub/.git"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for _, f := range []string{".git/index", "src/pkg/a.go", "sub/.git/HEAD", "README"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	w := newStallWatch(time.Minute, dir)
	var newest int64
	require.NoError(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		newest = max(newest, ctime(t, p))
		return err
	}))
	_, found := w.changedAfter(newest)
	require.False(t, found, "nothing changed after the newest change")

	changeUntilAfter(t, filepath.Join(dir, ".git/index"), newest)
	changeUntilAfter(t, filepath.Join(dir, "sub/.git/HEAD"), newest)
	_, found = w.changedAfter(newest)
	require.False(t, found, "changes under .git are git's, not the run's")

	changeUntilAfter(t, filepath.Join(dir, "src/pkg/a.go"), newest)
	at, found := w.changedAfter(newest)
	require.True(t, found)
	require.Equal(t, ctime(t, filepath.Join(dir, "src/pkg/a.go")), at)
}

func TestChangedAfter_ATreePastTheLimitCountsAsChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 5 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644))
	}
	w := newStallWatch(time.Minute, dir)
	future := time.Now().Add(time.Hour).UnixNano()
	_, found := w.changedAfter(future)
	require.False(t, found)
	w.limit = 3
	_, found = w.changedAfter(future)
	require.True(t, found, "what the watcher cannot see must not stop a run")
}

// pastDeadline is a context whose deadline has passed but which its timer
// has not ended yet: the instant in which a stall and a budget coincide.
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

func TestCheck_TheBudgetWinsATie(t *testing.T) {
	t.Parallel()
	w := newStallWatch(time.Minute, t.TempDir())
	later := time.Now().Add(2 * time.Minute)

	cause, end := w.check(context.Background(), time.Now())
	require.False(t, end, "within its timeout a run is not stalled")
	require.NoError(t, cause)

	cause, end = w.check(context.Background(), later)
	require.True(t, end)
	require.ErrorIs(t, cause, ErrStalled)

	cause, end = w.check(pastDeadline{context.Background()}, later)
	require.True(t, end)
	require.NoError(t, cause, "a run past its deadline is out of budget, not stalled")

	ended, cancel := context.WithCancel(context.Background())
	cancel()
	cause, end = w.check(ended, later)
	require.True(t, end)
	require.NoError(t, cause)
}

func TestProgress_KeepsTheLatest(t *testing.T) {
	t.Parallel()
	w := newStallWatch(time.Minute)
	start := w.last.Load()
	w.progress(start - 1)
	require.Equal(t, start, w.last.Load())
	w.progress(start + 1)
	require.Equal(t, start+1, w.last.Load())
}
