// Package sandboxtest lets tests that need a working bubblewrap say so.
package sandboxtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/executor/sandbox"
)

// RequireBwrap returns the bubblewrap binary once it starts a sandbox
// (user and PID namespaces) on this host. When it does not, the test fails
// under CI=true, where .ci/run installs it, and is skipped elsewhere, saying
// how to install it.
func RequireBwrap(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("bwrap")
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var out []byte
		out, err = exec.CommandContext(ctx, path, "--unshare-user", "--unshare-pid", "--ro-bind", "/", "/",
			"--proc", "/proc", "--dev", "/dev", "/bin/true").CombinedOutput()
		if err != nil {
			tb.Logf("bwrap: %s", out)
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("bubblewrap is required under CI=true and does not work: %v", err)
		}
		tb.Skipf("bubblewrap does not work here (%v): apt-get install bubblewrap", err)
	}
	return path
}

// Host returns a host that confines nothing (sandbox.ModeNone, no limits),
// with its runs in a temp dir of the test's and the test process's
// environment for base variables and pass_env. It is closed with the test.
func Host(tb testing.TB) *sandbox.Host {
	tb.Helper()
	h, err := sandbox.New(sandbox.Options{Mode: sandbox.ModeNone, RunsDir: filepath.Join(tb.TempDir(), "runs")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = h.Close() })
	return h
}

// Unconfined returns an executor of p on Host: for tests of what runs a
// command rather than of how it is confined. p.Name defaults to "test".
func Unconfined(tb testing.TB, p sandbox.Policy) *sandbox.Executor {
	tb.Helper()
	if p.Name == "" {
		p.Name = "test"
	}
	e, err := Host(tb).Executor(p, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}
