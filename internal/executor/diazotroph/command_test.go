package diazotroph_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/schemas"
)

// newRequest returns a schema-valid request for objective obj-1.
func newRequest(prompt string, budget time.Duration) diazotroph.Request {
	return diazotroph.Request{
		WorkOrder: domain.WorkOrder{
			WorkOrderID: "wo-1", EventID: "evt-1", ObjectiveID: "obj-1",
			DiazotrophType: diazotroph.CommandType, ContextSnapshotID: "ctx-1",
			BranchName: "azolla/obj-1", BudgetMS: budget.Milliseconds(), Status: domain.WorkOrderCreated,
		},
		Snapshot: domain.ContextSnapshot{
			ContextSnapshotID: "ctx-1", ObjectiveID: "obj-1", FullPromptText: prompt,
			Metadata: domain.SnapshotMetadata{BaseBranch: "main", CommitSHA: strings.Repeat("ab", 20)},
		},
		Objective: domain.Objective{ObjectiveID: "obj-1", Title: "Add retry to the fetcher"},
		Budget:    budget,
	}
}

// execute runs command line run in a fresh temp dir with a 30s budget and
// checks that the result is a valid output bundle.
func execute(t *testing.T, run, prompt string) diazotroph.Result {
	t.Helper()
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: run, Dir: t.TempDir()})
	res, err := c.Execute(t.Context(), newRequest(prompt, 30*time.Second))
	require.NoError(t, err)
	requireValidBundle(t, res)
	return res
}

// requireValidBundle checks res against schemas/output_bundle.schema.json, as
// the store will before persisting it.
func requireValidBundle(t *testing.T, res diazotroph.Result) {
	t.Helper()
	require.NoError(t, schemas.Validate(schemas.OutputBundle, domain.OutputBundle{
		WorkOrderID: "wo-1", Title: res.Title, Content: res.Content, Notes: res.Notes,
		Metadata: res.Metadata, RunnerStatus: res.RunnerStatus, CreatedAt: time.Now().UTC(),
	}))
}

func TestCommand_Type(t *testing.T) {
	t.Parallel()
	require.Equal(t, "COMMAND_DIAZOTROPH", diazotroph.NewCommand(diazotroph.CommandOptions{Run: "true"}).Type())
}

func TestCommand_PromptArrivesOnStdin(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("larger than any pipe buffer ✓\n", 40_000) // ~1.2 MB
	tests := []struct {
		name, run, prompt, want string
	}{
		{"small prompt", "cat", "fix the fetcher\nsecond line ✓\n", "fix the fetcher\nsecond line ✓\n"},
		{"empty prompt", "cat", "", ""},
		{"prompt larger than the pipe buffer", "cat", big, big},
		{"command that never reads its stdin", "echo ignored", big, "ignored\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := execute(t, tt.run, tt.prompt)
			require.Equal(t, domain.RunnerOK, res.RunnerStatus)
			require.Equal(t, tt.want, res.Content)
		})
	}
}

func TestCommand_SetsAzollaEnvironment(t *testing.T) {
	t.Parallel()
	vars := []string{
		"AZOLLA_OBJECTIVE_ID", "AZOLLA_WORK_ORDER_ID", "AZOLLA_EVENT_ID", "AZOLLA_CONTEXT_SNAPSHOT_ID",
		"AZOLLA_BRANCH_NAME", "AZOLLA_BUDGET_MS", "AZOLLA_BASE_BRANCH", "AZOLLA_COMMIT_SHA", "EXTRA", "PATH",
	}
	var run strings.Builder
	for _, v := range vars {
		fmt.Fprintf(&run, `echo "%s=$%s"; `, v, v)
	}
	// Configuration cannot name an AZOLLA_* variable (sandbox.CheckName):
	// the workorder's are azolla's alone.
	c := diazotroph.NewCommand(diazotroph.CommandOptions{
		Executor: sandboxtest.Unconfined(t, sandbox.Policy{Env: map[string]string{"EXTRA": "from options"}}),
		Run:      run.String(), Dir: t.TempDir(),
	})
	res, err := c.Execute(t.Context(), newRequest("", 1500*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, strings.Join([]string{
		"AZOLLA_OBJECTIVE_ID=obj-1",
		"AZOLLA_WORK_ORDER_ID=wo-1",
		"AZOLLA_EVENT_ID=evt-1",
		"AZOLLA_CONTEXT_SNAPSHOT_ID=ctx-1",
		"AZOLLA_BRANCH_NAME=azolla/obj-1",
		"AZOLLA_BUDGET_MS=1500",
		"AZOLLA_BASE_BRANCH=main",
		"AZOLLA_COMMIT_SHA=" + strings.Repeat("ab", 20),
		"EXTRA=from options",
		"PATH=" + os.Getenv("PATH"), // a base variable, from the worker's environment
	}, "\n")+"\n", res.Content)
}

func TestCommand_CreatesMissingWorkingDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data", "work")
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: "pwd -P", Dir: dir})
	res, err := c.Execute(t.Context(), newRequest("", 30*time.Second))
	require.NoError(t, err)
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.True(t, st.IsDir())
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	require.Equal(t, real+"\n", res.Content)
}

func TestCommand_ExitOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		run         string
		wantContent string
		// wantNotes matches the whole of the notes.
		wantNotes string
	}{
		{
			name: "exit 0", run: "printf 'out\\n\\n'",
			wantContent: "out\n\n", wantNotes: `^command exited 0 after [0-9.]+m?s$`,
		},
		{
			name: "exit 0 with stderr", run: "echo out; echo warn >&2; echo again >&2",
			wantContent: "out\n", wantNotes: `^command exited 0 after [0-9.]+m?s\nstderr:\nwarn\nagain$`,
		},
		{
			name: "non-zero exit", run: "echo partial; echo boom >&2; exit 3",
			wantContent: "partial\n", wantNotes: `^command exited with status 3 after [0-9.]+m?s\nstderr:\nboom$`,
		},
		{
			name: "killed by a signal", run: "echo before; kill -TERM $$; echo after",
			wantContent: "before\n", wantNotes: `^command killed by signal 15 \(terminated\) after [0-9.]+m?s$`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := execute(t, tt.run, "")
			// The gate judges the exit status; the run itself went fine.
			require.Equal(t, domain.RunnerOK, res.RunnerStatus)
			require.Equal(t, tt.wantContent, res.Content)
			require.Regexp(t, regexp.MustCompile(tt.wantNotes), res.Notes)
		})
	}
}

func TestCommand_NotesQuoteOnlyTheTailOfStderr(t *testing.T) {
	t.Parallel()
	res := execute(t, "head -c 10000 /dev/zero | tr '\\0' x >&2; echo END >&2; exit 1", "")
	require.Contains(t, res.Notes, "\nstderr (last 2048 of 10004 bytes):\n")
	require.True(t, strings.HasSuffix(res.Notes, "\n"+strings.Repeat("x", 2044)+"END"), "notes end: %q", res.Notes[max(0, len(res.Notes)-80):])
	require.Less(t, len(res.Notes), 2300)
}

func TestCommand_TruncatesOversizeStdout(t *testing.T) {
	t.Parallel()
	size := diazotroph.MaxContentBytes + 1000
	res := execute(t, fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", size), "")
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Len(t, res.Content, diazotroph.MaxContentBytes)
	require.Equal(t, strings.Repeat("a", diazotroph.MaxContentBytes), res.Content)
	require.Contains(t, res.Notes, fmt.Sprintf("stdout truncated to %d of %d bytes", diazotroph.MaxContentBytes, size))
}

func TestCommand_TruncationNeverSplitsARune(t *testing.T) {
	t.Parallel()
	// MaxContentBytes is 3k+1, so a stream of 3-byte runes reaches the cap
	// one byte into a rune.
	require.Equal(t, 1, diazotroph.MaxContentBytes%3)
	res := execute(t, fmt.Sprintf(`yes '✓' | tr -d '\n' | head -c %d`, diazotroph.MaxContentBytes+3000), "")
	require.Equal(t, strings.Repeat("✓", diazotroph.MaxContentBytes/3), res.Content)
	require.Contains(t, res.Notes, "stdout truncated")
	require.NotContains(t, res.Notes, "replaced", "a cut rune must not count as invalid output")
}

func TestCommand_ReplacesInvalidUTF8AndNUL(t *testing.T) {
	t.Parallel()
	res := execute(t, `printf 'a\377b\000c'; printf 'e\377\000' >&2`, "")
	require.Equal(t, "a\uFFFDb\uFFFDc", res.Content)
	require.Contains(t, res.Notes, "invalid UTF-8 and NUL bytes in stdout replaced by U+FFFD")
	require.True(t, strings.HasSuffix(res.Notes, "\nstderr:\ne\uFFFD\uFFFD"), "notes: %q", res.Notes)
}

func TestCommand_TitleAndMetadata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, objectiveTitle, want string
	}{
		{"objective title", "Add retry to the fetcher", "COMMAND_DIAZOTROPH: Add retry to the fetcher"},
		{"whitespace collapsed to one line", "  Add\nretry\t now ", "COMMAND_DIAZOTROPH: Add retry now"},
		{"no title names the workorder", "", "COMMAND_DIAZOTROPH: workorder wo-1"},
		{"long title bounded", strings.Repeat("é", 500), "COMMAND_DIAZOTROPH: " + strings.Repeat("é", 199) + "…"},
	}
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: "true", Dir: t.TempDir()})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := newRequest("", 30*time.Second)
			req.Objective.Title = tt.objectiveTitle
			res, err := c.Execute(t.Context(), req)
			require.NoError(t, err)
			require.Equal(t, tt.want, res.Title)
			require.Equal(t, domain.BundleMetadata{BranchName: "azolla/obj-1"}, res.Metadata)
			requireValidBundle(t, res)
		})
	}
}

func TestCommand_MisconfigurationIsAnError(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	tests := []struct {
		name    string
		opts    diazotroph.CommandOptions
		budget  time.Duration
		wantErr string
	}{
		{"no command", diazotroph.CommandOptions{Run: "  "}, time.Second, "no command configured"},
		{"zero budget", diazotroph.CommandOptions{Run: "true"}, 0, "no budget"},
		{"negative budget", diazotroph.CommandOptions{Run: "true"}, -time.Second, "no budget"},
		{"working directory under a file", diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}), Run: "true", Dir: filepath.Join(file, "work")}, time.Second, "create working directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := diazotroph.NewCommand(tt.opts).Execute(t.Context(), newRequest("", tt.budget))
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, err, "wo-1")
			require.Zero(t, res)
		})
	}
}

func TestCommand_ConcurrentExecutesKeepTheirOwnOutput(t *testing.T) {
	t.Parallel()
	c := diazotroph.NewCommand(diazotroph.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}),
		Run: `cat; echo "$AZOLLA_WORK_ORDER_ID" >&2`, Dir: t.TempDir(),
	})
	const n = 16
	results := make([]diazotroph.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req := newRequest(fmt.Sprintf("prompt %d\n", i), 30*time.Second)
			req.WorkOrder.WorkOrderID = fmt.Sprintf("wo-%d", i)
			results[i], errs[i] = c.Execute(t.Context(), req)
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, fmt.Sprintf("prompt %d\n", i), results[i].Content)
		require.True(t, strings.HasSuffix(results[i].Notes, fmt.Sprintf("\nstderr:\nwo-%d", i)), results[i].Notes)
	}
}
