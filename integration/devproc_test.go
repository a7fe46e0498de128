package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/dial"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/starter"
)

// devProc is an `azolla dev` process of the azolla binary, on its own data
// dir and ports, with a client and the store it writes.
type devProc struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed once cmd has exited
	dir     string
	out     *lockedBuffer
	client  client.Client
	store   store.Store
	starter *starter.Starter
	// controlPlane is host:port of its embedded control plane, ops of its
	// /metrics and /readyz.
	controlPlane, ops string
	stopOnce          sync.Once
	// kept: Temporal's state is kept in dir (no --ephemeral), and a
	// restart comes back on the same dir and ports; env is what the
	// process was started with.
	kept     bool
	grpc, ui int
	env      []string
}

// stop ends the process (SIGTERM) and waits for it; the test's cleanup
// calls it too.
func (d *devProc) stop() {
	d.stopOnce.Do(func() {
		if d.cmd == nil || d.cmd.Process == nil {
			return
		}
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		<-d.exited
	})
}

// devStartTries bounds how often startDev starts the process again when a
// port freePort picked was taken by someone else before the process bound
// it: another test process on a loaded machine can take it in between.
const devStartTries = 3

// startDev starts `azolla dev --ephemeral` with env added to this process's
// environment, and waits until its server answers. It stops with the test.
func startDev(tb testing.TB, env ...string) *devProc {
	tb.Helper()
	return startDevWith(tb, &devProc{env: env})
}

// startDevKept is startDev with Temporal's state kept in the data dir, so
// that restart brings the same lifecycles back.
func startDevKept(tb testing.TB, env ...string) *devProc {
	tb.Helper()
	return startDevWith(tb, &devProc{env: env, kept: true})
}

// restart stops d (SIGTERM) and starts it again on its data dir and
// ports: every process of `azolla dev` (its Temporal server, workers and
// control plane) ends and comes back.
func (d *devProc) restart(tb testing.TB) {
	tb.Helper()
	if !d.kept {
		tb.Fatal("restart needs startDevKept: an ephemeral server forgets its lifecycles")
	}
	d.stop()
	d.stopOnce, d.client = sync.Once{}, nil
	if err := d.launch(tb, d.env); err != nil {
		tb.Fatalf("azolla dev did not come back: %v\n%s", err, d.out.String())
	}
	tb.Cleanup(d.client.Close)
	d.starter.Client = d.client
}

// cliEnv is the environment of an azolla command line talking to d.
func (d *devProc) cliEnv() []string {
	return append(os.Environ(), "AZOLLA_DATA_DIR="+d.dir, fmt.Sprintf("AZOLLA_TEMPORAL_ADDRESS=127.0.0.1:%d", d.grpc),
		"AZOLLA_LOG_LEVEL=error")
}

func startDevWith(tb testing.TB, d *devProc) *devProc {
	tb.Helper()
	ctx := context.Background()
	env := d.env
	tb.Cleanup(d.stop)
	for try := 1; d.client == nil; try++ {
		err := d.launch(tb, env)
		if err != nil && (try == devStartTries || !strings.Contains(d.out.String(), "address already in use")) {
			tb.Fatalf("azolla dev did not come up: %v\n%s", err, d.out.String())
		}
		if err != nil {
			d.dir = "" // a next try on a new dir and new ports
		}
	}
	tb.Cleanup(d.client.Close)
	st, err := dial.Open(ctx, dial.Config{Driver: config.DriverSQLite, SQLitePath: filepath.Join(d.dir, "azolla.db")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	d.store = st
	d.starter = &starter.Starter{Client: d.client, Store: st, TaskQueue: config.DefaultTaskQueue}
	return d
}

// launch starts the process on a fresh data dir and ports and waits until
// its server answers (d.client is set), the process exits, or two minutes
// pass; then it kills the process, so a next try never runs beside it.
func (d *devProc) launch(tb testing.TB, env []string) error {
	if !d.kept || d.dir == "" {
		d.dir = tb.TempDir()
		ports := freePorts(4)
		d.grpc, d.ui = ports[0], ports[1]
		d.controlPlane = fmt.Sprintf("127.0.0.1:%d", ports[2])
		d.ops = fmt.Sprintf("127.0.0.1:%d", ports[3])
	}
	d.out = &lockedBuffer{}
	grpc, ui := d.grpc, d.ui
	args := []string{"dev", "--grpc-port", strconv.Itoa(grpc), "--ui-port", strconv.Itoa(ui)}
	if !d.kept {
		args = append(args, "--ephemeral")
	}
	d.cmd = exec.Command(azollaBin, args...)
	d.cmd.Env = append(append(os.Environ(), "AZOLLA_DATA_DIR="+d.dir, "AZOLLA_LOG_LEVEL=error",
		"AZOLLA_CONTROL_PLANE_ADDRESS="+d.controlPlane, "AZOLLA_OPS_ADDRESS="+d.ops), env...)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		return err
	}
	d.exited = make(chan struct{})
	go func() {
		_ = d.cmd.Wait()
		close(d.exited)
	}()
	addr := fmt.Sprintf("127.0.0.1:%d", grpc)
	deadline := time.Now().Add(2 * time.Minute)
	var c client.Client
	for {
		var err error
		if c == nil {
			c, err = client.Dial(client.Options{HostPort: addr, Logger: quietSDKLogger{}})
		}
		if err == nil {
			// Up once its control plane listens too, which it binds after
			// the server answers: a port taken meanwhile (ports are picked
			// free, then bound later, beside other tests) ends the process
			// there, and the caller tries again on other ports.
			conn, cerr := net.DialTimeout("tcp", d.controlPlane, time.Second)
			if cerr == nil {
				_ = conn.Close()
				d.client = c
				return nil
			}
			err = cerr
		}
		select {
		case <-d.exited:
			if c != nil {
				c.Close()
			}
			return fmt.Errorf("it exited before answering: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = d.cmd.Process.Kill()
			<-d.exited
			if c != nil {
				c.Close()
			}
			return err
		}
	}
}

// pid is the dev process's id.
func (d *devProc) pid() int { return d.cmd.Process.Pid }

// storeBytes is the size of the store's database after a checkpoint folds
// the write-ahead log into it.
func (d *devProc) storeBytes(tb testing.TB) int64 {
	tb.Helper()
	if _, err := d.store.(*sqlstore.Store).DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		tb.Fatalf("checkpoint the store: %v", err)
	}
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(filepath.Join(d.dir, "azolla.db"+suffix)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// rss is the dev process's resident set now, in bytes.
func rss(pid int) int64 { return proctest.StatusBytes(pid, "VmRSS:") }

// lockedBuffer is the process's output, read by tests while it is written.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// profileInto takes a CPU profile of the process over window, and then its
// heap, into dir as cpu-<label>.pprof and heap-<label>.pprof; the process
// must run with AZOLLA_OPS_PPROF=true. An empty dir takes nothing. wait
// waits for both.
func (d *devProc) profileInto(tb testing.TB, dir, label string, window time.Duration) (wait func()) {
	if dir == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		base := "http://" + d.ops + "/debug/pprof/"
		for _, p := range []struct{ path, file string }{
			{fmt.Sprintf("profile?seconds=%d", max(1, int(window.Seconds()))), "cpu-" + label + ".pprof"},
			{"heap", "heap-" + label + ".pprof"},
		} {
			if err := download(tb, base+p.path, filepath.Join(dir, p.file)); err != nil {
				tb.Errorf("profile %s: %v", label, err)
			}
		}
	}()
	return func() { <-done }
}
