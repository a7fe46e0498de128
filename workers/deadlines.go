package workers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/workflows"
)

// What ApplyDeadlineSchedule did.
const (
	ScheduleCreated   = "created"
	ScheduleUpdated   = "updated"
	ScheduleUnchanged = "unchanged"
)

// minCatchupWindow is the least catch-up window the server accepts.
const minCatchupWindow = 10 * time.Second

// DeadlineMonitorWorkflowID is the id of the monitor runs the Schedule
// starts (the server appends each run's scheduled time).
const DeadlineMonitorWorkflowID = "deadline-monitor"

// deadlineSchedule is the Schedule the configuration asks for: every
// deadlines.interval, DeadlineMonitorWorkflow on deadlines.task_queue,
// overlapping runs skipped, a missed run caught up within about one
// interval.
func deadlineSchedule(cfg config.Config) (client.ScheduleSpec, *client.ScheduleWorkflowAction, client.SchedulePolicies) {
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: cfg.Deadlines.Interval}}}
	action := &client.ScheduleWorkflowAction{ID: DeadlineMonitorWorkflowID, Workflow: workflows.DeadlineMonitorWorkflowName,
		TaskQueue: cfg.Deadlines.TaskQueue, WorkflowRunTimeout: cfg.Deadlines.Interval + 5*time.Minute}
	policy := client.SchedulePolicies{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: max(cfg.Deadlines.Interval, minCatchupWindow)}
	return spec, action, policy
}

// ApplyDeadlineSchedule makes the deadline monitor's Schedule (fixed id
// workflows.DeadlineScheduleID) match the configuration: it creates it, or,
// when it exists, describes it and updates what differs. It returns
// ScheduleCreated, ScheduleUpdated or ScheduleUnchanged.
func ApplyDeadlineSchedule(ctx context.Context, c client.Client, cfg config.Config) (string, error) {
	spec, action, policy := deadlineSchedule(cfg)
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: workflows.DeadlineScheduleID, Spec: spec,
		Action: action, Overlap: policy.Overlap, CatchupWindow: policy.CatchupWindow,
		// The first pass at once, not an interval after the first start.
		TriggerImmediately: true,
		Note:               "azolla deadline monitor: writes one OVERDUE pause per objective and deadline"})
	if err == nil {
		return ScheduleCreated, nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return "", fmt.Errorf("create schedule %s: %w", workflows.DeadlineScheduleID, err)
	}
	result := ScheduleUnchanged
	h := c.ScheduleClient().GetHandle(ctx, workflows.DeadlineScheduleID)
	err = h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
		s := in.Description.Schedule
		if scheduleMatches(s, spec, action, policy) {
			return nil, temporal.ErrSkipScheduleUpdate
		}
		s.Spec, s.Action, s.Policy = &spec, action, &policy
		result = ScheduleUpdated
		return &client.ScheduleUpdate{Schedule: &s}, nil
	}})
	if err != nil {
		return "", fmt.Errorf("update schedule %s: %w", workflows.DeadlineScheduleID, err)
	}
	return result, nil
}

// scheduleMatches says whether the described schedule s already is the
// configured one.
func scheduleMatches(s client.Schedule, spec client.ScheduleSpec, want *client.ScheduleWorkflowAction,
	policy client.SchedulePolicies) bool {
	got, ok := s.Action.(*client.ScheduleWorkflowAction)
	if !ok || s.Spec == nil || s.Policy == nil {
		return false
	}
	name, _ := got.Workflow.(string)
	return name == workflows.DeadlineMonitorWorkflowName && got.TaskQueue == want.TaskQueue &&
		got.WorkflowRunTimeout == want.WorkflowRunTimeout &&
		slices.Equal(s.Spec.Intervals, spec.Intervals) && len(s.Spec.Calendars) == 0 && len(s.Spec.CronExpressions) == 0 &&
		s.Policy.Overlap == policy.Overlap && s.Policy.CatchupWindow == policy.CatchupWindow
}
