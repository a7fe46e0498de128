package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/azolla/azolla/workflows"
)

// recordEnv names the directory `make record-histories` records into.
const recordEnv = "AZOLLA_RECORD_HISTORIES"

// recordHistories writes every run of the objective's lifecycle, oldest
// first, as <dir>/<scenario>_run<N>.json for the replay tests, when
// AZOLLA_RECORD_HISTORIES names a directory.
func recordHistories(t *testing.T, b *bundle, scenario, objectiveID string) {
	dir := os.Getenv(recordEnv)
	if dir == "" {
		return
	}
	ctx := context.Background()
	id := workflows.ObjectiveWorkflowID(objectiveID)
	var runs []string
	require.Eventually(t, func() bool {
		resp, err := b.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf(`WorkflowId = %q AND ExecutionStatus != "Running"`, id)})
		if err != nil {
			return false
		}
		runs = runs[:0]
		execs := resp.Executions
		slices.SortFunc(execs, func(a, b *workflowpb.WorkflowExecutionInfo) int {
			return a.GetStartTime().AsTime().Compare(b.GetStartTime().AsTime())
		})
		for _, e := range execs {
			runs = append(runs, e.GetExecution().GetRunId())
		}
		return len(runs) > 0
	}, 30*time.Second, 200*time.Millisecond)
	for i, runID := range runs {
		b.recordHistory(t, fmt.Sprintf("%s_run%d", scenario, i+1), id, runID)
	}
}

// recordHistory writes the workflow run's history as it stands as
// <dir>/<name>.json, when AZOLLA_RECORD_HISTORIES names a directory.
func (b *bundle) recordHistory(t *testing.T, name, workflowID, runID string) {
	dir := os.Getenv(recordEnv)
	if dir == "" {
		return
	}
	ctx := context.Background()
	var events []*historypb.HistoryEvent
	it := b.client.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		events = append(events, ev)
	}
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&historypb.History{Events: events})
	require.NoError(t, err)
	path := filepath.Join(dir, name+".json")
	require.NoError(t, os.WriteFile(path, append(raw, '\n'), 0o644))
	t.Logf("recorded %s (%d events)", path, len(events))
}
