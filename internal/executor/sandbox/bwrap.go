package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// emptied are the host's directories a run sees empty: shared scratch
// space and runtime sockets (a database's Unix socket among them).
var emptied = []string{"/tmp", "/var/tmp", "/run", "/var/run"}

// probeTimeout bounds the start-up check of bubblewrap.
const probeTimeout = 10 * time.Second

// probeBwrap returns the bubblewrap binary once a sandbox like a run's
// (user, PID and network namespaces, no capabilities) started with it ran
// a command; else why not.
func probeBwrap(path string) (string, error) {
	if path == "" {
		path = "bwrap"
	}
	bin, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("%s not found (install the bubblewrap package): %w", path, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	args := append(namespaceArgs(NetworkNone), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--", "/bin/sh", "-c", "exit 0")
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if strings.Contains(msg, "namespace") || strings.Contains(msg, "Operation not permitted") {
			msg += " (user namespaces seem disabled here, as inside some containers: allow them, e.g. " +
				"sysctl kernel.unprivileged_userns_clone=1, or run the container with a seccomp profile that permits them)"
		}
		return "", fmt.Errorf("%s could not start a sandbox: %w: %s", bin, err, msg)
	}
	return bin, nil
}

// namespaceArgs isolate a run: its own user (without capabilities), PID,
// IPC, UTS and cgroup namespaces, and network unless it has the host's.
// --new-session leaves the terminal the worker may run in out of reach;
// --die-with-parent ends the run with the worker.
func namespaceArgs(n Network) []string {
	args := []string{"--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc",
		"--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL", "--hostname", "azolla-run"}
	if n == NetworkNone || n == NetworkAllowlist {
		args = append(args, "--unshare-net")
	}
	return args
}

// bwrapArgs is the bubblewrap command line of a run of p working in dir,
// with private directory runDir, up to and including "--".
//
// Mounts go from the outermost path in: a bind inside a hidden path (a
// workspace in the data dir, a run under /tmp) is seen again, and a hidden
// path inside a bind (a data dir under a command's working directory)
// stays hidden.
func (h *Host) bwrapArgs(p Policy, dir, runDir string, readOnly, holdArgs []string) []string {
	args := slices.Concat([]string{h.bwrap}, holdArgs, namespaceArgs(p.network()))
	args = append(args, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	var mounts []mountArg
	for _, d := range emptied {
		if isDir(d) && !isSymlink(d) {
			mounts = append(mounts, mountArg{d, []string{"--tmpfs", d}})
		}
	}
	// /etc/resolv.conf often points into /run (systemd-resolved): keep
	// name resolution working for a run with the host's network.
	if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && target != "/etc/resolv.conf" &&
		inAny(emptied, target) {
		mounts = append(mounts, mountArg{target, []string{"--ro-bind", target, target}})
	}
	for _, p := range hidden(h.hide) {
		if isDir(p) {
			mounts = append(mounts, mountArg{p, []string{"--tmpfs", p}})
		} else {
			mounts = append(mounts, mountArg{p, []string{"--ro-bind", "/dev/null", p}})
		}
	}
	for _, b := range p.Binds {
		mounts = append(mounts, mountArg{b.Path, bindArgs(b)})
	}
	if p.Home != nil {
		mounts = append(mounts, mountArg{p.Home.Path, bindArgs(*p.Home)})
	}
	mounts = append(mounts, mountArg{runDir, []string{"--bind", runDir, runDir}},
		mountArg{dir, []string{"--bind", dir, dir}})
	for _, p := range readOnly {
		// The path must exist, or bwrap would create it in a read-only
		// place; a missing .git is nothing to protect.
		if real, err := filepath.EvalSymlinks(p); err == nil && within(dir, real) {
			mounts = append(mounts, mountArg{real, []string{"--ro-bind", real, real}})
		}
	}
	slices.SortStableFunc(mounts, func(a, b mountArg) int { return cmp.Compare(depth(a.path), depth(b.path)) })
	for _, m := range mounts {
		args = append(args, m.args...)
	}
	return append(args, "--chdir", dir, "--")
}

// mountArg is one mount of a run's file system.
type mountArg struct {
	path string
	args []string
}

// depth counts a clean absolute path's components.
func depth(p string) int { return strings.Count(strings.TrimSuffix(p, "/"), "/") }

func bindArgs(b Bind) []string {
	flag := "--ro-bind-try"
	if b.Writable {
		flag = "--bind-try"
	}
	return []string{flag, b.Path, b.Path}
}

func inAny(dirs []string, path string) bool {
	for _, d := range dirs {
		if within(d, path) {
			return true
		}
	}
	return false
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isSymlink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}
