package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startupRuns is how many times each command runs; the medians are
// reported.
const startupRuns = 10

// BenchmarkStartup is a fixed-size workload, not a b.N benchmark (run it
// with -benchtime 1x). It builds the lean binary (the default build) and the
// full one (-tags devserver), then runs `azolla version` of each and
// `git --version`, the baseline, startupRuns times, one after the other so
// that drift in the machine's load falls on all three, and reports median
// wall time and peak RSS of each, the binaries' sizes, and the lean and full
// figures as ratios to git's.
func BenchmarkStartup(b *testing.B) {
	git, err := exec.LookPath("git")
	if err != nil {
		b.Skip("no git to measure against")
	}
	gnuTime := "/usr/bin/time"
	if err := exec.Command(gnuTime, "-f", "%M", "true").Run(); err != nil {
		b.Skipf("no GNU time at %s to measure peak memory with: %v", gnuTime, err)
	}
	dir := b.TempDir()
	// The lean binary as make build-lean and the image build it; the full
	// one as make build does.
	lean := buildAzolla(b, filepath.Join(dir, "azolla-lean"), []string{"CGO_ENABLED=0"}, "-trimpath", "-ldflags", "-s -w")
	full := buildAzolla(b, filepath.Join(dir, "azolla"), nil, "-tags", "devserver")
	commands := [][]string{{lean, "version"}, {full, "version"}, {git, "--version"}}

	b.ResetTimer()
	wall := make([][]float64, len(commands))
	rss := make([][]float64, len(commands))
	for range startupRuns {
		for i, argv := range commands {
			ms, mib := runMeasured(b, gnuTime, argv)
			wall[i], rss[i] = append(wall[i], ms), append(rss[i], mib)
		}
	}
	b.StopTimer()

	names := []string{"lean", "full", "git"}
	for i, name := range names {
		b.ReportMetric(median(wall[i]), name+"-version-ms")
		b.ReportMetric(median(rss[i]), name+"-version-MiB")
	}
	for name, path := range map[string]string{"lean": lean, "full": full} {
		b.ReportMetric(fileMiB(b, path), name+"-binary-MiB")
	}
	gitMs, gitMiB := median(wall[2]), median(rss[2])
	b.ReportMetric(median(wall[0])/gitMs, "lean-time-ratio")
	b.ReportMetric(median(rss[0])/gitMiB, "lean-rss-ratio")
	b.ReportMetric(median(wall[1])/gitMs, "full-time-ratio")
	b.ReportMetric(median(rss[1])/gitMiB, "full-rss-ratio")
}

// buildAzolla builds this command at out with the extra go build flags
// and environment, then has the kernel drop the file's cached pages, so
// that it is measured as an installed binary is, read back from disk like
// git's, not as the linker's freshly written file, whose cached pages the
// kernel maps in larger pieces (several MiB more resident for the same
// code).
func buildAzolla(b *testing.B, out string, env []string, flags ...string) string {
	b.Helper()
	args := append(append([]string{"build"}, flags...), "-o", out, ".")
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("go %v: %v", args, err)
	}
	if err := dropCache(out); err != nil {
		b.Fatalf("drop the cached pages of %s: %v", out, err)
	}
	return out
}

// dropCache writes path's pages to disk and asks the kernel to forget
// them.
func dropCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// runMeasured runs argv twice: once for its wall time in milliseconds,
// once under GNU time for its peak resident memory in MiB. A child's own
// Maxrss would not do: Go starts it with vfork, so the figure the kernel
// keeps is at least the benchmark's own.
func runMeasured(b *testing.B, gnuTime string, argv []string) (ms, mib float64) {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %v\n%s", argv, err, out)
	}
	ms = float64(time.Since(start).Microseconds()) / 1000

	f := filepath.Join(b.TempDir(), "rss")
	cmd = exec.Command(gnuTime, append([]string{"-f", "%M", "-o", f}, argv...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %v: %v\n%s", gnuTime, argv, err, out)
	}
	raw, err := os.ReadFile(f)
	if err != nil {
		b.Fatal(err)
	}
	kib, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	if err != nil {
		b.Fatalf("%s wrote %q, not a size in KiB", gnuTime, raw)
	}
	return ms, kib / 1024
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fileMiB(b *testing.B, path string) float64 {
	b.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return float64(fi.Size()) / (1 << 20)
}
