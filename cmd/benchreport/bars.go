package main

// The bars: what the output of `go test -bench` is read for, each ratio
// azolla's benchmarks report set against its goal in one table, which is
// what `make bench` prints last.

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Goal is one bar a benchmark's metric must clear.
type Goal struct {
	// ID is the bar's name in issues and notes (B1, B3 sqlite, ...).
	ID string
	// What the metric measures, in a few words.
	What string
	// Benchmark is the benchmark's name without its -GOMAXPROCS suffix.
	Benchmark string
	// Unit is the metric's unit as the benchmark reports it.
	Unit string
	// AtMost: the metric must be <= Bound; otherwise >= Bound.
	AtMost bool
	Bound  float64
	// Target is the make target whose benchmark reports it: "" for
	// `make bench`, or one that takes minutes (bench-idle, bench-scale).
	Target string
}

// Goals are the bars `make bench` checks, in the order they are printed.
var Goals = []Goal{
	{ID: "B1", What: "lifecycle throughput / bare workflow", Benchmark: "BenchmarkLifecycle", Unit: "throughput-ratio", Bound: 0.9},
	{ID: "B2", What: "lifecycle p50 latency / bare workflow", Benchmark: "BenchmarkLifecycle", Unit: "p50-ratio", AtMost: true, Bound: 1.3},
	{ID: "B3 sqlite", What: "claim acquire / raw UPDATE ... RETURNING", Benchmark: "BenchmarkClaims", Unit: "sqlite-acquire-ratio", Bound: 0.7},
	{ID: "B3 postgres", What: "claim acquire / raw UPDATE ... RETURNING", Benchmark: "BenchmarkClaims", Unit: "postgres-acquire-ratio", Bound: 0.9},
	{ID: "B4 sqlite", What: "claim renew / primary-key UPDATE", Benchmark: "BenchmarkClaims", Unit: "sqlite-renew-ratio", Bound: 0.9},
	{ID: "B4 postgres", What: "claim renew / primary-key UPDATE", Benchmark: "BenchmarkClaims", Unit: "postgres-renew-ratio", Bound: 0.9},
	{ID: "B5", What: "remote jobs/s over HTTP, Redis Streams / database", Benchmark: "BenchmarkRemoteJobs", Unit: "jobs-ratio", Bound: 0.9},
	{ID: "B6", What: "worker death to completion / (lease TTL + reaper interval)", Benchmark: "BenchmarkRemoteRecovery", Unit: "recovery-ratio", AtMost: true, Bound: 1.1},
	{ID: "B6 redis", What: "the same on Redis Streams", Benchmark: "BenchmarkRemoteRecovery", Unit: "redis-recovery-ratio", AtMost: true, Bound: 1.1},
	{ID: "B7", What: "patch workorder time / same git work done directly", Benchmark: "BenchmarkExecute", Unit: "mean-ratio", AtMost: true, Bound: 1.2},
	{ID: "T1", What: "track p50, one capture to PROCESSED / one lifecycle alone", Benchmark: "BenchmarkTrack", Unit: "track-latency-ratio", AtMost: true, Bound: 1.5},
	{ID: "T2", What: "triage time per capture in its round / wall time per lifecycle", Benchmark: "BenchmarkTrack", Unit: "triage-share-ratio", AtMost: true, Bound: 1},
	{ID: "scale", What: "throughput at 1,000 lifecycles / at 100", Benchmark: "BenchmarkScale", Unit: "scale-throughput-ratio", Bound: 0.8},
	{ID: "scale RSS", What: "resident memory per lifecycle, 1,000 / 100", Benchmark: "BenchmarkScale", Unit: "scale-rss-per-objective-ratio", AtMost: true, Bound: 1},
	{ID: "TP", What: "lifecycles/s, production topology / azolla dev", Benchmark: "BenchmarkTopology", Unit: "tp-ratio", Bound: 0.8},
	{ID: "S1", What: "lean `azolla version` wall time / `git --version`", Benchmark: "BenchmarkStartup", Unit: "lean-time-ratio", AtMost: true, Bound: 15},
	{ID: "S2", What: "lean `azolla version` peak RSS / `git --version`", Benchmark: "BenchmarkStartup", Unit: "lean-rss-ratio", AtMost: true, Bound: 8},
	{ID: "BN", What: "best-of-N, approval to DONE, 3 candidates / 1 (agent sleeping 2 s)", Benchmark: "BenchmarkBestOfN", Unit: "bn-ratio", AtMost: true, Bound: 1.5},
	{ID: "X2", What: "Go repository with a dependency, approval to DONE, warm environment / cold (mean)", Benchmark: "BenchmarkEnvironment", Unit: "x2-ratio", AtMost: true, Bound: 0.35},
	{ID: "X1", What: "COMMAND_DIAZOTROPH `true`, approval to DONE, sandboxed / unconfined (mean)", Benchmark: "BenchmarkSandbox", Unit: "x1-ratio", AtMost: true, Bound: 1.1},
	{ID: "F1 poll", What: "issue labelled to objective by poll, p50 / (poll interval + 1 s)", Benchmark: "BenchmarkIntake", Unit: "f1-poll-ratio", AtMost: true, Bound: 1},
	{ID: "F1 webhook", What: "issue labelled to objective by webhook, p50 / 1 s", Benchmark: "BenchmarkIntake", Unit: "f1-webhook-ratio", AtMost: true, Bound: 1},
	{ID: "G1 sqlite", What: "store bytes per DONE objective, after store retention / before", Benchmark: "BenchmarkStoreGrowth", Unit: "g1-sqlite-ratio", AtMost: true, Bound: 0.5},
	{ID: "G1 postgres", What: "store bytes per DONE objective, after store retention / before", Benchmark: "BenchmarkStoreGrowth", Unit: "g1-postgres-ratio", AtMost: true, Bound: 0.5},
	{ID: "Q1", What: "approve to scheduled p50, 50 approved at once on max_runs 2 / one at a time idle", Benchmark: "BenchmarkSlots", Unit: "q1-ratio", AtMost: true, Bound: 2},
	{ID: "Q2", What: "lifecycles/s, run slots and a slot-claim limit / no bound", Benchmark: "BenchmarkSlots", Unit: "q2-ratio", Bound: 0.95},
	{ID: "I1", What: "idle CPU with 10,000 objectives waiting - empty, points of a core", Benchmark: "BenchmarkIdleCost", Unit: "i1-points", AtMost: true, Bound: 0.3, Target: "bench-idle"},
	{ID: "S10k", What: "throughput at 10,000 lifecycles / at 100", Benchmark: "BenchmarkScale", Unit: "s10k-throughput-ratio", Bound: 0.8, Target: "bench-scale"},
	{ID: "S10k RSS", What: "resident memory per lifecycle, 10,000 / 100", Benchmark: "BenchmarkScale", Unit: "s10k-rss-per-objective-ratio", AtMost: true, Bound: 0.5, Target: "bench-scale"},
	{ID: "S10k-topology", What: "throughput at 10,000 lifecycles / at 100, production topology", Benchmark: "BenchmarkTopologyScale", Unit: "s10k-topology-throughput-ratio", Bound: 0.8, Target: "bench-scale"},
}

// Met says whether v clears the goal.
func (g Goal) Met(v float64) bool {
	if g.AtMost {
		return v <= g.Bound
	}
	return v >= g.Bound
}

// Metrics maps benchmark name (without -N) and unit to the value reported.
// A benchmark that ran more than once keeps its last value.
type Metrics map[string]map[string]float64

// Parse reads `go test -bench` output. Lines that are not benchmark
// results are skipped.
func Parse(r io.Reader) (Metrics, error) {
	m := Metrics{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// BenchmarkName-2  <iterations>  <value> <unit>  <value> <unit> ...
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		if m[name] == nil {
			m[name] = map[string]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			m[name][f[i+1]] = v
		}
	}
	return m, sc.Err()
}

// Of returns the goals of make target target ("" for `make bench`).
func Of(target string) []Goal {
	var out []Goal
	for _, g := range Goals {
		if g.Target == target {
			out = append(out, g)
		}
	}
	return out
}

// Report writes the table of goals for m and returns how many were missed
// and how many had no figure (their benchmark did not run or did not
// report the metric).
func Report(w io.Writer, m Metrics, goals []Goal) (missed, absent int) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "bar\tmeasures\tgoal\tthis run\t\t")
	for _, g := range goals {
		op := ">="
		if g.AtMost {
			op = "<="
		}
		v, ok := m[g.Benchmark][g.Unit]
		verdict, figure := "no figure", "-"
		switch {
		case !ok:
			absent++
		case g.Met(v):
			verdict, figure = "met", strconv.FormatFloat(v, 'g', 4, 64)
		default:
			verdict, figure = "MISSED", strconv.FormatFloat(v, 'g', 4, 64)
			missed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s %.2f\t%s\t%s\t\n", g.ID, g.What, op, g.Bound, figure, verdict)
	}
	_ = tw.Flush()
	return missed, absent
}
