package activities_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/store/storetest"
)

// Inside an activity, the steps' log lines carry the objective and the
// workorder they work on.
func TestRun_LogsCarryTheIDs(t *testing.T) {
	t.Parallel()
	tb := setup(t, storetest.Backends()[0])
	wo := tb.scheduled(t, "obj-1")
	var sink proctest.Buffer
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewJSONHandler(&sink, nil))))
	env := suite.NewTestActivityEnvironment()
	tb.register(env)
	_, err := env.ExecuteActivity(tb.steps.Run, activities.RunInput{WorkOrderID: wo.WorkOrderID})
	require.NoError(t, err)
	_, err = env.ExecuteActivity(tb.steps.Gate, activities.GateInput{WorkOrderID: wo.WorkOrderID})
	require.NoError(t, err)

	found := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(sink.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		msg, _ := m["msg"].(string)
		if msg == "running workorder" || msg == "workorder executed" || msg == "workorder gated" {
			require.Equal(t, "obj-1", m["objective_id"], msg)
			require.Equal(t, wo.WorkOrderID, m["work_order_id"], msg)
			found[msg] = true
		}
	}
	require.Len(t, found, 3, "lines seen: %s", sink.String())
}
