package gitops

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Git runs the git binary. The zero value runs "git" from PATH; a Git is
// safe for concurrent use.
type Git struct {
	// Path of the git binary; "" means "git" from PATH.
	Path string
	// StallTimeout is how long a push over HTTP(S) may go without
	// moving a byte before it is given up as a transient failure
	// (Transient): a connection the network left open and silent would
	// otherwise hold it until its context ends. 0 means a minute.
	StallTimeout time.Duration
}

// stallTimeout is g.StallTimeout, or its default.
func (g Git) stallTimeout() time.Duration {
	if g.StallTimeout > 0 {
		return g.StallTimeout
	}
	return time.Minute
}

// waitDelay bounds how long a run waits for git's pipes to close after git
// exited or was killed; only a process that left git's session could hold
// them that long.
const waitDelay = 5 * time.Second

// hardening are the "-c" options set before every subcommand; see doc.go.
// gc.autoDetach=false keeps an automatic gc inside the run that triggered it
// (and so inside a mirror's lock) instead of in a daemon outliving it.
var hardening = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.quotePath=true",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
	"-c", "protocol.ext.allow=never",
	"-c", "advice.detachedHead=false",
	"-c", "submodule.recurse=false",
	"-c", "fetch.recurseSubmodules=false",
	"-c", "gc.autoDetach=false",
	"-c", "maintenance.autoDetach=false",
}

// droppedEnv are inherited variables that would point git at another
// repository, index or object store, or change how it reads pathspecs.
var droppedEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
	"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_NAMESPACE", "GIT_PREFIX", "GIT_QUARANTINE_PATH",
	"GIT_REPLACE_REF_BASE", "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE",
	"GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_CEILING_DIRECTORIES",
	"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS",
	"GIT_ICASE_PATHSPECS",
}

// fixedEnv is appended to every run; later entries win in os/exec.
var fixedEnv = []string{
	"LC_ALL=C",
	"GIT_TERMINAL_PROMPT=0",
	// An askpass that answers nothing: git then tries empty credentials and
	// fails, where a missing one could fall back to a GUI helper.
	"GIT_ASKPASS=/bin/true",
	"SSH_ASKPASS_REQUIRE=never",
	"GIT_NO_REPLACE_OBJECTS=1",
}

// call describes one git run.
type call struct {
	// dir is the working directory; git may not discover a repository
	// above it.
	dir string
	// stdin, when set, is git's standard input; otherwise it reads nothing.
	stdin io.Reader
	// stdout, when set, receives git's standard output as it is produced
	// and run returns nil output.
	stdout io.Writer
	// env holds extra KEY=VALUE entries that win over everything else.
	env []string
}

func (g Git) binary() string {
	if g.Path == "" {
		return "git"
	}
	return g.Path
}

// environ builds git's environment for c.
func environ(c call) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(droppedEnv, name)
	})
	env = append(env, fixedEnv...)
	if c.dir != "" {
		if abs, err := filepath.Abs(c.dir); err == nil {
			env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(abs))
		}
	}
	return append(env, c.env...)
}

// run runs git with args after the hardening options and returns its
// standard output. A failure is an *Error.
func (g Git) run(ctx context.Context, c call, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, g.binary(), append(slices.Clone(hardening), args...)...)
	cmd.Dir = c.dir
	cmd.Env = environ(c)
	cmd.Stdin = c.stdin
	var out bytes.Buffer
	cmd.Stdout = &out
	if c.stdout != nil {
		cmd.Stdout = c.stdout
	}
	stderr := &tailBuffer{max: stderrTail}
	cmd.Stderr = stderr
	// A session of its own: no controlling terminal to prompt on, and one
	// process group to kill with whatever git started (ssh, remote helpers).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay

	err := cmd.Run()
	if err == nil {
		return out.Bytes(), nil
	}
	ge := &Error{
		Args:     redactArgs(args),
		ExitCode: -1,
		Stderr:   strings.TrimSpace(stderr.String()),
		Err:      err,
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		ge.Err = ctxErr
	} else if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.Exited() {
		ge.ExitCode = ee.ExitCode()
	}
	return nil, ge
}

// runString is run with its output as a string, trailing newline removed.
func (g Git) runString(ctx context.Context, c call, args ...string) (string, error) {
	out, err := g.run(ctx, c, args...)
	return strings.TrimSuffix(string(out), "\n"), err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if len(t.buf) > t.max {
		return string(t.buf[len(t.buf)-t.max:])
	}
	return string(t.buf)
}
