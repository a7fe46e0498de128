package workflows_test

import (
	"context"
	"slices"
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

// approveToDone runs an approved objective to DONE, with the changes named
// at their DefaultVersion (as in runs started before them), and returns how
// each step ran.
func approveToDone(t *testing.T, before ...string) (*testBundle, *stepKinds) {
	b := setup(t)
	for _, change := range before {
		b.env.OnGetVersion(change, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
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
	return b, k
}

// The store steps run inside the workflow task as local activities; the
// steps that hold a claim for long (Schedule, Run, Gate) stay activities,
// heartbeating.
func TestObjective_StoreStepsRunAsLocalActivities(t *testing.T) {
	_, k := approveToDone(t)
	require.Equal(t, []string{"Load", "Ready"}, k.local)
	require.Equal(t, []string{"Schedule", "Run", "Gate"}, k.remote)
}

// Runs started before local-store-steps keep scheduling every step as an
// activity, as their recorded histories say.
func TestObjective_RunsBeforeLocalStoreStepsScheduleActivities(t *testing.T) {
	_, k := approveToDone(t, "local-store-steps")
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

// upsertWith returns the first upsert that set key, as the keys it set.
func upsertWith(b *testBundle, key string) []string {
	for _, keys := range b.upserts {
		if slices.Contains(keys, key) {
			return keys
		}
	}
	return nil
}

// The IN_PROGRESS status rides on the upsert of the workorder about to run:
// one upsert, one visibility write, where there were two.
func TestObjective_RunStatusAndWorkOrderShareOneUpsert(t *testing.T) {
	t.Parallel()
	var now, before *testBundle
	t.Run("now", func(t *testing.T) {
		now, _ = approveToDone(t)
		run := upsertWith(now, "AzollaDiazotroph")
		require.Contains(t, run, "AzollaStatus", "upserts: %v", now.upserts)
	})
	t.Run("runs before one-upsert-per-run", func(t *testing.T) {
		before, _ = approveToDone(t, "one-upsert-per-run")
		run := upsertWith(before, "AzollaDiazotroph")
		require.NotContains(t, run, "AzollaStatus", "upserts: %v", before.upserts)
	})
	// Subtests that call t.Parallel run after this function returns.
	t.Cleanup(func() {
		if now == nil || before == nil {
			return
		}
		want := []string{store.StatusNew, store.StatusTodo, store.StatusInProgress, store.StatusDone}
		require.Equal(t, want, now.statuses)
		require.Equal(t, want, before.statuses)
		require.Len(t, before.upserts, len(now.upserts)+1)
	})
}
