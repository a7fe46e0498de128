package workflows_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// lockedBuffer is a log sink the workflow's coroutines may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// The lifecycle's own log lines carry the ids they are about, so a log
// search for an objective or a workorder finds every line of it.
func TestObjective_LogsCarryTheObjectiveAndWorkOrderIDs(t *testing.T) {
	t.Parallel()
	var sink lockedBuffer
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewJSONHandler(&sink, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.ObjectiveWorkflow, workflow.RegisterOptions{Name: workflows.ObjectiveWorkflowName})
	registerActivities(env)
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return().Maybe()
	env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).Return(readied(eventA), nil).Once()
	env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
	env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(passed(), nil).Once()
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.Approve, workflows.Decision{By: "ana"}) }, time.Minute)
	env.ExecuteWorkflow(workflows.ObjectiveWorkflowName, workflows.ObjectiveInput{ObjectiveID: objID})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	seen := map[string]map[string]any{}
	for _, l := range sink.lines() {
		if msg, _ := l["msg"].(string); msg != "" {
			seen[msg] = l
		}
	}
	for msg, wantWorkOrder := range map[string]bool{"objective approved": false, "running workorder": true, "workorder gated": true} {
		l, ok := seen[msg]
		require.True(t, ok, "no %q line in %v", msg, seen)
		require.Equal(t, objID, l["objective_id"], msg)
		if wantWorkOrder {
			require.Equal(t, woA.WorkOrderID, l["work_order_id"], msg)
		}
	}
}
