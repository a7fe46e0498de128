package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRemoveStaleRuns_KeepsRunsThatMayStillBeRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Now()
	for name, age := range map[string]time.Duration{"run-old": 72 * time.Hour, "run-today": time.Hour, "other": 72 * time.Hour} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.Mkdir(p, 0o700))
		require.NoError(t, os.Chtimes(p, now.Add(-age), now.Add(-age)))
	}
	removeStaleRuns(dir, now)
	require.NoDirExists(t, filepath.Join(dir, "run-old"))
	require.DirExists(t, filepath.Join(dir, "run-today"))
	require.DirExists(t, filepath.Join(dir, "other"), "only run directories are azolla's to remove")
}

func TestRemoveStale_RemovesTheCgroupsOfWorkersThatAreGone(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	gone := filepath.Join(base, "azolla-999999999-ab12cd34") // above any pid_max
	mine := filepath.Join(base, "azolla-"+strconv.Itoa(os.Getpid())+"-ab12cd34")
	other := filepath.Join(base, "system.slice")
	for _, d := range []string{filepath.Join(gone, "run-1"), mine, other} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	removeStale(base)
	require.NoDirExists(t, gone)
	require.DirExists(t, mine)
	require.DirExists(t, other)
}
