package patch_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
)

// executed runs a good patch and returns what the gate would be given.
func executed(t *testing.T, tb *testBundle) diazotroph.Check {
	t.Helper()
	req := tb.request(t, "gated", goodPatch)
	res := execute(t, tb, req)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	return diazotroph.Check{WorkOrder: req.WorkOrder, Objective: req.Objective, Snapshot: req.Snapshot,
		Bundle: domain.OutputBundle{WorkOrderID: req.WorkOrder.WorkOrderID, Title: res.Title, Content: res.Content,
			Notes: res.Notes, Metadata: res.Metadata, RunnerStatus: res.RunnerStatus}}
}

func TestCheck_WithoutGateCommandsPasses(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	v, err := tb.p.Check(context.Background(), executed(t, tb))
	require.NoError(t, err)
	require.True(t, v.Pass)
	require.Empty(t, v.Reason)
}

func TestCheck_RunsGateCommandsInTheWorkspace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		commands []string
		budget   time.Duration
		pass     bool
		want     []string
	}{
		{"all pass", []string{`grep -q 'hello, ${1' src/greet.sh`, `test "$AZOLLA_WORK_ORDER_ID" = wo-gated-2`}, time.Minute, true,
			[]string{`gate commands passed: "grep -q 'hello, ${1' src/greet.sh", "test \"$AZOLLA_WORK_ORDER_ID\" = wo-gated-2"`}},
		{"second fails", []string{"true", "echo compiling; echo 'FAIL: TestGreet' >&2; exit 3", "touch never-run"}, time.Minute, false,
			[]string{`gate command "echo compiling; echo 'FAIL: TestGreet' >&2; exit 3" exited with status 3`,
				"after", "\noutput tail:\ncompiling\nFAIL: TestGreet"}},
		{"budget", []string{"echo started; sleep 30"}, 300 * time.Millisecond, false,
			[]string{`gate command "echo started; sleep 30" did not finish within the gate budget of 300ms`, "started"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t)
			tb.settings.GateCommands, tb.settings.GateBudget = tc.commands, tc.budget
			c := executed(t, tb)
			v, err := tb.p.Check(context.Background(), c)
			require.NoError(t, err)
			require.Equal(t, tc.pass, v.Pass, v.Reason)
			for _, w := range tc.want {
				require.Contains(t, v.Reason, w)
			}
			require.NoFileExists(t, tb.p.Workspace(c.WorkOrder.WorkOrderID)+"/never-run")
		})
	}
}

func TestCheck_RebuildsTheWorkspaceFromTheBundleOnAnotherMachine(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.settings.GateCommands, tb.settings.GateBudget = []string{`grep -q 'hello, ${1' src/greet.sh`}, time.Minute
	c := executed(t, tb)
	// The gate runs where the runner's workspace is not.
	require.NoError(t, os.RemoveAll(tb.p.Workspace(c.WorkOrder.WorkOrderID)))
	v, err := tb.p.Check(context.Background(), c)
	require.NoError(t, err)
	require.True(t, v.Pass, v.Reason)

	c.Bundle.Content = strings.Replace(c.Bundle.Content, " Hello.", " Goodbye.", 1)
	require.NoError(t, os.RemoveAll(tb.p.Workspace(c.WorkOrder.WorkOrderID)))
	v, err = tb.p.Check(context.Background(), c)
	require.NoError(t, err)
	require.False(t, v.Pass)
	require.Contains(t, v.Reason, "the bundle's diff does not apply")
}
