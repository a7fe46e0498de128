package workflows_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// The nil receivers that name the activities for mocking, as the
// workflows do.
var (
	steps        *activities.Steps
	tracks       *activities.Tracks
	pullRequests *activities.PullRequests
	candidates   *activities.Candidates
	runSlots     *activities.RunSlots
)

const (
	commitSHA = "8f2d0c6b1a4e3f5d7c9b8a6e4d2c0b1a3f5e7d9c"
	objID     = "obj-1"
	eventA    = "ev-obj-1-2"
	eventB    = "ev-obj-1-4"
)

var (
	woA = activities.WorkOrderRef{WorkOrderID: "wo-obj-1-2", DiazotrophType: "PATCH_DIAZOTROPH",
		BudgetMS: 90_000, Status: domain.WorkOrderCreated, BranchName: "azolla/" + objID}
	woB = activities.WorkOrderRef{WorkOrderID: "wo-obj-1-4", DiazotrophType: "PATCH_DIAZOTROPH",
		BudgetMS: 90_000, Status: domain.WorkOrderCreated, BranchName: "azolla/" + objID}
	runComplete = domain.PauseState{PauseStateID: "ps-obj-1-3-RUN_COMPLETE", ObjectiveID: objID,
		WorkOrderID: woA.WorkOrderID, Reason: domain.PauseRunComplete, PrioritizedActions: []string{"Review", "Confirm completion"}}
	gateFailed = domain.PauseState{PauseStateID: "ps-obj-1-3-GATE_FAILED", ObjectiveID: objID,
		WorkOrderID: woA.WorkOrderID, Reason: domain.PauseGateFailed, PrioritizedActions: []string{"Review gate failure reason"}}
	blockedPause = domain.PauseState{PauseStateID: "ps-obj-1-3-BLOCKED", ObjectiveID: objID,
		Reason: domain.PauseBlocked, PrioritizedActions: []string{"Resolve blockers for obj-1"}}
	rejectedPause = domain.PauseState{PauseStateID: "ps-obj-1-1-REJECTED", ObjectiveID: objID,
		Reason: domain.PauseRejected, PrioritizedActions: []string{"Rejected by ana: out of scope"}}
)

// view is a stored objective as Load returns it.
func view(status domain.Status) activities.ObjectiveView {
	return activities.ObjectiveView{Found: true, ObjectiveID: objID, ObjectiveType: "TICKET", Status: status,
		StatusSeq: 1, LeaseTTL: 45 * time.Second}
}

// scheduleIn is Schedule's input for eventID as the lifecycle first sends
// it: as a local activity, which hands back objectives naming a repository.
func scheduleIn(eventID string) activities.ScheduleInput {
	return activities.ScheduleInput{EventID: eventID, Local: true}
}

func scheduled(wo activities.WorkOrderRef) activities.ScheduleResult {
	return activities.ScheduleResult{Reason: domain.ReasonScheduled, ObjectiveID: objID,
		Status: domain.StatusInProgress, WorkOrder: &wo}
}

func ran(wo activities.WorkOrderRef) activities.RunResult {
	return activities.RunResult{WorkOrderID: wo.WorkOrderID, RunnerStatus: domain.RunnerOK}
}

func passed() activities.GateResult {
	return activities.GateResult{GateResult: domain.GatePass, GateReason: "output bundle valid",
		CommitSHA: commitSHA, Status: domain.StatusDone, Pause: runComplete}
}

func failed() activities.GateResult {
	return activities.GateResult{GateResult: domain.GateFail, GateReason: "output bundle content is empty",
		Status: domain.StatusTodo, BlockerRef: domain.GateBlocker(gateFailed.WorkOrderID), Pause: gateFailed}
}

func readied(eventID string) activities.ReadyResult {
	return activities.ReadyResult{EventID: eventID, Status: domain.StatusTodo, StatusSeq: 2}
}

// readyIn is the Ready activity's input for mode, carrying the decision
// behind it, if any.
func readyIn(mode string, d ...workflows.Decision) activities.ReadyInput {
	in := activities.ReadyInput{ObjectiveID: objID, Mode: mode}
	if len(d) > 0 {
		in.By, in.Comment, in.Fresh, in.Answer = d[0].By, d[0].Comment, d[0].Fresh, d[0].Answer
	}
	return in
}

// invalidStatus is the Ready activity's refusal when the objective moved.
func invalidStatus() error {
	return temporal.NewNonRetryableApplicationError("make objective \"obj-1\" ready: objective is DONE",
		activities.ErrTypeInvalidStatus, nil)
}

// testBundle is one workflow under test with mocked activities.
type testBundle struct {
	harness
	// attrs is the last value upserted for each search attribute; statuses
	// lists every AzollaStatus upserted, in order.
	attrs    map[string]string
	statuses []string
	// upserts holds each upsert's keys, in order.
	upserts [][]string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	t.Parallel()
	b := &testBundle{harness: newHarness(t, workflows.ObjectiveWorkflow, workflows.ObjectiveWorkflowName),
		attrs: map[string]string{}}
	b.env.OnUpsertTypedSearchAttributes(mock.Anything).Return().Maybe().Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		var keys []string
		defer func() { b.upserts = append(b.upserts, keys) }()
		for _, key := range workflows.SearchAttributes() {
			k, isKeyword := key.(temporal.SearchAttributeKeyKeyword)
			if !isKeyword {
				if k, ok := key.(temporal.SearchAttributeKeyBool); ok {
					if v, ok := sa.GetBool(k); ok {
						keys = append(keys, k.GetName())
						b.attrs[k.GetName()] = fmt.Sprint(v)
					}
				}
				continue
			}
			if v, ok := sa.GetKeyword(k); ok {
				keys = append(keys, k.GetName())
				b.attrs[k.GetName()] = v
				if k.GetName() == workflows.AttrStatus.GetName() {
					b.statuses = append(b.statuses, v)
				}
			}
		}
	})
	return b
}

// execute runs the workflow to its end. Every activity call no test
// expectation matches fails the test and fails the activity for good, so an
// unexpected step cannot hide behind retries.
func (b *testBundle) execute(in workflows.ObjectiveInput) {
	b.t.Helper()
	env := b.env
	env.OnActivity(steps.Load, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, id string) (activities.ObjectiveView, error) {
			return activities.ObjectiveView{}, b.unexpected("Load", id)
		})
	env.OnActivity(steps.Ready, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.ReadyInput) (activities.ReadyResult, error) {
			return activities.ReadyResult{}, b.unexpected("Ready", in)
		})
	env.OnActivity(steps.Reject, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.RejectInput) (domain.PauseState, error) {
			return domain.PauseState{}, b.unexpected("Reject", in)
		})
	env.OnActivity(steps.Schedule, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.ScheduleInput) (activities.ScheduleResult, error) {
			return activities.ScheduleResult{}, b.unexpected("Schedule", in)
		})
	env.OnActivity(steps.Run, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.RunInput) (activities.RunResult, error) {
			return activities.RunResult{}, b.unexpected("Run", in)
		})
	env.OnActivity(steps.Gate, mock.Anything, mock.Anything).Maybe().Return(
		func(_ context.Context, in activities.GateInput) (activities.GateResult, error) {
			return activities.GateResult{}, b.unexpected("Gate", in)
		})
	env.ExecuteWorkflow(workflows.ObjectiveWorkflowName, in)
	require.True(b.t, env.IsWorkflowCompleted())
	env.AssertExpectations(b.t)
}

// result is the workflow's State and error.
func (b *testBundle) result() (workflows.State, error) {
	b.t.Helper()
	err := b.env.GetWorkflowError()
	var s workflows.State
	if err == nil {
		require.NoError(b.t, b.env.GetWorkflowResult(&s))
	}
	return s, err
}

// done requires the workflow to have completed successfully with want, and
// the state query to agree.
func (b *testBundle) done(want workflows.State) {
	b.t.Helper()
	got, err := b.result()
	require.NoError(b.t, err)
	require.Equal(b.t, want, got)
	require.Equal(b.t, want, b.state())
}

// state queries the workflow's State.
func (b *testBundle) state() workflows.State {
	return query[workflows.State](b.harness, workflows.StateQuery)
}

// signalAt sends a decision signal at d.
func (b *testBundle) signalAt(d time.Duration, name string, dec workflows.Decision) {
	b.at(d, func() { b.env.SignalWorkflow(name, dec) })
}

// queryAt captures the state at d.
func (b *testBundle) queryAt(d time.Duration) *workflows.State {
	return queryAt[workflows.State](b.harness, d, workflows.StateQuery)
}

// update records what became of one decision update.
type update = updateOutcome[workflows.DecisionResult]

// updateAt sends a decision update at d.
func (b *testBundle) updateAt(d time.Duration, name string, dec workflows.Decision) *update {
	return updateAt[workflows.DecisionResult](b.harness, d, name, dec)
}

// continuedAsNew requires the workflow to have continued as new and returns
// the next round's input.
func (b *testBundle) continuedAsNew() workflows.ObjectiveInput {
	b.t.Helper()
	return continuedAsNew[workflows.ObjectiveInput](b.harness, workflows.ObjectiveWorkflowName)
}

// gateIn is the Gate call of wo's round on the newest version: a workorder
// without gate commands is gated by the local activity first.
func gateIn(wo activities.WorkOrderRef) activities.GateInput {
	return activities.GateInput{WorkOrderID: wo.WorkOrderID, Local: !wo.GateCommands}
}
