package patch_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/schemas"
)

// greetGate is the repository's gate: the script parses (its build) and
// greets by name (its test).
var greetGate = []string{`sh -n src/greet.sh`, `test "$(sh src/greet.sh Ann)" = "hello, Ann"`}

// candidates is a repository whose stand-in agent writes greet.sh by its
// $AZOLLA_CANDIDATE: the branch of script for each number.
func candidates(t *testing.T, byCandidate map[string]string) (*testBundle, diazotroph.Request) {
	t.Helper()
	tb := setup(t)
	tb.settings.GateCommands, tb.settings.GateBudget = greetGate, time.Minute
	var script strings.Builder
	script.WriteString(`case "$AZOLLA_CANDIDATE" in` + "\n")
	for k, body := range byCandidate {
		script.WriteString(k + ") " + body + " ;;\n")
	}
	script.WriteString("*) echo \"unexpected candidate '$AZOLLA_CANDIDATE'\" >&2; exit 1 ;;\nesac\n")
	tb.p = tb.newPatch(map[string]patchgen.Generator{"command": patchgen.NewCommand(patchgen.CommandOptions{
		Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: script.String(), WorktreeDiff: gitops.Git{}.WorktreeDiff})})
	req := tb.request(t, "best", "")
	req.Objective.Generator = "command"
	return tb, req
}

// greets writes a greet.sh saying text.
func greets(text string) string {
	return `printf '#!/bin/sh\necho "` + text + `"\n' > src/greet.sh`
}

// runAll runs candidates 1..n concurrently.
func runAll(t *testing.T, tb *testBundle, req diazotroph.Request, n int) []patch.Candidate {
	t.Helper()
	out, errs := make([]patch.Candidate, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i], errs[i] = tb.p.RunCandidate(context.Background(), req, i+1) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return out
}

func TestCandidates_TheOnePassingTheGateWinsAndIsDelivered(t *testing.T) {
	t.Parallel()
	tb, req := candidates(t, map[string]string{
		"1": greets("goodbye, $1"),           // wrong
		"2": greets("hello, $1"),             // correct
		"3": `echo 'if then' > src/greet.sh`, // breaks the build
	})
	cands := runAll(t, tb, req, 3)

	wo := req.WorkOrder.WorkOrderID
	for i, c := range cands {
		k := i + 1
		require.Equal(t, k, c.Attempt)
		require.Equal(t, domain.RunnerOK, c.RunnerStatus, c.Notes)
		require.Equal(t, "command", c.Generator)
		require.Equal(t, tb.p.CandidateWorkspace(wo, k), c.Workspace)
		require.Equal(t, filepath.Join(patch.WorkspacesDir(tb.gitDir), wo+"-c"+strconv.Itoa(k)), c.Workspace)
		require.Equal(t, "azolla/best/c"+strconv.Itoa(k), c.Branch)
		// Each candidate's commit is on its own branch in its own workspace.
		require.Equal(t, c.CommitSHA, headOf(t, c.Workspace, c.Branch))
		require.Len(t, c.PatchSHA256, 64)
		require.Contains(t, c.Patch, "diff --git a/src/greet.sh b/src/greet.sh")
		require.Len(t, c.Gate, 2, "every gate command ran")
		require.False(t, c.FinishedAt.IsZero())
	}
	// No cross-talk: each workspace holds its own candidate's script.
	for k, want := range map[int]string{0: "goodbye", 1: "hello", 2: "if then"} {
		raw, err := os.ReadFile(filepath.Join(cands[k].Workspace, "src/greet.sh"))
		require.NoError(t, err)
		require.Contains(t, string(raw), want)
	}
	require.Equal(t, []bool{true, false}, passed(cands[0]))
	require.Equal(t, []bool{true, true}, passed(cands[1]))
	require.Equal(t, []bool{false, false}, passed(cands[2]))
	require.Equal(t, 2, cands[1].CommandsPassed)
	require.Contains(t, cands[0].Gate[1].Detail, "exited with status 1")
	require.NotContains(t, cands[0].Gate[1].Detail, "\n")
	require.NoDirExists(t, tb.p.Workspace(wo), "candidates leave the workorder's workspace alone")
	tb.requireUntouched(t)

	winner, why, tie := patch.Choose(cands, len(greetGate))
	require.Equal(t, 1, winner)
	require.Nil(t, tie)
	require.True(t, strings.HasPrefix(why, "Candidate 2 won (the only candidate to pass every gate command): 2 of 2 gate commands passed"), why)
	require.Contains(t, why, "candidate 1: 1 of 2 gate commands passed")
	require.Contains(t, why, "candidate 3: 0 of 2 gate commands passed")
	require.NotContains(t, why, "\n")

	res, err := tb.p.DeliverCandidate(context.Background(), req, cands[winner], why)
	require.NoError(t, err)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Equal(t, cands[winner].Patch, res.Content, "the bundle's content is the winner's patch")
	require.Equal(t, "azolla/best", res.Metadata.BranchName)
	require.Equal(t, res.Metadata.CommitSHA, headOf(t, tb.p.Workspace(wo), "azolla/best"))
	require.Equal(t, "command", res.Metadata.Generator)
	require.True(t, strings.HasPrefix(res.Notes, why+"\n\n"), res.Notes)
	b := domain.OutputBundle{WorkOrderID: wo, Title: res.Title, Content: res.Content, Notes: res.Notes,
		Metadata: res.Metadata, RunnerStatus: res.RunnerStatus, CreatedAt: time.Now().UTC()}
	require.NoError(t, schemas.Validate(schemas.OutputBundle, b))

	// The gate judges the delivered bundle as it judges any.
	v, err := tb.p.Check(context.Background(), diazotroph.Check{WorkOrder: req.WorkOrder, Objective: req.Objective,
		Snapshot: req.Snapshot, Bundle: b})
	require.NoError(t, err)
	require.True(t, v.Pass, v.Reason)
	tb.requireUntouched(t)
}

func passed(c patch.Candidate) []bool {
	var out []bool
	for _, g := range c.Gate {
		out = append(out, g.Passed)
	}
	return out
}

func TestCandidates_OfTwoPassingTheSmallerDiffWins(t *testing.T) {
	t.Parallel()
	tb, req := candidates(t, map[string]string{
		"1": `printf '#!/bin/sh\n# greets\n# by name\necho "hello, $1"\n' > src/greet.sh`,
		"2": greets("hello, $1"),
	})
	cands := runAll(t, tb, req, 2)
	require.Equal(t, 2, cands[0].CommandsPassed)
	require.Equal(t, 2, cands[1].CommandsPassed)
	require.Equal(t, 4, cands[0].DiffLines)
	require.Equal(t, 2, cands[1].DiffLines)
	winner, why, tie := patch.Choose(cands, len(greetGate))
	require.Equal(t, 1, winner)
	require.Nil(t, tie)
	require.Contains(t, why, "Candidate 2 won (the smallest diff of those passing as many gate commands)")
	require.Contains(t, why, "candidate 1: 2 of 2 gate commands passed, 4 changed lines")
}

func TestCandidates_NoPatchIsACandidateWithoutOne(t *testing.T) {
	t.Parallel()
	tb, req := candidates(t, map[string]string{"1": "true", "2": greets("goodbye, $1")})
	cands := runAll(t, tb, req, 2)
	require.Equal(t, domain.RunnerOK, cands[0].RunnerStatus)
	require.Empty(t, cands[0].Patch)
	require.Empty(t, cands[0].PatchSHA256)
	require.Nil(t, cands[0].Gate)
	require.Zero(t, cands[0].CommandsPassed)

	winner, why, _ := patch.Choose(cands, len(greetGate))
	require.Equal(t, 1, winner, "a failing patch beats none")
	require.Contains(t, why, "Candidate 2 won (the only candidate with a patch that applied)")
	require.Contains(t, why, "candidate 1: no patch")

	winner, why, _ = patch.Choose(cands[:1], len(greetGate))
	require.Equal(t, -1, winner)
	require.Contains(t, why, "No candidate produced a patch that applied")

	_, err := tb.p.DeliverCandidate(context.Background(), req, cands[0], "")
	require.ErrorContains(t, err, "has no patch to deliver")
	_, err = tb.p.RunCandidate(context.Background(), req, 0)
	require.ErrorIs(t, err, diazotroph.ErrMisconfigured)
}

func TestChoose_ExactTieGoesToTheEarliestAndIsReported(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ok := func(k, passed, lines int, finished time.Time) patch.Candidate {
		return patch.Candidate{Attempt: k, RunnerStatus: domain.RunnerOK, Patch: "diff", CommandsPassed: passed,
			DiffLines: lines, FinishedAt: finished}
	}
	cands := []patch.Candidate{
		ok(1, 2, 5, at(3)),
		ok(2, 2, 5, at(1)),
		ok(3, 1, 1, at(0)),
		{Attempt: 4, RunnerStatus: domain.RunnerBudgetExhausted, FinishedAt: at(0)},
		ok(5, 2, 5, at(2)),
	}
	winner, why, tie := patch.Choose(cands, 2)
	require.Equal(t, 1, winner)
	require.Equal(t, []int{0, 1, 4}, tie)
	require.Contains(t, why, "Candidate 2 won (the earliest to finish of those exactly tied on gate commands and diff size)")
	require.Contains(t, why, "candidate 4: no patch that applied (BUDGET_EXHAUSTED)")

	// More gate commands passed beats a smaller diff.
	winner, _, tie = patch.Choose([]patch.Candidate{ok(1, 1, 1, at(0)), ok(2, 2, 90, at(5))}, 3)
	require.Equal(t, 1, winner)
	require.Nil(t, tie)
}

func TestSelectCommand_BreaksAnExactTie(t *testing.T) {
	t.Parallel()
	tb, req := candidates(t, map[string]string{"1": greets("hello, $1"), "2": greets("hello, $1"), "3": greets("bye")})
	cands := runAll(t, tb, req, 3)
	winner, _, tie := patch.Choose(cands, len(greetGate))
	require.Equal(t, []int{0, 1}, tie)
	require.Contains(t, []int{0, 1}, winner)

	_, err := tb.p.SelectCommand(context.Background(), req, cands, tie)
	require.ErrorIs(t, err, patch.ErrNoSelectCommand)

	// The judge sees the tied candidates' patches and picks the last.
	tb.settings.SelectCommand = `test "$AZOLLA_CANDIDATES" = "1 2" && grep -q 'hello, ' "$AZOLLA_CANDIDATES_DIR/candidate-2.patch" && ` +
		`test "$(cut -f1 | tr '\n' ' ')" = "1 2 " && echo chosen: && echo 2`
	chosen, err := tb.p.SelectCommand(context.Background(), req, cands, tie)
	require.NoError(t, err)
	require.Equal(t, 1, chosen)
	why := patch.Why(cands, chosen, len(greetGate), "chosen by select_command among the tied")
	require.True(t, strings.HasPrefix(why, "Candidate 2 won (chosen by select_command among the tied)"), why)

	for cmd, want := range map[string]string{
		"echo 3":         `answered "3", which is not one of the tied attempts 1, 2`,
		"echo two":       `answered "two"`,
		"echo 1; exit 4": "exited with status 4",
	} {
		tb.settings.SelectCommand = cmd
		_, err := tb.p.SelectCommand(context.Background(), req, cands, tie)
		require.ErrorContains(t, err, want, cmd)
		require.ErrorContains(t, err, "select_command "+`"`+cmd+`"`)
	}
}

func TestDiffLines_CountsChangedLinesNotWhitespace(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		diff string
		want int
	}{
		"plain":     {"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n", 2},
		"blank":     {"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1,3 @@\n a\n+\n+   \n", 0},
		"reindent":  {"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b  c\n+\tb c\n", 0},
		"two files": {"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1 @@\n+z\n", 3},
		"binary":    {"diff --git a/i b/i\nindex 1..2 100644\nGIT binary patch\nliteral 3\nKcmZ>\n", 1},
		"dashes":    {"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n---- x\n++++ x\n", 2},
	} {
		require.Equal(t, tc.want, patch.DiffLines(tc.diff), name)
	}
}

// The winner is delivered from its patch alone: a worker whose own
// generator is not the one the candidate ran with (a remote worker ran
// it) delivers it all the same.
func TestDeliverCandidate_NeedsNotTheCandidatesGenerator(t *testing.T) {
	t.Parallel()
	tb, req := candidates(t, map[string]string{"1": greets("hello, $1")})
	cands := runAll(t, tb, req, 1)
	local := tb.newPatch(nil) // static only: "command" is not configured here
	res, err := local.DeliverCandidate(context.Background(), req, cands[0], "the only one")
	require.NoError(t, err)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus, res.Notes)
	require.Equal(t, cands[0].Patch, res.Content)
	require.Equal(t, "command", res.Metadata.Generator, "the candidate's generator, as it ran")
}
