// Package proctest holds what tests that run processes share: a buffer a
// process (or a logger's goroutines) writes while the test reads it, the
// marker files the tests' shell commands leave behind (a line per start, a
// process group per line), and what /proc says of a process (its memory,
// its CPU time).
package proctest

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Buffer collects output that goroutines write while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// CountLines is the number of lines in the file at path; 0 when it does
// not exist yet.
func CountLines(path string) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(raw), "\n")
}

// KillGroups SIGKILLs the process groups whose ids the file at path lists:
// the commands of a killed worker outlive it.
func KillGroups(path string) {
	raw, _ := os.ReadFile(path)
	for _, f := range strings.Fields(string(raw)) {
		if pgid, err := strconv.Atoi(f); err == nil && pgid > 1 {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
}
