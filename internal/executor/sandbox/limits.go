package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/azolla/azolla/internal/executor/proc"
)

// Limits bound one run's resources; zero leaves a resource unbounded.
type Limits struct {
	// Processes bounds the run's processes and threads: pids.max where a
	// pids cgroup is available (which counts the run's alone, root's
	// included), else RLIMIT_NPROC (which counts all of the worker user's
	// processes, other runs' and its own included, and does not bind
	// root).
	Processes int
	// FileSize bounds, in bytes, any file a run writes (RLIMIT_FSIZE):
	// past it the writer gets SIGXFSZ.
	FileSize int64
	// AddressSpace bounds, in bytes, each process's virtual memory
	// (RLIMIT_AS). Runtimes that reserve much more than they use (the JVM,
	// V8 with WebAssembly) need it generous, or unset.
	AddressSpace int64
	// Memory bounds, in bytes, the run's memory as a whole where a memory
	// cgroup is available (memory.max, memory.limit_in_bytes).
	Memory int64
}

func (l Limits) check() error {
	if l.Processes < 0 || l.FileSize < 0 || l.AddressSpace < 0 || l.Memory < 0 {
		return fmt.Errorf("sandbox: limits must not be negative: %+v", l)
	}
	return nil
}

// apply sets the rlimits of the process pid (soft and hard: the run cannot
// raise them again) before it runs anything. Core files are off: one would
// hold the process's memory, secrets it was given included.
func (l Limits) apply(pid int) error {
	set := func(name string, resource int, v uint64) error {
		if err := unix.Prlimit(pid, resource, &unix.Rlimit{Cur: v, Max: v}, nil); err != nil {
			return fmt.Errorf("set %s of the run to %d: %w", name, v, err)
		}
		return nil
	}
	var errs []error
	if l.Processes > 0 {
		errs = append(errs, set("RLIMIT_NPROC", unix.RLIMIT_NPROC, uint64(l.Processes)))
	}
	if l.FileSize > 0 {
		errs = append(errs, set("RLIMIT_FSIZE", unix.RLIMIT_FSIZE, uint64(l.FileSize)))
	}
	if l.AddressSpace > 0 {
		errs = append(errs, set("RLIMIT_AS", unix.RLIMIT_AS, uint64(l.AddressSpace)))
	}
	errs = append(errs, set("RLIMIT_CORE", unix.RLIMIT_CORE, 0))
	return errors.Join(errs...)
}

// rlimits are the limits set as rlimits on a run: all of them, but for
// the processes when a pids cgroup counts them. RLIMIT_NPROC counts every
// process of the worker's user, so beside the cgroup it would only refuse
// a run's forks for the processes of others.
func (h *Host) rlimits() Limits {
	l := h.limits
	if h.cgroups.has(controllerPids) {
		l.Processes = 0
	}
	return l
}

// hitBy names the limit a command's end shows it hit: killed by SIGXFSZ,
// or exiting with the status a shell (or bubblewrap) reports for a child
// that was, it wrote past FileSize.
func (l Limits) hitBy(res proc.Result) string {
	if l.FileSize > 0 && (res.Signal == syscall.SIGXFSZ || res.ExitCode == 128+int(syscall.SIGXFSZ)) {
		return fmt.Sprintf("file size limit (%d bytes)", l.FileSize)
	}
	return ""
}

// ProcessesByCgroup reports whether runs' processes are counted in a pids
// cgroup of their own, which binds root too.
func (h *Host) ProcessesByCgroup() bool { return h.cgroups.has(controllerPids) }

// logLimits says at start which limits hold, and how.
func (h *Host) logLimits(log *slog.Logger) {
	l := h.limits
	procs := "rlimit"
	if h.cgroups.has(controllerPids) {
		procs = "cgroup pids.max"
	} else if os.Geteuid() == 0 && l.Processes > 0 {
		procs = "rlimit, which does not bind root: run the worker as another user, or where it can create a pids cgroup"
	}
	memory := "not enforced (no memory cgroup available)"
	if h.cgroups.has(controllerMemory) {
		memory = "cgroup"
	}
	log.Info("executor limits", "max_processes", l.Processes, "processes_by", procs, "max_file_size", l.FileSize,
		"max_address_space", l.AddressSpace, "max_memory", l.Memory, "memory_by", memory)
}
