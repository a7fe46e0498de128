package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/workflows"
)

// What ends a round: a block or a failed gate waits for a human, whose
// retry or unblock re-emits TICKET_READY and continues as new.

func TestObjective_BlockedAwaitsUnblockThenContinuesAsNew(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		decision  string
		mode      string
		viaUpdate bool
	}{
		{"unblock signal", workflows.Unblock, activities.ReadyUnblock, false},
		{"unblock update", workflows.Unblock, activities.ReadyUnblock, true},
		{"retry signal keeps the blockers", workflows.Retry, activities.ReadyRetry, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			env := b.env
			v := view(domain.StatusTodo)
			v.PendingEventID = eventA
			env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()
			env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(
				activities.ScheduleResult{Reason: domain.ReasonBlocked, ObjectiveID: objID, Status: domain.StatusBlocked,
					Pause: &blockedPause}, nil).Once()
			env.OnActivity(steps.Ready, mock.Anything, readyIn(tc.mode, workflows.Decision{By: "ana", Comment: "resolved"})).Return(readied(eventB), nil).Once()

			waiting := b.queryAt(time.Minute)
			d := workflows.Decision{By: "ana", Comment: "resolved"}
			var u *update
			if tc.viaUpdate {
				u = b.updateAt(2*time.Minute, tc.decision, d)
			} else {
				b.signalAt(2*time.Minute, tc.decision, d)
			}
			b.execute(workflows.ObjectiveInput{ObjectiveID: objID, Round: 2, WorkOrderIDs: []string{"wo-obj-1-0"}})

			p := blockedPause
			require.Equal(t, workflows.State{ObjectiveID: objID, Status: domain.StatusBlocked,
				Step: workflows.StepAwaitingUnblock, Round: 2, WorkOrderIDs: []string{"wo-obj-1-0"}, LastPause: &p}, *waiting)
			require.Equal(t, workflows.ObjectiveInput{ObjectiveID: objID, Round: 3, WorkOrderIDs: []string{"wo-obj-1-0"},
				LastPause: &p}, b.continuedAsNew())
			if tc.viaUpdate {
				require.True(t, u.completed, u)
				require.NoError(t, u.err)
				require.Equal(t, workflows.DecisionResult{EventID: eventB}, u.result)
			}
			require.Equal(t, domain.StatusStrings([]domain.Status{domain.StatusTodo, domain.StatusBlocked, domain.StatusTodo}), b.statuses)
		})
	}
}

func TestObjective_GateFailAwaitsRetryThenContinuesAsNew(t *testing.T) {
	b := setup(t)
	env := b.env
	v := view(domain.StatusInProgress)
	v.OpenWorkOrder = &woA
	env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
	env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(failed(), nil).Once()
	// A retry asking for a fresh start (objective retry --fresh) says so to
	// Ready, which records it on the round's event.
	env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyRetry, workflows.Decision{By: "ana", Comment: "refined",
		Fresh: true})).Return(readied(eventB), nil).Once()

	waiting := b.queryAt(time.Minute)
	attrs := map[string]string{}
	b.at(time.Minute, func() {
		for k, v := range b.attrs {
			attrs[k] = v
		}
	})
	u := b.updateAt(2*time.Minute, workflows.Retry, workflows.Decision{By: "ana", Comment: "refined", Fresh: true})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	p := gateFailed
	require.Equal(t, workflows.State{ObjectiveID: objID, Status: domain.StatusTodo, Step: workflows.StepAwaitingRetry,
		WorkOrderIDs: []string{woA.WorkOrderID}, GateResult: domain.GateFail, GateReason: "output bundle content is empty",
		LastPause: &p}, *waiting)
	require.Equal(t, domain.GateFail, attrs["AzollaGateResult"])
	require.Equal(t, string(domain.StatusTodo), attrs["AzollaStatus"])
	require.True(t, u.accepted, u)
	require.NoError(t, u.err)
	require.Equal(t, workflows.DecisionResult{EventID: eventB}, u.result)
	require.Equal(t, workflows.ObjectiveInput{ObjectiveID: objID, Round: 1, WorkOrderIDs: []string{woA.WorkOrderID},
		LastPause: &p}, b.continuedAsNew())
}

// The next round carries only the newest workorder ids, so its input (and
// history) stays bounded.
func TestObjective_ContinueAsNewCarriesTheNewestWorkOrders(t *testing.T) {
	b := setup(t)
	env := b.env
	var carried []string
	for i := range 20 {
		carried = append(carried, "wo-old-"+string(rune('a'+i)))
	}
	v := view(domain.StatusInProgress)
	v.OpenWorkOrder = &woA
	env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
	env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(failed(), nil).Once()
	env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyRetry, workflows.Decision{By: "ana"})).Return(readied(eventB), nil).Once()

	b.signalAt(time.Minute, workflows.Retry, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID, Round: 7, WorkOrderIDs: carried})

	next := b.continuedAsNew()
	require.Equal(t, 8, next.Round)
	require.Equal(t, append(carried[1:], woA.WorkOrderID), next.WorkOrderIDs)
}

// A Run that fails for good is gated anyway: its failure is the FAIL
// verdict, so the workorder still ends in a run record and a pause state.
func TestObjective_RunFailureIsGatedAsFail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		err      error
		attempts int
	}{
		{"non-retryable", temporal.NewNonRetryableApplicationError("diazotroph crashed", activities.ErrTypeUnknownType, nil), 1},
		{"retryable until attempts run out", temporal.NewApplicationError("diazotroph crashed", "Crash"), 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			env := b.env
			v := view(domain.StatusInProgress)
			v.OpenWorkOrder = &woA
			env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()
			env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).
				Return(activities.RunResult{}, tc.err).Times(tc.attempts)
			var gated activities.GateInput
			env.OnActivity(steps.Gate, mock.Anything, mock.MatchedBy(func(in activities.GateInput) bool {
				return in.WorkOrderID == woA.WorkOrderID && in.RunFailure != ""
			})).Run(func(args mock.Arguments) { gated = args.Get(1).(activities.GateInput) }).Return(failed(), nil).Once()

			waiting := b.queryAt(24 * time.Hour)
			b.cancelAt(25 * time.Hour)
			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			require.Contains(t, gated.RunFailure, "diazotroph crashed")
			env.AssertActivityNumberOfCalls(t, "Run", tc.attempts)
			require.Equal(t, workflows.StepAwaitingRetry, waiting.Step)
			require.Equal(t, domain.GateFail, waiting.GateResult)
			require.Empty(t, waiting.Error)
			b.canceled()
		})
	}
}

// A retry or unblock the Ready activity refuses (the objective changed under
// the lifecycle) is answered with the refusal; the lifecycle keeps waiting
// and takes the next decision.
func TestObjective_RefusedReEmitKeepsWaiting(t *testing.T) {
	t.Parallel()
	gateFail := view(domain.StatusTodo)
	gateFail.BlockerRef = domain.GateBlocker(woA.WorkOrderID)
	blocked := view(domain.StatusBlocked)
	blocked.BlockerRef = domain.BlockersOf(objID)
	cases := []struct {
		name      string
		view      activities.ObjectiveView
		decision  string
		mode      string
		step      string
		viaUpdate bool
	}{
		{"retry update", gateFail, workflows.Retry, activities.ReadyRetry, workflows.StepAwaitingRetry, true},
		{"retry signal", gateFail, workflows.Retry, activities.ReadyRetry, workflows.StepAwaitingRetry, false},
		{"unblock update", blocked, workflows.Unblock, activities.ReadyUnblock, workflows.StepAwaitingUnblock, true},
		{"unblock signal", blocked, workflows.Unblock, activities.ReadyUnblock, workflows.StepAwaitingUnblock, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			env := b.env
			env.OnActivity(steps.Load, mock.Anything, objID).Return(tc.view, nil).Once()
			env.OnActivity(steps.Ready, mock.Anything, readyIn(tc.mode, workflows.Decision{By: "ana"})).Return(activities.ReadyResult{}, invalidStatus()).Once()
			env.OnActivity(steps.Ready, mock.Anything, readyIn(tc.mode, workflows.Decision{By: "ana"})).Return(readied(eventB), nil).Once()

			before := b.queryAt(time.Minute)
			d := workflows.Decision{By: "ana"}
			var first *update
			if tc.viaUpdate {
				first = b.updateAt(2*time.Minute, tc.decision, d)
			} else {
				b.signalAt(2*time.Minute, tc.decision, d)
			}
			after := b.queryAt(3 * time.Minute)
			second := b.updateAt(4*time.Minute, tc.decision, d)
			b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

			require.Equal(t, tc.step, before.Step)
			require.Equal(t, *before, *after)
			if tc.viaUpdate {
				require.True(t, first.accepted, first)
				require.True(t, first.completed, first)
				var app *temporal.ApplicationError
				require.ErrorAs(t, first.err, &app)
				require.Equal(t, activities.ErrTypeInvalidStatus, app.Type())
			}
			require.True(t, second.completed, second)
			require.NoError(t, second.err)
			require.Equal(t, eventB, second.result.EventID)
			require.Equal(t, 1, b.continuedAsNew().Round)
		})
	}
}

// A round whose agent asked a question waits for the answer, which goes
// to Ready as an answer (Ready refuses it when nothing was asked) and
// starts the next round as a retry does.
func TestObjective_AQuestionAwaitsItsAnswer(t *testing.T) {
	b := setup(t)
	env := b.env
	v := view(domain.StatusInProgress)
	v.OpenWorkOrder = &woA
	asked := domain.PauseState{PauseStateID: "ps-obj-1-3-QUESTION", ObjectiveID: objID, WorkOrderID: woA.WorkOrderID,
		Reason: domain.PauseQuestion, PrioritizedActions: []string{"Answer the agent's question: which API?"}}
	gate := activities.GateResult{GateResult: domain.GateFail, GateReason: "the agent asks a question: which API?",
		Status: domain.StatusTodo, BlockerRef: domain.GateBlocker(woA.WorkOrderID), Pause: asked}
	env.OnActivity(steps.Load, mock.Anything, objID).Return(v, nil).Once()
	env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
	env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(gate, nil).Once()
	answer := workflows.Decision{By: "ana", Comment: "the v2 one", Answer: true}
	env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyRetry, answer)).Return(readied(eventB), nil).Once()

	waiting := b.queryAt(time.Minute)
	u := b.updateAt(2*time.Minute, workflows.Retry, answer)
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})

	require.Equal(t, workflows.StepAwaitingAnswer, waiting.Step)
	require.Equal(t, &asked, waiting.LastPause)
	require.True(t, u.accepted, u)
	require.NoError(t, u.err)
	require.Equal(t, workflows.DecisionResult{EventID: eventB}, u.result)
	require.Equal(t, 1, b.continuedAsNew().Round)
}
