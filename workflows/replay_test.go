package workflows_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/workflows"
)

// Histories recorded from real runs on the embedded server (make
// record-histories) must replay on the current code: a change that breaks
// determinism for running lifecycles fails here.
func TestReplay_RecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	scenarios := map[string]bool{}
	for _, f := range files {
		scenarios[filepath.Base(f)] = true
	}
	for _, want := range []string{"pass_run1.json", "gate_fail_retry_run1.json", "gate_fail_retry_run2.json",
		"blocked_unblock_run1.json", "blocked_unblock_run2.json", "reject_run1.json"} {
		require.True(t, scenarios[want], "missing recorded history %s: run make record-histories", want)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.ObjectiveWorkflow, workflow.RegisterOptions{Name: workflows.ObjectiveWorkflowName})
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}
