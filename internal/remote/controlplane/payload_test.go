package controlplane_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/remote/controlplane"
)

func testRequest() diazotroph.Request {
	return diazotroph.Request{
		WorkOrder: domain.WorkOrder{WorkOrderID: "wo-1", ObjectiveID: "obj-1", DiazotrophType: "COMMAND_DIAZOTROPH",
			ContextSnapshotID: "snap-1", BranchName: "azolla/obj-1/1", BudgetMS: 1500, Status: domain.WorkOrderCreated},
		Snapshot:  domain.ContextSnapshot{ContextSnapshotID: "snap-1", ObjectiveID: "obj-1", FullPromptText: "do it"},
		Objective: domain.Objective{ObjectiveID: "obj-1", Title: "t", Repository: "r"},
		Budget:    1500 * time.Millisecond,
	}
}

func TestWorkPayload_RoundTripsTheRequest(t *testing.T) {
	t.Parallel()
	req := testRequest()
	b, err := json.Marshal(controlplane.NewWorkPayload(req))
	require.NoError(t, err)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &raw))
	require.ElementsMatch(t, []string{"work_order", "context_snapshot", "objective", "budget_ms"}, payloadKeys(raw))

	var p controlplane.WorkPayload
	require.NoError(t, json.Unmarshal(b, &p))
	require.NoError(t, p.Validate())
	require.Equal(t, req, p.Request())
}

func TestWorkPayload_ValidateNamesEveryProblem(t *testing.T) {
	t.Parallel()
	p := controlplane.NewWorkPayload(testRequest())
	p.WorkOrder.WorkOrderID = ""
	p.WorkOrder.DiazotrophType = "command"
	p.BudgetMS = 0
	p.Objective.ObjectiveID = "obj-2"
	p.ContextSnapshot.ContextSnapshotID = "snap-2"
	err := p.Validate()
	require.Error(t, err)
	for _, want := range []string{"work_order_id", `"command"`, "budget_ms 0", `"obj-2"`, `"snap-2"`} {
		require.Contains(t, err.Error(), want)
	}
}

func TestWorkResult_TitleIsOneSafeLine(t *testing.T) {
	t.Parallel()
	r := controlplane.NewWorkResult(diazotroph.Result{Title: "  first\n\n\x1b]0;pwned\x07 second \n", Content: "c\n",
		Notes: "n\nm", Metadata: domain.BundleMetadata{BranchName: "b"}, RunnerStatus: domain.RunnerOK})
	require.Equal(t, `first; \x1b]0;pwned\x07 second`, r.Title)
	require.Equal(t, "c\n", r.Content)
	require.NoError(t, r.Validate())

	// A result from the wire is made safe again when it becomes a bundle.
	r.Title = "a\nb"
	now := time.Unix(1700000000, 0).UTC()
	require.Equal(t, &domain.OutputBundle{WorkOrderID: "wo-1", Title: "a; b", Content: "c\n", Notes: "n\nm",
		Metadata: domain.BundleMetadata{BranchName: "b"}, RunnerStatus: domain.RunnerOK, CreatedAt: now},
		r.Bundle("wo-1", now))

	b, err := json.Marshal(r)
	require.NoError(t, err)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &raw))
	require.ElementsMatch(t, []string{"title", "content", "notes", "metadata", "runner_status"}, payloadKeys(raw))

	r.RunnerStatus = "DONE"
	require.ErrorContains(t, r.Validate(), `"DONE"`)
}

func payloadKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
