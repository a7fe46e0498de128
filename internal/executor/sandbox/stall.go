package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/azolla/azolla/internal/executor/proc"
)

// A run that makes no progress is stopped: one that for Command.StallTimeout
// writes nothing on stdout or stderr and changes no file where it works.
// Such a run waits for something that will not come (a prompt for a human,
// a lost connection, a deadlock) and would otherwise hold its worker until
// its budget ends, to be reported as out of time, which suggests the wrong
// remedy.
//
// Progress is watched cheaply:
//
//	output   every write to the command's stdout or stderr stamps the
//	         time (an atomic store); a nil stream is read and discarded
//	         rather than left to the null device, so that it counts too
//	files    the working directory (but .git), the run's private HOME
//	         and TMPDIR, and a writable configured HOME: the change time
//	         (ctime, which a process cannot set back) of their entries,
//	         read by a walk
//
// The watcher wakes every StallTimeout/8 (at most every 5s) and only reads
// the stamp; it walks the files only once output has been quiet for a whole
// StallTimeout, stops the walk at the first entry changed within the last
// StallTimeout, and takes that change as the latest progress. So
// a run that prints costs no walk at all, one that only edits files costs
// about one partial walk per StallTimeout, and a stalled one one full walk
// before it is stopped. A walk looks at most maxWatchEntries entries (one
// lstat each); a larger tree counts as changed, so that what the watcher
// cannot see never stops a run.
//
// A stopped run is stopped as one whose budget ran out: its process group
// is killed, and Exec's error wraps a *StallError (errors.Is ErrStalled).
// The budget wins a tie: a run whose ctx has ended, or whose deadline has
// passed, is never called stalled.

// ErrStalled is what the error of a run stopped for making no progress
// is (errors.Is); its *StallError says for how long.
var ErrStalled = errors.New("stalled")

// StallError is the cause of a run stopped for making no progress.
type StallError struct {
	// Timeout is the Command's StallTimeout.
	Timeout time.Duration
}

func (e *StallError) Error() string {
	return fmt.Sprintf("stalled: no output and no file changed for %v", e.Timeout)
}

// Is makes a *StallError ErrStalled.
func (e *StallError) Is(target error) bool { return target == ErrStalled }

// maxWatchEntries bounds one walk of a run's files.
const maxWatchEntries = 100_000

// maxStallTick bounds how long after its StallTimeout a stalled run is
// noticed.
const maxStallTick = 5 * time.Second

// WithStallTimeout returns a copy of e whose StallTimeout is d: the stall
// timeout the callers of its runs pass in Command.StallTimeout.
func (e *Executor) WithStallTimeout(d time.Duration) *Executor {
	c := *e
	c.stall = d
	return &c
}

// StallTimeout is the stall timeout configured for e's runs; 0 is none.
func (e *Executor) StallTimeout() time.Duration { return e.stall }

// stallWatch watches one command for progress.
type stallWatch struct {
	timeout time.Duration
	dirs    []string
	// last is the time of the latest progress seen, in Unix nanoseconds:
	// wall clock time, as file change times are.
	last atomic.Int64
	// limit bounds a walk; tests lower it.
	limit int
}

func newStallWatch(timeout time.Duration, dirs ...string) *stallWatch {
	w := &stallWatch{timeout: timeout, dirs: dirs, limit: maxWatchEntries}
	w.last.Store(time.Now().UnixNano())
	return w
}

// progress records progress at t (Unix nanoseconds) unless later progress
// is known already.
func (w *stallWatch) progress(t int64) {
	for {
		cur := w.last.Load()
		if t <= cur || w.last.CompareAndSwap(cur, t) {
			return
		}
	}
}

// streams wraps a command's stdout and stderr so that writing counts as
// progress. One writer for both stays one (proc.Spec keeps their order on
// one pipe then).
func (w *stallWatch) streams(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	same := (stdout == nil && stderr == nil) || (stdout != nil && stderr != nil && sameWriter(stdout, stderr))
	if stdout == nil {
		stdout = io.Discard
	}
	out := &progressWriter{w: stdout, watch: w}
	if same {
		return out, out
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return out, &progressWriter{w: stderr, watch: w}
}

// sameWriter reports whether a and b are the same writer; comparing two
// interfaces holding one uncomparable type would panic.
func sameWriter(a, b io.Writer) bool {
	return reflect.TypeOf(a) == reflect.TypeOf(b) && reflect.TypeOf(a).Comparable() && a == b
}

// progressWriter stamps the time of every write.
type progressWriter struct {
	w     io.Writer
	watch *stallWatch
}

func (p *progressWriter) Write(b []byte) (int, error) {
	if len(b) > 0 {
		p.watch.last.Store(time.Now().UnixNano())
	}
	return p.w.Write(b)
}

// start watches until stop is called, and calls stall with the cause when
// the command has made no progress for the timeout. ctx is the command's
// own (the budget): once it has ended, or its deadline has passed, the
// watcher says nothing.
func (w *stallWatch) start(ctx context.Context, stall context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(min(max(w.timeout/8, time.Millisecond), maxStallTick))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if cause, end := w.check(ctx, time.Now()); end {
				if cause != nil {
					stall(cause)
				}
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// check is one look at the command at now: end says the watch is over,
// with cause to stop the command for, nil when the budget has ended (or
// its deadline passed) and the stop is the budget's.
func (w *stallWatch) check(ctx context.Context, now time.Time) (cause error, end bool) {
	if !w.stalled(now) {
		return nil, false
	}
	if dl, ok := ctx.Deadline(); ctx.Err() != nil || (ok && !time.Now().Before(dl)) {
		return nil, true
	}
	return &StallError{Timeout: w.timeout}, true
}

// stalled reports whether nothing progressed in the timeout before now,
// walking the files only when output has been quiet that long.
func (w *stallWatch) stalled(now time.Time) bool {
	since := now.UnixNano() - int64(w.timeout)
	if w.last.Load() > since {
		return false
	}
	if changed, ok := w.changedAfter(since); ok {
		w.progress(changed)
		return false
	}
	return true
}

// errFound ends a walk early.
var errFound = errors.New("found")

// changedAfter finds an entry of the watched directories whose change time
// is after t, and returns that time. A tree past the walk's limit counts as
// changed now.
func (w *stallWatch) changedAfter(t int64) (int64, bool) {
	seen := 0
	var found int64
	for _, dir := range w.dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				// Gone, or unreadable: a vanished entry changed its
				// directory, which the walk sees.
				return nil
			}
			if path != dir && d.Name() == ".git" {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if seen++; seen > w.limit {
				found = time.Now().UnixNano()
				return errFound
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if !ok {
				return nil
			}
			if c := st.Ctim.Nano(); c > t {
				found = c
				return errFound
			}
			return nil
		})
		if errors.Is(err, errFound) {
			return found, true
		}
	}
	return 0, false
}

// watched runs spec as Exec does, stopping it when it stalls. It watches
// the working directory dir and the run's private directories.
func (r *Run) watched(ctx context.Context, c Command, dir string, spec proc.Spec) (proc.Result, error) {
	dirs := []string{r.dir}
	if !within(r.dir, dir) {
		dirs = append(dirs, dir)
	}
	if h := r.e.p.Home; h != nil && h.Writable {
		dirs = append(dirs, h.Path)
	}
	if r.keptHome != "" {
		dirs = append(dirs, r.keptHome)
	}
	w := newStallWatch(c.StallTimeout, dirs...)
	spec.Stdout, spec.Stderr = w.streams(spec.Stdout, spec.Stderr)
	sctx, stall := context.WithCancelCause(ctx)
	defer stall(nil)
	stop := w.start(ctx, stall)
	res, err := proc.Run(sctx, spec)
	stop()
	return res, err
}
