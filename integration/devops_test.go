package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// azolla dev serves the worker's ops endpoints, with the SDK's latencies as
// histograms, and keeps its info log out of the terminal, in dev.log.
func TestDev_ServesOpsEndpointsAndLogsToItsFile(t *testing.T) {
	t.Parallel()
	d := startDev(t, "AZOLLA_LOG_LEVEL=info")
	base := "http://" + d.ops
	var last atomic.Value
	last.Store("no answer")
	if !assert.Eventually(t, func() bool {
		code, body := httpGet(t, base+"/readyz")
		last.Store(fmt.Sprintf("%d %s", code, strings.TrimSpace(body)))
		return code == http.StatusOK
	}, time.Minute, 100*time.Millisecond) {
		t.Fatalf("/readyz never said ready; its last answer: %s\nazolla dev said:\n%s", last.Load(), d.out.String())
	}
	require.Eventually(t, func() bool {
		_, body := httpGet(t, base+"/metrics")
		return strings.Contains(body, "temporal_request_latency_seconds_bucket{") && strings.Contains(body, "azolla_objectives{")
	}, time.Minute, 200*time.Millisecond, "/metrics lacks the SDK's latency histogram or azolla's series")

	log, err := os.ReadFile(filepath.Join(d.dir, "dev.log"))
	require.NoError(t, err)
	require.Contains(t, string(log), "level=INFO")
	require.Contains(t, d.out.String(), "azolla dev is running.")
	require.Contains(t, d.out.String(), "/metrics")
	require.NotContains(t, d.out.String(), "level=INFO", "info lines stay in dev.log")
}

// The deadline monitor's first pass runs when its Schedule is created, and
// the Web UI query azolla dev prints leaves its passes out of the list.
func TestDev_WorkListQueryLeavesTheDeadlineMonitorOut(t *testing.T) {
	t.Parallel()
	d := startDev(t)
	ctx := context.Background()
	list := func(query string) []string {
		resp, err := d.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		require.NoError(t, err)
		var types []string
		for _, e := range resp.GetExecutions() {
			types = append(types, e.GetType().GetName())
		}
		return types
	}
	monitor := fmt.Sprintf("WorkflowType = %q", workflows.DeadlineMonitorWorkflowName)
	require.Eventually(t, func() bool { return len(list(monitor)) > 0 }, time.Minute, 200*time.Millisecond,
		"the deadline monitor's first pass never ran")
	id := uniqueID("worklist")
	_, err := d.starter.Create(ctx, &domain.Objective{ObjectiveID: id, ObjectiveType: "TICKET", Title: "Listed",
		AcceptanceCriteria: []string{"it is in the list"}, Status: domain.StatusNew, Urgency: "NORMAL"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return slices.Contains(list(workflows.WorkListQuery), workflows.ObjectiveWorkflowName) },
		time.Minute, 200*time.Millisecond, "the objective's lifecycle is not in the list")
	require.NotContains(t, list(workflows.WorkListQuery), workflows.DeadlineMonitorWorkflowName)
	require.Contains(t, d.out.String(), "?query="+url.QueryEscape(workflows.WorkListQuery))
}

func httpGet(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
