package patch_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
)

// benchWorkOrders is how many workorders each side of BenchmarkExecute runs.
const benchWorkOrders = 30

// BenchmarkExecute reports what the patch flow costs per workorder next to
// the git commands that produce the same commit and diff, run directly in
// the same run, and the ratios (patch / direct) of their means and medians.
// It reports; it never fails on speed. The workload is fixed, so run it with
// -benchtime=1x.
//
// Both sides work on one upstream repository of two files, through the same
// bare mirror (cloned before timing), and apply goodPatch (two files, +3 -1)
// to main's head on the branch azolla/bench, each workorder in a fresh
// directory. They alternate, patch first in even rounds and direct first in
// odd ones, after one untimed workorder each.
//
//   - patch: one Patch.Execute with the static generator and a new workorder
//     id, so a new workspace. That is the schema checks of the objective and
//     workorder; Mirrors.Sync (locks, then "fetch --prune" of the mirror);
//     PrepareWorkspace on the missing workspace ("clone --no-checkout" into a
//     temporary directory renamed into place, "rev-parse --verify" of the
//     commit, "checkout -B"), once only, as the static generator keeps the
//     worktree; CheckPatch in Go; Apply ("apply --index"); CommitStaged
//     ("commit" without automatic maintenance, "rev-parse HEAD"); Diff; then
//     the notes and PR draft. Every git run carries the hardening "-c"
//     options and a filtered environment and gets a session of its own. The
//     warm-up runs through a git wrapper that counts the runs, reported as
//     patch-git-runs/workorder; TestExecute_GitRunsOfAWorkorder names them.
//   - direct: os/exec of "git fetch --prune --quiet origin" in the mirror,
//     "git clone --no-checkout --quiet" of it, "git checkout -B" the branch
//     at the commit, "git apply --check" and "git apply --index" of the patch
//     from stdin, "git add -A", "git commit -m" and "git diff" with
//     gitops.DiffArgs(commit, "HEAD"): no validation, hardening, checks or
//     notes.
//
// Every workorder of both sides must report a diff byte for byte equal to
// the first patch workorder's, which must touch both files of the patch;
// otherwise the benchmark fails.
func BenchmarkExecute(b *testing.B) {
	ctx := context.Background()
	repo, dir := benchRepo(b)
	p := benchPatch(dir, gitops.Git{})
	// Resolve clones the mirror, so every timed Sync is the fetch of an
	// existing one, and reads the commit both sides start from.
	target, err := p.Resolve(ctx, repo, "main")
	if err != nil {
		b.Fatal(err)
	}
	mirror := filepath.Join(dir, "mirrors", gitops.MirrorName(repo))

	var want string // the diff every workorder must report
	patchSide := func(p *patch.Patch, id string) error {
		res, err := p.Execute(ctx, benchRequest(repo, target, id))
		switch {
		case err != nil:
			return fmt.Errorf("execute %s: %w", id, err)
		case res.RunnerStatus != domain.RunnerOK:
			return fmt.Errorf("execute %s: %s: %s", id, res.RunnerStatus, res.Notes)
		case want == "":
			want = res.Content
			for _, f := range []string{"README.md", "src/greet.sh"} {
				if !strings.Contains(want, "diff --git a/"+f+" b/"+f+"\n") {
					return fmt.Errorf("execute %s: the diff does not touch %s:\n%s", id, f, want)
				}
			}
		case res.Content != want:
			return fmt.Errorf("execute %s: diff differs from the first workorder's:\n%s", id, res.Content)
		}
		return nil
	}
	directRuns := 0
	directSide := func(id string) error {
		diff, runs, err := directGit(mirror, filepath.Join(dir, "direct", id), target.CommitSHA)
		directRuns = runs
		if err == nil && diff != want {
			err = fmt.Errorf("the diff differs from the patch side's:\n%s", diff)
		}
		if err != nil {
			return fmt.Errorf("direct %s: %w", id, err)
		}
		return nil
	}

	counted, countRuns := countingGit(b)
	if err := patchSide(benchPatch(dir, counted), "wo-bench-warm"); err != nil {
		b.Fatal(err)
	}
	patchRuns := countRuns()
	if err := directSide("wo-bench-warm"); err != nil {
		b.Fatal(err)
	}

	var patchLat, directLat []time.Duration
	timed := func(lat *[]time.Duration, op func() error) {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		*lat = append(*lat, time.Since(start))
	}
	b.ResetTimer()
	for i := range benchWorkOrders {
		id := fmt.Sprintf("wo-bench-%d", i)
		sides := []func(){
			func() { timed(&patchLat, func() error { return patchSide(p, id) }) },
			func() { timed(&directLat, func() error { return directSide(id) }) },
		}
		if i%2 == 1 {
			slices.Reverse(sides)
		}
		for _, side := range sides {
			side()
		}
	}
	b.StopTimer()

	pm, pp, dm, dp := mean(patchLat), median(patchLat), mean(directLat), median(directLat)
	b.ReportMetric(ms(pm), "patch-ms/workorder")
	b.ReportMetric(ms(pp), "patch-p50-ms")
	b.ReportMetric(ms(dm), "direct-ms/workorder")
	b.ReportMetric(ms(dp), "direct-p50-ms")
	b.ReportMetric(float64(pm)/float64(dm), "mean-ratio")
	b.ReportMetric(float64(pp)/float64(dp), "p50-ratio")
	b.ReportMetric(float64(patchRuns), "patch-git-runs/workorder")
	b.ReportMetric(float64(directRuns), "direct-git-runs/workorder")
	fmt.Printf(`
patch flow vs the same git commands run directly, %d workorders each, same run
  %-22s %10s %10s %10s
  %-22s %10.1f %10.1f %10d
  %-22s %10.1f %10.1f %10d
  %-22s %10.2f %10.2f %10s   (patch / direct)
`, benchWorkOrders, "", "mean ms", "p50 ms", "git runs",
		"patch (Execute)", ms(pm), ms(pp), patchRuns,
		"direct git", ms(dm), ms(dp), directRuns,
		"ratio", float64(pm)/float64(dm), float64(pp)/float64(dp), "")
}

// benchRepo makes an upstream repository with goodPatch's two files, and a
// directory for the mirror, the workspaces and the direct clones.
func benchRepo(b *testing.B) (repo, dir string) {
	root := b.TempDir()
	repo, dir = filepath.Join(root, "upstream"), filepath.Join(root, "git")
	files := map[string]string{"README.md": "# sample\n\nHello.\n", "src/greet.sh": "#!/bin/sh\necho hello\n"}
	for name, content := range files {
		path := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		if _, err := runGit(repo, "", args...); err != nil {
			b.Fatal(err)
		}
	}
	return repo, dir
}

func benchPatch(dir string, g gitops.Git) *patch.Patch {
	return patch.New(patch.Options{Git: g, Dir: dir, Generators: map[string]patchgen.Generator{"static": patchgen.NewStatic()},
		Default: "static", Author: author, Policy: gitops.PatchPolicy{MaxBytes: 1 << 20}})
}

// benchRequest is workorder id of the objective "bench" carrying goodPatch.
func benchRequest(repo string, target diazotroph.Target, id string) diazotroph.Request {
	return diazotroph.Request{
		Objective: domain.Objective{ObjectiveID: "bench", ObjectiveType: "TICKET", Title: "Greet by name",
			Status: domain.StatusInProgress, StatusSeq: 2, Blockers: []string{}, Urgency: "NORMAL", Repository: repo,
			BaseBranch: "main", Patch: goodPatch, CreatedAt: t0, UpdatedAt: t0},
		WorkOrder: domain.WorkOrder{WorkOrderID: id, EventID: "ev-" + id, ObjectiveID: "bench",
			DiazotrophType: diazotroph.PatchType, ContextSnapshotID: "cs-" + id, BranchName: "azolla/bench",
			BudgetMS: 60000, Status: domain.WorkOrderCreated, CreatedAt: t0},
		Snapshot: domain.ContextSnapshot{ContextSnapshotID: "cs-" + id, ObjectiveID: "bench", FullPromptText: "Greet by name",
			Metadata: domain.SnapshotMetadata{CommitSHA: target.CommitSHA, BaseBranch: target.BaseBranch}},
		Budget: time.Minute,
	}
}

// directGit makes in ws, from mirror, the commit of goodPatch on azolla/bench
// at base with plain git commands, and returns its diff and how many git
// runs it took.
func directGit(mirror, ws, base string) (diff string, runs int, err error) {
	steps := []struct {
		dir, stdin string
		args       []string
	}{
		{mirror, "", []string{"fetch", "--prune", "--quiet", "origin"}},
		{filepath.Dir(mirror), "", []string{"clone", "--no-checkout", "--quiet", mirror, ws}},
		{ws, "", []string{"checkout", "--quiet", "-B", "azolla/bench", base}},
		{ws, goodPatch, []string{"apply", "--check", "-"}},
		{ws, goodPatch, []string{"apply", "--index", "-"}},
		{ws, "", []string{"add", "-A"}},
		{ws, "", []string{"commit", "--quiet", "-m", "Greet by name"}},
		{ws, "", gitops.DiffArgs(base, "HEAD")},
	}
	for _, s := range steps {
		if diff, err = runGit(s.dir, s.stdin, s.args...); err != nil {
			return "", runs, err
		}
		runs++
	}
	return diff, runs, nil
}

// runGit runs git in dir with stdin, committing as author, and returns its
// standard output.
func runGit(dir, stdin string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME="+author.Name, "GIT_AUTHOR_EMAIL="+author.Email,
		"GIT_COMMITTER_NAME="+author.Name, "GIT_COMMITTER_EMAIL="+author.Email)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// countingGit is a git that logs each run before running the real one, and
// a function that counts the runs logged.
func countingGit(b *testing.B) (gitops.Git, func() int) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	wrapper, log := filepath.Join(dir, "git"), filepath.Join(dir, "runs.log")
	script := fmt.Sprintf("#!/bin/sh\necho run >> '%s'\nexec '%s' \"$@\"\n", log, gitPath)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	return gitops.Git{Path: wrapper}, func() int {
		raw, _ := os.ReadFile(log)
		return strings.Count(string(raw), "\n")
	}
}

func mean(l []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range l {
		sum += d
	}
	return sum / time.Duration(len(l))
}

func median(l []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(l))
	return s[(len(s)-1)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
