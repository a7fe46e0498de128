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

// heavySteps are the activities that wait for a run slot
// (docs/production.md#run-slots).
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
	for _, pa := range d.GetPendingActivities() {
		if slices.Contains(heavySteps, pa.GetActivityType().GetName()) &&
			pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
			queued = true
		}
	}
	if !queued {
		return false, 0, nil
	}
	q, err := s.Client.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace: namespace, TaskQueue: &taskqueuepb.TaskQueue{Name: workflows.RunTaskQueue(taskQueue)},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY, ReportStats: true})
	if err != nil {
		return true, 0, fmt.Errorf("describe task queue %s: %w", workflows.RunTaskQueue(taskQueue), err)
	}
	return true, q.GetStats().GetApproximateBacklogCount(), nil
}
