package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// idleSizesEnv lists the numbers of waiting objectives BenchmarkIdleCost
// measures, comma-separated, ascending; unset, it is skipped.
const idleSizesEnv = "AZOLLA_BENCH_IDLE_SIZES"

// idlePollInterval is azolla dev's default lifecycle.poll_interval, spelled
// out so the measure does not move if the default does.
const idlePollInterval = 5 * time.Second

// idleWindow is how long the CPU is measured: 24 poller passes, and as
// long as the Go runtime's period of forced collections (two minutes), so
// that each window holds one. A forced collection marks the whole live heap;
// a window without one reads low, a short window with one reads high.
const idleWindow = 24 * idlePollInterval

// idleSettle is how long the dev process must stay quiet before a measure:
// longer than a store step's StartToClose timeout (a minute), because each
// finished step's timeout timer still fires then, so creating objectives
// leaves work behind for a minute after the last lifecycle waits.
const idleSettle = 70 * time.Second

// idleQuietMargin is how far above the empty process's CPU an
// idleQuietWindow may be and still count as quiet, in points of a core.
const idleQuietMargin = 0.5

// idleQuietWindow is the window quiet is judged on: four poller passes. An
// idle process has work of its own every 10 s to a minute (the server's
// namespace refresh, the deadline monitor's scan), which the two-minute
// baseline averages in; a 5 s window that caught one read as busy, so no
// size ever counted as quiet, however long it waited.
const idleQuietWindow = 4 * idlePollInterval

// BenchmarkIdleCost is a fixed-size load test, not a b.N benchmark: b.N is
// ignored (run it with -benchtime 1x). It starts one `azolla dev` process
// and measures its CPU (utime+stime from /proc/PID/stat, as a percentage of
// one core) over two minutes (idleWindow, 24 passes of the default 5 s
// poll interval): first empty (the baseline: the embedded Temporal server,
// its UI and the workers), then with N objectives waiting for approval for
// each size N, adding objectives up to each N in turn.
// AZOLLA_BENCH_IDLE_SIZES lists the sizes; `make bench-idle` sets the
// issue's "100,1000,10000".
//
// Objectives are created as `azolla objective create` does (store, then
// lifecycle), 32 at a time. Before each measure, every lifecycle must await
// approval and the process must have been quiet for idleSettle. Each row
// gives N, the CPU, the poller passes seen in the window (the growth of the
// poller's leadership claim_version, renewed once per pass), the time to
// create the objectives added, until they all waited, and until the process
// was quiet. The goal: CPU independent of N, at most 1% of a core
// at 10,000.
//
// Timings on a 2-core VM: the baseline and each small size take about 3.5
// minutes (mostly idleSettle and the window); reaching 10,000 adds about 9
// minutes (creating in about a minute, the lifecycles' first steps in four,
// their step timers, the window).
func BenchmarkIdleCost(b *testing.B) {
	// Minutes per size: more than `make bench` may take. `make bench-idle`
	// runs it with the sizes.
	if os.Getenv(idleSizesEnv) == "" {
		b.Skipf("set %s (e.g. 100,1000) or run make bench-idle: each size takes minutes", idleSizesEnv)
	}
	sizes, err := idleSizes(os.Getenv(idleSizesEnv))
	if err != nil {
		b.Fatal(err)
	}
	d := startIdleDev(b)
	rows := []idleRow{d.measure(b, 0)}
	for _, n := range sizes {
		rows = append(rows, d.measure(b, n))
	}
	fmt.Printf("\nazolla dev idle CPU with N objectives waiting for approval (poll interval %v, window %v)\n",
		idlePollInterval, idleWindow)
	fmt.Printf("  %8s %11s %7s %10s %12s %10s\n", "N", "CPU % core", "passes", "create", "all waiting", "quiet")
	for _, r := range rows {
		fmt.Printf("  %8d %11.2f %7d %10s %12s %10s\n", r.n, r.cpuPercent, r.passes,
			r.create.Round(100*time.Millisecond), r.waiting.Round(100*time.Millisecond), r.quiet.Round(time.Second))
		b.ReportMetric(r.cpuPercent, fmt.Sprintf("cpu-%%-at-%d", r.n))
	}
	if last := rows[len(rows)-1]; last.n >= i1Objectives {
		// I1: what 10,000 waiting objectives add to the empty process.
		b.ReportMetric(last.cpuPercent-rows[0].cpuPercent, "i1-points")
	}
}

// i1Objectives is the number of waiting objectives I1 is measured at.
const i1Objectives = 10000

// idleProfileEnv names a directory: when set, each size's window is also
// taken as a CPU profile of the dev process (cpu-N.pprof, with ops.pprof
// on), and its heap after it (heap-N.pprof). The profiler's own sampling
// adds a little CPU to what it measures.
const idleProfileEnv = "AZOLLA_BENCH_IDLE_PROFILE"

// idleRow is one size's measure; the durations count from the start of
// its creation.
type idleRow struct {
	n          int
	cpuPercent float64
	passes     int64
	create     time.Duration
	waiting    time.Duration
	quiet      time.Duration
}

func idleSizes(spec string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("%s: %q is not a number of objectives above the one before", idleSizesEnv, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// idleDev is the azolla dev process under measure.
type idleDev struct {
	*devProc
	created  int     // objectives created so far
	baseline float64 // CPU of the empty process
}

func startIdleDev(b *testing.B) *idleDev {
	env := []string{"AZOLLA_LIFECYCLE_POLL_INTERVAL=" + idlePollInterval.String()}
	if os.Getenv(idleProfileEnv) != "" {
		env = append(env, "AZOLLA_OPS_PPROF=true")
	}
	return &idleDev{devProc: startDev(b, env...)}
}

// download writes what a GET of url answers into file.
func download(tb testing.TB, url, file string) error {
	code, body := httpGet(tb, url)
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", url, code)
	}
	return os.WriteFile(file, []byte(body), 0o644)
}

// measure brings the waiting objectives up to n, waits for quiet and
// measures; n = 0 measures the empty process and sets the baseline.
func (d *idleDev) measure(b *testing.B, n int) idleRow {
	ctx := context.Background()
	row := idleRow{n: n}
	start := time.Now()
	ids := make([]string, 0, n-d.created)
	for i := d.created; i < n; i++ {
		ids = append(ids, fmt.Sprintf("idle-%05d", i))
	}
	if err := inParallel(ids, func(id string) error {
		_, err := d.starter.Create(ctx, &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "waits",
			Status: domain.StatusNew, Urgency: "NORMAL"})
		return err
	}); err != nil {
		b.Fatalf("create: %v", err)
	}
	d.created = n
	row.create = time.Since(start)
	if err := allAwaitApproval(ctx, d.starter, ids); err != nil {
		b.Fatalf("%v\n%s", err, d.out.String())
	}
	row.waiting = time.Since(start)
	if n > 0 {
		if !d.quiet(b) {
			b.Logf("N=%d: the process never stayed within %.1f points of its empty CPU for %v; measuring anyway",
				n, idleQuietMargin, idleSettle)
		}
	} else {
		// The poller's first passes and the server's start-up settle.
		time.Sleep(2 * idlePollInterval)
	}
	row.quiet = time.Since(start)

	v0 := d.pollerVersion(b)
	t0, w0 := cpuTicks(b, d.pid()), time.Now()
	profiled := d.profileInto(b, os.Getenv(idleProfileEnv), strconv.Itoa(n), idleWindow)
	time.Sleep(idleWindow)
	t1, w1 := cpuTicks(b, d.pid()), time.Now()
	profiled()
	row.passes = d.pollerVersion(b) - v0
	row.cpuPercent = 100 * ticksToSeconds(t1-t0) / w1.Sub(w0).Seconds()
	if n == 0 {
		d.baseline = row.cpuPercent
	}
	return row
}

// allAwaitApproval queries the lifecycles in rounds until each has awaited
// approval once, so that a slow start is not hammered with queries, for
// up to approvalWait(len(ids)).
func allAwaitApproval(ctx context.Context, s *starter.Starter, ids []string) error {
	pending := ids
	for deadline := time.Now().Add(approvalWait(len(ids))); len(pending) > 0; {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d lifecycles never awaited approval, %s among them", len(pending), pending[0])
		}
		var mu sync.Mutex
		var still []string
		_ = inParallel(pending, func(id string) error {
			if st, err := s.State(ctx, id); err != nil || st.Step != workflows.StepAwaitingApproval {
				mu.Lock()
				still = append(still, id)
				mu.Unlock()
			}
			return nil
		})
		if pending = still; len(pending) > 0 {
			time.Sleep(time.Second)
		}
	}
	return nil
}

// approvalWait is how long n lifecycles just created may take to await
// approval: a minute, and 90 ms more for each (16 minutes for 10,000; a
// quiet two-core machine takes about four).
func approvalWait(n int) time.Duration { return time.Minute + time.Duration(n)*90*time.Millisecond }

// quiet waits, for up to ten minutes, until no idleQuietWindow has been
// more than idleQuietMargin above the baseline for idleSettle.
func (d *idleDev) quiet(b *testing.B) bool {
	calm := time.Now()
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); {
		t0 := cpuTicks(b, d.pid())
		time.Sleep(idleQuietWindow)
		if 100*ticksToSeconds(cpuTicks(b, d.pid())-t0)/idleQuietWindow.Seconds() > d.baseline+idleQuietMargin {
			calm = time.Now()
		}
		if time.Since(calm) >= idleSettle {
			return true
		}
	}
	return false
}

// pollerVersion is the poller's leadership claim_version: it grows by one
// each pass (and by one each third of a lease during a long pass).
func (d *idleDev) pollerVersion(b *testing.B) int64 {
	c, err := d.store.GetClaim(context.Background(), domain.ResourcePoller, domain.PollerLeadership)
	if err != nil {
		b.Fatalf("the poller's leadership claim: %v", err)
	}
	return c.ClaimVersion
}

// inParallel runs op on every id, 32 at a time, and returns the first error.
func inParallel(ids []string, op func(id string) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(ids)); i = next.Add(1) - 1 {
				if err := op(ids[i]); err != nil {
					once.Do(func() { first = fmt.Errorf("%s: %w", ids[i], err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func ticksToSeconds(t int64) float64 { return float64(t) / proctest.ClockTicks }

// cpuTicks is a process's utime+stime, in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	t, err := proctest.CPUTicks(pid)
	if err != nil {
		b.Fatal(err)
	}
	return t
}
