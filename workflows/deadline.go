package workflows

import (
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
)

// deadlinePage bounds the objectives one ScanDeadlines reads.
const deadlinePage = 500

// scheduledStartTime is the search attribute a Temporal Schedule sets on
// the runs it starts: the time the run was due, which a backfill sets in
// the past.
var scheduledStartTime = temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime")

// DeadlineMonitorWorkflow is one pass of the deadline monitor (docs/protocol/tasks.md,
// track C), started by the Schedule DeadlineScheduleID on its own task
// queue: it scans every non-DONE objective as of the run's scheduled time
// (so a backfill judges as the scheduled run would have), writing each
// overdue objective's OVERDUE pause once, and signals Overdue to the
// lifecycle of each objective this run found newly overdue. A lifecycle
// that cannot be signalled (closed, absent) is logged and skipped: the
// pause is the record.
func DeadlineMonitorWorkflow(ctx workflow.Context) (DeadlineMonitorResult, error) {
	asOf := workflow.GetInfo(ctx).WorkflowStartTime
	if t, ok := workflow.GetTypedSearchAttributes(ctx).GetTime(scheduledStartTime); ok && !t.IsZero() {
		asOf = t
	}
	asOf = asOf.UTC()
	res := DeadlineMonitorResult{AsOf: asOf.Format(time.RFC3339)}
	logger := log.With(workflow.GetLogger(ctx), "as_of", res.AsOf)

	actx := withTrackOptions(ctx)
	var after domain.Cursor
	for {
		var page activities.DeadlineScanResult
		if err := workflow.ExecuteActivity(actx, tracks.ScanDeadlines, activities.DeadlineScanInput{
			AsOf: asOf, After: after, Limit: deadlinePage}).Get(ctx, &page); err != nil {
			return res, err
		}
		res.Scanned += page.Scanned
		for _, o := range page.Overdue {
			res.Overdue = append(res.Overdue, o.ObjectiveID)
			if o.Created {
				res.NewlyOverdue = append(res.NewlyOverdue, o.ObjectiveID)
			}
		}
		if page.Next == nil {
			break
		}
		after = *page.Next
	}

	signals := make([]workflow.Future, len(res.NewlyOverdue))
	for i, id := range res.NewlyOverdue {
		signals[i] = workflow.SignalExternalWorkflow(ctx, ObjectiveWorkflowID(id), "", Overdue, nil)
	}
	for i, f := range signals {
		if err := f.Get(ctx, nil); err != nil {
			logger.Warn("overdue signal not delivered; the OVERDUE pause stands", "objective_id", res.NewlyOverdue[i], "error", err)
		}
	}
	logger.Info("deadline scan done", "scanned", res.Scanned, "overdue", len(res.Overdue), "newly_overdue", len(res.NewlyOverdue))
	return res, nil
}
