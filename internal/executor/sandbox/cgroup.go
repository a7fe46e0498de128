package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// A run gets a cgroup of its own under one the host makes beside the
// worker's (azolla-<pid>-<random>), for each controller it can use:
//
//	cgroup v1: <pids mount>/<worker's path>/azolla-…/run-N    pids.max
//	           <memory mount>/<worker's path>/azolla-…/run-N  memory.limit_in_bytes
//	cgroup v2: <mount>/<worker's path>/azolla-…/run-N         pids.max, memory.max
//
// On cgroup v2 the worker's own cgroup must delegate the controllers to its
// children, which a cgroup with processes in it cannot (the "no internal
// processes" rule): when the worker is alone in its cgroup it moves itself
// into a leaf beside the runs' (azolla-worker-<pid>) first. Where none of
// this can be written, runs have their rlimits only.

type controller string

const (
	controllerPids   controller = "pids"
	controllerMemory controller = "memory"
)

var controllers = []controller{controllerPids, controllerMemory}

// cgroups are the parents of the runs' cgroups, by controller.
type cgroups struct {
	v2      bool
	parents map[controller]string
	seq     atomic.Int64
}

// findCgroups returns the cgroups runs can be put in, or nil, having
// logged why not.
func findCgroups(log *slog.Logger) *cgroups {
	mounts, err := readMounts("/proc/self/mountinfo")
	if err != nil {
		log.Info("no cgroups for runs: mounts unreadable", "error", err)
		return nil
	}
	selfPaths, err := readSelfCgroups("/proc/self/cgroup")
	if err != nil {
		log.Info("no cgroups for runs: own cgroup unreadable", "error", err)
		return nil
	}
	suffix := strconv.Itoa(os.Getpid()) + "-" + randomSuffix()
	c := &cgroups{parents: map[controller]string{}}
	for _, ctl := range controllers {
		m, ok := mounts.v1[ctl]
		if !ok {
			continue
		}
		base, ok := m.dirOf(selfPaths.v1[ctl])
		if !ok {
			continue
		}
		removeStale(base)
		parent := filepath.Join(base, "azolla-"+suffix)
		if err := os.Mkdir(parent, 0o755); err != nil {
			log.Info("no cgroup for runs", "controller", ctl, "error", err)
			continue
		}
		c.parents[ctl] = parent
	}
	if len(c.parents) == 0 && mounts.v2 != nil {
		if base, ok := mounts.v2.dirOf(selfPaths.v2); ok {
			removeStale(base)
			c.v2 = true
			if err := c.setUpV2(base, suffix); err != nil {
				log.Info("no cgroup v2 for runs", "cgroup", base, "error", err)
				c.parents = map[controller]string{}
			}
		}
	}
	if len(c.parents) == 0 {
		return nil
	}
	return c
}

// setUpV2 makes the parent of the runs' cgroups under base with the pids
// and memory controllers (those of them base has) enabled for its children.
func (c *cgroups) setUpV2(base, suffix string) error {
	avail, err := os.ReadFile(filepath.Join(base, "cgroup.controllers"))
	if err != nil {
		return err
	}
	var want []controller
	for _, ctl := range controllers {
		if slices.Contains(strings.Fields(string(avail)), string(ctl)) {
			want = append(want, ctl)
		}
	}
	if len(want) == 0 {
		return errors.New("the worker's cgroup has neither the pids nor the memory controller")
	}
	if err := enable(base, want); err != nil {
		if !errors.Is(err, syscall.EBUSY) {
			return err
		}
		if lerr := leaveForLeaf(base); lerr != nil {
			return fmt.Errorf("enable controllers for children: %w; and the worker cannot move into a leaf: %w", err, lerr)
		}
		if err := enable(base, want); err != nil {
			return err
		}
	}
	parent := filepath.Join(base, "azolla-"+suffix)
	if err := os.Mkdir(parent, 0o755); err != nil {
		return err
	}
	if err := enable(parent, want); err != nil {
		_ = os.Remove(parent)
		return err
	}
	for _, ctl := range want {
		c.parents[ctl] = parent
	}
	return nil
}

// removeStale removes the runs' cgroups that workers which are gone left
// under base (azolla-<pid>-<random>), killing what is left in them.
func removeStale(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(e.Name(), "azolla-"), "-")
		pid, err := strconv.Atoi(pidText)
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "azolla-") || !ok || err != nil || pid == os.Getpid() ||
			!errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue
		}
		parent := filepath.Join(base, e.Name())
		runs, _ := os.ReadDir(parent)
		for _, r := range runs {
			if r.IsDir() && strings.HasPrefix(r.Name(), "run-") {
				killAll(filepath.Join(parent, r.Name()))
				_ = os.Remove(filepath.Join(parent, r.Name()))
			}
		}
		_ = os.Remove(parent)
	}
}

// enable turns ctls on for dir's children (cgroup v2).
func enable(dir string, ctls []controller) error {
	var b strings.Builder
	for _, ctl := range ctls {
		b.WriteString("+" + string(ctl) + " ")
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.TrimSpace(b.String())), 0)
}

// leaveForLeaf moves this process, when it is the only one in base, into a
// new leaf cgroup under base, so base may delegate controllers.
func leaveForLeaf(base string) error {
	procs, err := os.ReadFile(filepath.Join(base, "cgroup.procs"))
	if err != nil {
		return err
	}
	self := strconv.Itoa(os.Getpid())
	if f := strings.Fields(string(procs)); len(f) != 1 || f[0] != self {
		return errors.New("other processes share the worker's cgroup")
	}
	leaf := filepath.Join(base, "azolla-worker-"+self)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(self), 0)
}

// has reports whether runs get a cgroup of controller ctl.
func (c *cgroups) has(ctl controller) bool {
	if c == nil {
		return false
	}
	_, ok := c.parents[ctl]
	return ok
}

// close removes the parents; runs have removed their own cgroups.
func (c *cgroups) close() error {
	var errs []error
	for _, dir := range c.dirs() {
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// dirs are the distinct parents (one for both controllers on v2).
func (c *cgroups) dirs() []string {
	var out []string
	for _, ctl := range controllers {
		if p, ok := c.parents[ctl]; ok && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// runCgroup is one run's cgroup, in each hierarchy the host has. A nil
// runCgroup does nothing.
type runCgroup struct {
	c      *cgroups
	dirs   map[controller]string
	limits Limits
}

// forRun makes a run's cgroup with l's limits, or returns nil when the host
// has none.
func (c *cgroups) forRun(l Limits) (*runCgroup, error) {
	if c == nil {
		return nil, nil
	}
	name := "run-" + strconv.FormatInt(c.seq.Add(1), 10)
	rc := &runCgroup{c: c, dirs: map[controller]string{}, limits: l}
	for _, ctl := range controllers {
		parent, ok := c.parents[ctl]
		if !ok {
			continue
		}
		dir := filepath.Join(parent, name)
		if !rc.holds(dir) { // on cgroup v2 one directory serves both
			if err := os.Mkdir(dir, 0o755); err != nil {
				rc.remove()
				return nil, fmt.Errorf("create the run's cgroup: %w", err)
			}
		}
		rc.dirs[ctl] = dir
		if err := rc.limit(ctl, dir); err != nil {
			rc.remove()
			return nil, err
		}
	}
	return rc, nil
}

func (rc *runCgroup) holds(dir string) bool {
	for _, d := range rc.dirs {
		if d == dir {
			return true
		}
	}
	return false
}

// limit writes the run's limit of ctl into dir.
func (rc *runCgroup) limit(ctl controller, dir string) error {
	var file string
	var v int64
	switch ctl {
	case controllerPids:
		file, v = "pids.max", int64(rc.limits.Processes)
	case controllerMemory:
		file, v = "memory.limit_in_bytes", rc.limits.Memory
		if rc.c.v2 {
			file = "memory.max"
		}
	}
	if v <= 0 {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(v, 10)), 0); err != nil {
		return fmt.Errorf("set %s of the run's cgroup: %w", file, err)
	}
	return nil
}

// add puts process pid in the run's cgroups.
func (rc *runCgroup) add(pid int) error {
	if rc == nil {
		return nil
	}
	done := map[string]bool{}
	for _, dir := range rc.dirs {
		if done[dir] {
			continue
		}
		done[dir] = true
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("put the run in its cgroup: %w", err)
		}
	}
	return nil
}

// finish kills whatever of the run is left, removes its cgroups and
// names the limit it hit, "" if none.
func (rc *runCgroup) finish() string {
	if rc == nil {
		return ""
	}
	for _, dir := range rc.dirs {
		killAll(dir)
	}
	hit := rc.hit()
	rc.remove()
	return hit
}

// killGrace bounds how long finish waits for killed processes to leave
// their cgroup before it gives up on removing it.
const killGrace = 5 * time.Second

// killAll kills the processes in dir until none is left or killGrace has
// passed; a process forking meanwhile is caught on the next round.
func killAll(dir string) {
	deadline := time.Now().Add(killGrace)
	for {
		pids := readPids(filepath.Join(dir, "cgroup.procs"))
		if len(pids) == 0 || time.Now().After(deadline) {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL) // ESRCH: gone meanwhile
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readPids(file string) []int {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// hit reads the cgroups' event counters.
func (rc *runCgroup) hit() string {
	var hits []string
	if dir, ok := rc.dirs[controllerPids]; ok && rc.limits.Processes > 0 {
		if n := counter(filepath.Join(dir, "pids.events"), "max"); n > 0 {
			hits = append(hits, fmt.Sprintf("process limit (max_processes %d): %d forks refused", rc.limits.Processes, n))
		}
	}
	if dir, ok := rc.dirs[controllerMemory]; ok && rc.limits.Memory > 0 {
		file := "memory.oom_control"
		if rc.c.v2 {
			file = "memory.events"
		}
		if n := counter(filepath.Join(dir, file), "oom_kill"); n > 0 {
			hits = append(hits, fmt.Sprintf("memory limit (%d bytes): %d processes killed", rc.limits.Memory, n))
		}
	}
	return strings.Join(hits, "; ")
}

// counter reads "key N" from a cgroup's flat keyed file; 0 if absent.
func counter(file, key string) int64 {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove deletes the run's cgroups; one still holding a process stays.
func (rc *runCgroup) remove() {
	for _, dir := range rc.dirs {
		_ = os.Remove(dir)
	}
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
