package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// closeInheritedOnExec marks every descriptor of this process from 3 up
// close-on-exec. Go opens its own so; one inherited from whatever started
// the worker (a supervisor's pipe or socket) would otherwise be open in
// every run.
func closeInheritedOnExec() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	entries, rerr := os.ReadDir("/proc/self/fd")
	if rerr != nil {
		return fmt.Errorf("close_range: %w; /proc/self/fd: %w", err, rerr)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
	return nil
}

// staleRunAge is when a run's directory is surely a crashed worker's: no
// run lasts longer than the longest budget, 24 hours.
const staleRunAge = 48 * time.Hour

// removeStaleRuns removes run directories a crashed worker left in dir.
func removeStaleRuns(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() && strings.HasPrefix(e.Name(), "run-") &&
			now.Sub(info.ModTime()) > staleRunAge {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}
