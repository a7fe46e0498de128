package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// stepKinds records the activities a lifecycle started, split by how they
// ran: as local activities or as activities.
type stepKinds struct {
	mu            sync.Mutex
	local, remote []string
}

func watchSteps(b *testBundle) *stepKinds {
	k := &stepKinds{}
	b.env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.local = append(k.local, info.ActivityType.Name)
	})
	b.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.remote = append(k.remote, info.ActivityType.Name)
	})
	return k
}

// approveToDone runs an approved objective to DONE and returns how each
// step ran.
func approveToDone(t *testing.T, oldRun bool) *stepKinds {
	b := setup(t)
	if oldRun {
		b.env.OnGetVersion("local-store-steps", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	}
	k := watchSteps(b)
	b.env.OnActivity(a.Load, mock.Anything, objID).Return(view(store.StatusNew), nil).Once()
	b.env.OnActivity(a.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).Return(readied(eventA), nil).Once()
	b.env.OnActivity(a.Schedule, mock.Anything, activities.ScheduleInput{EventID: eventA}).Return(scheduled(woA), nil).Once()
	b.env.OnActivity(a.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID}).Return(ran(woA), nil).Once()
	b.env.OnActivity(a.Gate, mock.Anything, activities.GateInput{WorkOrderID: woA.WorkOrderID}).Return(passed(), nil).Once()
	u := b.updateAt(time.Minute, workflows.Approve, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})
	s, err := b.result()
	require.NoError(t, err)
	require.Equal(t, workflows.StepDone, s.Step)
	require.True(t, u.completed, u)
	require.Equal(t, workflows.DecisionResult{EventID: eventA}, u.result)
	return k
}

// The store steps run inside the workflow task as local activities; the
// steps that hold a claim for long (Schedule, Run, Gate) stay activities,
// heartbeating.
func TestObjective_StoreStepsRunAsLocalActivities(t *testing.T) {
	k := approveToDone(t, false)
	require.Equal(t, []string{"Load", "Ready"}, k.local)
	require.Equal(t, []string{"Schedule", "Run", "Gate"}, k.remote)
}

// Runs started before local-store-steps keep scheduling every step as an
// activity, as their recorded histories say.
func TestObjective_RunsBeforeLocalStoreStepsScheduleActivities(t *testing.T) {
	k := approveToDone(t, true)
	require.Empty(t, k.local)
	require.Equal(t, []string{"Load", "Ready", "Schedule", "Run", "Gate"}, k.remote)
}

// A rejection is a store step too.
func TestObjective_RejectRunsAsLocalActivity(t *testing.T) {
	b := setup(t)
	k := watchSteps(b)
	b.env.OnActivity(a.Load, mock.Anything, objID).Return(view(store.StatusNew), nil).Once()
	b.env.OnActivity(a.Reject, mock.Anything, activities.RejectInput{ObjectiveID: objID, By: "ana"}).Return(rejectedPause, nil).Once()
	b.updateAt(time.Minute, workflows.Reject, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})
	require.Equal(t, []string{"Load", "Reject"}, k.local)
	require.Empty(t, k.remote)
}
