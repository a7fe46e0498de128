// Package egresstest gives tests of allowlist runs a relay binary: the
// sandbox's first process, which a test binary cannot be.
package egresstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var built struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// Relay returns the path of a relay binary built once per test binary,
// into a directory of the system's temp dir.
func Relay(tb testing.TB) string {
	tb.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "azolla-relay-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "relay")
		cmd := exec.Command("go", "build", "-o", built.path, "github.com/azolla/azolla/internal/executor/egress/egresstest/relay")
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		tb.Fatalf("build the egress relay: %v\n%s", built.err, built.out)
	}
	return built.path
}
