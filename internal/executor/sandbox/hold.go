package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// A run's first process waits, before it runs anything, until its limits
// and cgroup are set (see doc.go): a hold is how.
//
//	unconfined  the gate: /bin/sh reads fd 3 until the worker closes the
//	            pipe's other end, then execs the command in its place
//	bubblewrap  bwrap's own: it writes the sandbox's first process's pid
//	            on --info-fd and blocks that process on --block-fd; every
//	            process of the run descends from it
type hold struct {
	// shell runs the command line in place of /bin/sh -c; bwrapArgs go
	// on bubblewrap's command line; files are the process's fds 3 and up.
	shell, bwrapArgs []string
	files            []*os.File
	// target returns the pid whose limits and cgroup the run inherits.
	target func(started int) (int, error)
	// release lets the run go on; end frees the parent's side, and after
	// a failed set-up, once the process is killed, lets nothing run.
	release, end func()
}

// close frees everything of h: proc.Run closes the child's side when it
// starts the process, and a run that never got that far leaves it here.
func (h *hold) close() {
	h.end()
	for _, f := range h.files {
		_ = f.Close() // already closed once the process was started
	}
}

// gateScript holds the started shell until fd 3 reaches its end, then runs
// the command line, its one argument, in the same shell with fd 3 closed
// and no positional parameters, as sh -c would: evaluating it rather than
// starting a second shell saves an exec per run.
const gateScript = `read _ <&3; exec 3<&-; azolla_command=$1; shift; eval "$azolla_command"`

// infoTimeout bounds the wait for bubblewrap's report of its first
// process; it writes it as soon as the namespaces exist.
const infoTimeout = 30 * time.Second

// newHold makes the hold of a run in mode.
func newHold(mode Mode) (*hold, error) {
	if mode != ModeBwrap {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("gate pipe: %w", err)
		}
		return &hold{shell: []string{"/bin/sh", "-c", gateScript, "sh"}, files: []*os.File{r},
			target:  func(started int) (int, error) { return started, nil },
			release: func() { _ = w.Close() }, end: func() { _ = w.Close() }}, nil
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("bwrap info pipe: %w", err)
	}
	blockR, blockW, err := os.Pipe()
	if err != nil {
		_, _ = infoR.Close(), infoW.Close()
		return nil, fmt.Errorf("bwrap block pipe: %w", err)
	}
	return &hold{bwrapArgs: []string{"--info-fd", "3", "--block-fd", "4"}, files: []*os.File{infoW, blockR},
		target:  func(int) (int, error) { return readChildPid(infoR) },
		release: func() { _ = blockW.Close() },
		end:     func() { _, _ = infoR.Close(), blockW.Close() }}, nil
}

// readChildPid reads bubblewrap's --info-fd report.
func readChildPid(r *os.File) (int, error) {
	_ = r.SetReadDeadline(time.Now().Add(infoTimeout))
	var info struct {
		ChildPid int `json:"child-pid"`
	}
	if err := json.NewDecoder(r).Decode(&info); err != nil {
		return 0, fmt.Errorf("read bwrap's report of the sandbox (it may have failed to start): %w", err)
	}
	if info.ChildPid <= 0 {
		return 0, errors.New("bwrap reported no sandbox process")
	}
	return info.ChildPid, nil
}
