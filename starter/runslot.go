package starter

import (
	"context"
	"fmt"
	"slices"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/azolla/azolla/workflows"
)

// heavySteps are the activities that may wait for a run slot
// (docs/production.md#run-slots): a gate only when it runs gate commands,
// which its task queue tells.
var heavySteps = []string{"Run", "RunCandidate", "Gate"}

// RunSlot says whether objective id's lifecycle waits for a run slot (a
// heavy step scheduled and not started) and, when it does, how many runs
// wait on the run task queue of taskQueue in namespace in all, as
// Temporal counts them (an approximate backlog, whatever their order).
func (s *Starter) RunSlot(ctx context.Context, namespace, taskQueue, objectiveID string) (queued bool, waiting int64, err error) {
	d, err := s.Client.DescribeWorkflowExecution(ctx, workflows.ObjectiveWorkflowID(objectiveID), "")
	if err != nil {
		return false, 0, fmt.Errorf("describe the lifecycle of %s: %w", objectiveID, err)
	}
	runs := workflows.RunTaskQueue(taskQueue)
	for _, pa := range d.GetPendingActivities() {
		// A server that names no task queue for it leaves the type to tell.
		q := pa.GetActivityOptions().GetTaskQueue().GetName()
		if slices.Contains(heavySteps, pa.GetActivityType().GetName()) && (q == "" || q == runs) &&
			pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
			queued = true
		}
	}
	if !queued {
		return false, 0, nil
	}
	q, err := s.Client.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace: namespace, TaskQueue: &taskqueuepb.TaskQueue{Name: runs},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY, ReportStats: true})
	if err != nil {
		return true, 0, fmt.Errorf("describe task queue %s: %w", runs, err)
	}
	return true, q.GetStats().GetApproximateBacklogCount(), nil
}
