package integration

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// Fifty objectives approved at once on a worker with worker.max_runs 2:
// never more than two runs alive at once, as the process table shows and
// as the runs' own start and end times say, and every objective DONE.
func TestSlots_AWorkerRunsAtMostMaxRunsAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := fmt.Sprintf("azolla-slot-%d", time.Now().UnixNano())
	times := filepath.Join(dir, "times")
	// Each run notes when it starts and ends, around a sleep whose
	// command line carries the marker (sleep takes the 0.3 as seconds and
	// the marker as an argument it never reads).
	run := fmt.Sprintf(`echo "start $(date +%%s%%N)" >> %q; sh -c 'sleep 0.3' %s; echo "end $(date +%%s%%N)" >> %q; printf ok`,
		times, marker, times)
	d := startDev(t, unconfined, "AZOLLA_WORKER_MAX_RUNS=2", "AZOLLA_DIAZOTROPH_COMMAND_RUN="+run)

	peakAlive := sampleAlive(t, marker)
	const n = 50
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uniqueID(fmt.Sprintf("slot%d", i))
		d.approve(t, ids[i])
	}
	for _, id := range ids {
		st := d.waitStep(t, id, workflows.StepDone)
		require.Equal(t, domain.GatePass, st.GateResult, "%s: %s", id, st.GateReason)
	}
	peak := peakAlive()
	t.Logf("peak from the process table %d, from the runs' times %d", peak, maxOverlap(t, times))
	require.Positive(t, peak, "the sampler saw runs")
	require.LessOrEqual(t, peak, 2, "runs alive at once, from the process table")
	require.Equal(t, 2, maxOverlap(t, times), "runs at once, from their own start and end times")
	d.requireAuditClean(t)
}

// sampleAlive scans the process table every few milliseconds for the
// runs whose sleep carries marker (processesNamed) until the function it
// returns is called, which returns the most it saw alive at once. A run
// seen in two scans in a row was alive between them, and so were the
// others seen twice: their lifetimes overlap pairwise, so they were all
// alive at one instant. One scan alone can count a run that ended during
// it and one that started after.
func sampleAlive(t *testing.T, marker string) (peak func() int) {
	var mu sync.Mutex
	most := 0
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			first, n := processesNamed(t, marker), 0
			for _, pid := range processesNamed(t, marker) {
				if slices.Contains(first, pid) {
					n++
				}
			}
			mu.Lock()
			most = max(most, n)
			mu.Unlock()
		}
	}()
	return func() int {
		close(stop)
		<-sampled
		mu.Lock()
		defer mu.Unlock()
		return most
	}
}

// processesNamed are the process groups of the processes whose command
// line holds s: one per run, which azolla starts in a group of its own (a
// shell's child between its fork and its exec shows its parent's command
// line, and is the same run).
func processesNamed(t *testing.T, s string) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Error(err)
		return nil
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		// The sh -c that runs the sleep: one per run, however the run's
		// own shell forks.
		if err != nil || !bytes.HasPrefix(cmdline, []byte("sh\x00-c\x00sleep ")) || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // it ended
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so the
		// fields are counted from its closing parenthesis.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 2 && !slices.Contains(out, fields[2]) {
			out = append(out, fields[2])
		}
	}
	return out
}

// maxOverlap is the most runs the "start"/"end" lines of path had going at
// once.
func maxOverlap(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		kind, at, ok := strings.Cut(sc.Text(), " ")
		require.True(t, ok, sc.Text())
		ns, err := strconv.ParseInt(at, 10, 64)
		require.NoError(t, err)
		edges = append(edges, edge{ns, map[string]int{"start": 1, "end": -1}[kind]})
	}
	require.NoError(t, sc.Err())
	// An end at the same instant as a start is counted first.
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.delta - b.delta
	})
	cur, most := 0, 0
	for _, e := range edges {
		cur += e.delta
		most = max(most, cur)
	}
	return most
}

// A CRITICAL objective approved behind twenty NORMAL ones on a full worker
// (worker.max_runs 1) gets the next free run slot.
func TestSlots_ACriticalObjectiveGetsTheNextFreeSlot(t *testing.T) {
	t.Parallel()
	starts := filepath.Join(t.TempDir(), "starts")
	run := fmt.Sprintf(`echo "$AZOLLA_OBJECTIVE_ID" >> %q; sleep 0.3; printf ok`, starts)
	d := startDev(t, unconfined, "AZOLLA_WORKER_MAX_RUNS=1", "AZOLLA_DIAZOTROPH_COMMAND_RUN="+run)
	var ids []string
	for i := range 20 {
		id := uniqueID(fmt.Sprintf("normal%d", i))
		ids = append(ids, id)
		d.approve(t, id)
	}
	// The worker is busy and the others wait for its slot.
	require.Eventually(t, func() bool { return countLines(starts) >= 2 }, time.Minute, 20*time.Millisecond)
	critical := uniqueID("critical")
	d.approve(t, critical, func(o *domain.Objective) { o.Urgency = "CRITICAL" })
	before := queuedAt(t, d, critical, starts)
	st := d.waitStep(t, critical, workflows.StepDone)
	require.Equal(t, domain.GatePass, st.GateResult)
	order := lines(t, starts)
	at := slices.Index(order, critical)
	require.GreaterOrEqual(t, at, before)
	// The run that had the slot when it was queued goes first, and, on a
	// loaded machine, one more that started while the lifecycle put its
	// run in the queue (without the priority it starts 10 runs later).
	require.LessOrEqual(t, at, before+2, "CRITICAL started %d runs after it was queued: %v", at-before, order)
	for _, id := range ids {
		d.waitStep(t, id, workflows.StepDone)
	}
}

// queuedAt is how many runs had started (lines of starts) when objective
// id's lifecycle reached its run: scheduling (reading a repository) is not
// the queue's doing.
func queuedAt(t *testing.T, d *devProc, id, starts string) int {
	t.Helper()
	var before int
	require.Eventually(t, func() bool {
		st, err := d.starter.State(context.Background(), id)
		before = countLines(starts)
		return err == nil && st.Step == workflows.StepRunning
	}, time.Minute, 10*time.Millisecond)
	return before
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// Two repositories on a full worker (worker.max_runs 1), one with twenty
// runs queued and one with one: the lone one starts within one run's
// time, not behind the twenty.
func TestSlots_ARepositorysLoneRunIsNotStarvedByAnothersQueue(t *testing.T) {
	t.Parallel()
	starts := filepath.Join(t.TempDir(), "starts")
	// Objectives on a repository run the patch diazotroph: its agent
	// notes its start and changes the README.
	run := fmt.Sprintf(`echo "$AZOLLA_OBJECTIVE_ID" >> %q; sleep 0.3; echo "$AZOLLA_OBJECTIVE_ID" >> README.md`, starts)
	d := startDev(t, unconfined, "AZOLLA_WORKER_MAX_RUNS=1", "AZOLLA_PATCH_GENERATOR=command",
		"AZOLLA_PATCH_COMMAND_RUN="+run)
	busy, lone := sampleRepo(t), sampleRepo(t)
	var ids []string
	for i := range 20 {
		id := uniqueID(fmt.Sprintf("busy%d", i))
		ids = append(ids, id)
		d.approve(t, id, func(o *domain.Objective) { o.Repository = busy })
	}
	require.Eventually(t, func() bool { return countLines(starts) >= 2 }, time.Minute, 20*time.Millisecond)
	single := uniqueID("lone")
	d.approve(t, single, func(o *domain.Objective) { o.Repository = lone })
	before := queuedAt(t, d, single, starts)
	d.waitStep(t, single, workflows.StepDone)
	order := lines(t, starts)
	at := slices.Index(order, single)
	// As for priority, one more run may start while the run is queued
	// (without the fairness key it starts 17 runs later).
	require.LessOrEqual(t, at, before+2, "the lone repository's run started %d runs after it was queued: %v", at-before, order)
	for _, id := range ids {
		d.waitStep(t, id, workflows.StepDone)
	}
}

// A run waiting for a slot says so: objective show prints "queued for a
// run slot" while another run holds the worker's one slot, and nothing of
// the kind once its own has started.
func TestSlots_ARunWaitingForASlotSaysSo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	starts, release := filepath.Join(dir, "starts"), filepath.Join(dir, "release")
	// Each run notes its start, then waits until the test releases it.
	run := fmt.Sprintf(`echo "$AZOLLA_OBJECTIVE_ID" >> %q; while [ ! -e %q ]; do sleep 0.05; done; printf ok`, starts, release)
	d := startDev(t, unconfined, "AZOLLA_WORKER_MAX_RUNS=1", "AZOLLA_DIAZOTROPH_COMMAND_RUN="+run)
	first, second := uniqueID("holds"), uniqueID("waits")
	d.approve(t, first)
	require.Eventually(t, func() bool { return countLines(starts) == 1 }, time.Minute, 20*time.Millisecond)
	d.approve(t, second)
	d.waitStep(t, second, workflows.StepRunning)
	show := func(id string) string {
		cmd := exec.Command(azollaBin, "objective", "show", id)
		cmd.Env = d.cliEnv()
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	require.Contains(t, show(second), "queued for a run slot (")
	require.NotContains(t, show(first), "queued for a run slot", "the run holding the slot is not queued")
	require.NoError(t, os.WriteFile(release, nil, 0o600))
	d.waitStep(t, first, workflows.StepDone)
	d.waitStep(t, second, workflows.StepDone)
}
