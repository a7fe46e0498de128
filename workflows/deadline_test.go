package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

var (
	scheduledAt = time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)
	startedAt   = time.Date(2026, 3, 9, 6, 0, 7, 0, time.UTC)
)

// deadlineBundle is one DeadlineMonitorWorkflow under test; signalled lists
// the lifecycles signalled Overdue.
type deadlineBundle struct {
	harness
	mu        sync.Mutex
	signalled []string
}

func setupDeadline(t *testing.T) *deadlineBundle {
	t.Helper()
	t.Parallel()
	b := &deadlineBundle{harness: newHarness(t, workflows.DeadlineMonitorWorkflow, workflows.DeadlineMonitorWorkflowName)}
	b.env.SetStartTime(startedAt)
	return b
}

// page expects the scan page starting after, as of asOf, answering res.
func (b *deadlineBundle) page(asOf time.Time, after domain.Cursor, res activities.DeadlineScanResult) {
	b.env.OnActivity(tracks.ScanDeadlines, mock.Anything, mock.MatchedBy(func(in activities.DeadlineScanInput) bool {
		return in.AsOf.Equal(asOf) && in.After == after && in.Limit == 500
	})).Return(res, nil).Once()
}

// signals expects the Overdue signal to objective id's lifecycle, failing
// with err.
func (b *deadlineBundle) signals(id string, err error) {
	b.env.OnSignalExternalWorkflow(mock.Anything, workflows.ObjectiveWorkflowID(id), "", workflows.Overdue, mock.Anything).Return(
		func(_, workflowID, _, _ string, _ any) error {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.signalled = append(b.signalled, workflowID)
			return err
		}).Once()
}

func (b *deadlineBundle) execute() workflows.DeadlineMonitorResult {
	b.t.Helper()
	env := b.env
	env.OnActivity(tracks.ScanDeadlines, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.DeadlineScanInput) (activities.DeadlineScanResult, error) {
			b.t.Errorf("unexpected ScanDeadlines(%+v)", in)
			return activities.DeadlineScanResult{}, temporal.NewNonRetryableApplicationError("unexpected", "Unexpected", nil)
		})
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, mock.Anything, mock.Anything, mock.Anything).Maybe().Return(
		func(_, workflowID, _, signal string, _ any) error {
			b.t.Errorf("unexpected signal %s to %s", signal, workflowID)
			return errors.New("unexpected signal")
		})
	env.ExecuteWorkflow(workflows.DeadlineMonitorWorkflowName)
	require.True(b.t, env.IsWorkflowCompleted())
	require.NoError(b.t, env.GetWorkflowError())
	env.AssertExpectations(b.t)
	var res workflows.DeadlineMonitorResult
	require.NoError(b.t, env.GetWorkflowResult(&res))
	return res
}

func overdue(id string, created bool) activities.Overdue {
	return activities.Overdue{ObjectiveID: id, DeadlineAt: scheduledAt.Add(-time.Hour),
		PauseStateID: "ps-" + id + "-OVERDUE", Created: created}
}

// A backfilled run judges as of its scheduled time, follows every page and
// signals only the objectives it found newly overdue; a lifecycle that
// cannot be signalled does not fail the run.
func TestDeadlineMonitor_ScansAsScheduledAndSignalsNewlyOverdue(t *testing.T) {
	b := setupDeadline(t)
	require.NoError(t, b.env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(
		temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime").ValueSet(scheduledAt))))
	next := domain.Cursor{CreatedAt: scheduledAt.Add(-48 * time.Hour), ID: "o-500"}
	b.page(scheduledAt, domain.Cursor{}, activities.DeadlineScanResult{Scanned: 500,
		Overdue: []activities.Overdue{overdue("o-1", true), overdue("o-2", false)}, Next: &next})
	b.page(scheduledAt, next, activities.DeadlineScanResult{Scanned: 20,
		Overdue: []activities.Overdue{overdue("o-501", true), overdue("o-502", true)}})
	b.signals("o-1", nil)
	b.signals("o-501", errors.New("workflow execution already completed"))
	b.signals("o-502", nil)

	res := b.execute()

	require.Equal(t, workflows.DeadlineMonitorResult{AsOf: "2026-03-02T06:00:00Z", Scanned: 520,
		Overdue: []string{"o-1", "o-2", "o-501", "o-502"}, NewlyOverdue: []string{"o-1", "o-501", "o-502"}}, res)
	require.ElementsMatch(t, []string{"objective-o-1", "objective-o-501", "objective-o-502"}, b.signalled)
}

// A run started by hand (no scheduled time) judges as of its start.
func TestDeadlineMonitor_WithoutScheduleJudgesAtStart(t *testing.T) {
	b := setupDeadline(t)
	b.page(startedAt, domain.Cursor{}, activities.DeadlineScanResult{Scanned: 3})

	res := b.execute()

	require.Equal(t, workflows.DeadlineMonitorResult{AsOf: "2026-03-09T06:00:07Z", Scanned: 3}, res)
	require.Empty(t, b.signalled)
}
