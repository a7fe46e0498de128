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
	"github.com/azolla/azolla/internal/domain"
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

// pin holds a change at a version, as in runs started before its later
// versions existed.
type pin struct {
	change string
	v      workflow.Version
}

// before pins change at its DefaultVersion: runs started before it.
func before(change string) pin { return pin{change, workflow.DefaultVersion} }

// maxVersions are the changes past version 1.
var maxVersions = map[string]workflow.Version{"local-store-steps": 2, "run-slots": 5}

// approveToDone runs an approved objective to DONE, with the changes
// pinned, and returns how each step ran. Schedule names the repository
// when repo is set.
func approveToDone(t *testing.T, pins ...pin) (*testBundle, *stepKinds) {
	return approveToDoneRepo(t, false, pins...)
}

func approveToDoneRepo(t *testing.T, repo bool, pins ...pin) (*testBundle, *stepKinds) {
	b := setup(t)
	localSchedule, gate := true, gateIn(woA)
	for _, p := range pins {
		max, ok := maxVersions[p.change]
		if !ok {
			max = 1
		}
		b.env.OnGetVersion(p.change, workflow.DefaultVersion, max).Return(p.v)
		if p.change == "local-store-steps" && p.v < 2 {
			localSchedule = false
		}
		if p.change == "run-slots" && p.v < 5 {
			gate.Local = false
		}
	}
	k := watchSteps(b)
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	b.env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).Return(readied(eventA), nil).Once()
	if localSchedule {
		res := scheduled(woA)
		if repo {
			res = activities.ScheduleResult{NeedsRepository: true}
		}
		b.env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(res, nil).Once()
	}
	if !localSchedule || repo {
		b.env.OnActivity(steps.Schedule, mock.Anything, activities.ScheduleInput{EventID: eventA}).Return(scheduled(woA), nil).Once()
	}
	b.env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
	b.env.OnActivity(steps.Gate, mock.Anything, gate).Return(passed(), nil).Once()
	u := b.updateAt(time.Minute, workflows.Approve, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})
	s, err := b.result()
	require.NoError(t, err)
	require.Equal(t, workflows.StepDone, s.Step)
	require.True(t, u.completed, u)
	require.Equal(t, workflows.DecisionResult{EventID: eventA}, u.result)
	return b, k
}

// The store steps run inside the workflow task as local activities,
// Schedule included when it reads no repository, and the gate when it runs
// no gate command; Run, which holds a claim for long, stays an activity,
// heartbeating.
func TestObjective_StoreStepsRunAsLocalActivities(t *testing.T) {
	_, k := approveToDone(t)
	require.Equal(t, []string{"Load", "Ready", "Schedule", "Gate"}, k.local)
	require.Equal(t, []string{"Run"}, k.remote)
}

// An objective naming a repository is handed back by the local Schedule
// and scheduled by the activity, which may read the repository for long.
func TestObjective_ScheduleReadingARepositoryRunsAsActivity(t *testing.T) {
	_, k := approveToDoneRepo(t, true)
	require.Equal(t, []string{"Load", "Ready", "Schedule", "Gate"}, k.local)
	require.Equal(t, []string{"Schedule", "Run"}, k.remote)
}

// Runs started on version 1 of local-store-steps keep Schedule an
// activity; runs started before it schedule every step as an activity, as
// their recorded histories say. (Their gates are local: changeRunSlots is
// asked at a round's first heavy step, here on its newest version.)
func TestObjective_RunsBeforeLocalStoreStepsScheduleActivities(t *testing.T) {
	t.Run("version 1", func(t *testing.T) {
		_, k := approveToDone(t, pin{"local-store-steps", 1})
		require.Equal(t, []string{"Load", "Ready", "Gate"}, k.local)
		require.Equal(t, []string{"Schedule", "Run"}, k.remote)
	})
	t.Run("before", func(t *testing.T) {
		_, k := approveToDone(t, before("local-store-steps"))
		require.Equal(t, []string{"Gate"}, k.local)
		require.Equal(t, []string{"Load", "Ready", "Schedule", "Run"}, k.remote)
	})
}

// A workorder whose diazotroph checks its work itself is handed back by
// the local gate, with nothing written, and gated by the activity on the
// lifecycle's task queue.
func TestObjective_GateCheckedByItsDiazotrophRunsAsActivity(t *testing.T) {
	b := setup(t)
	k := watchSteps(b)
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	b.env.OnActivity(steps.Ready, mock.Anything, readyIn(activities.ReadyApprove, workflows.Decision{By: "ana"})).Return(readied(eventA), nil).Once()
	b.env.OnActivity(steps.Schedule, mock.Anything, scheduleIn(eventA)).Return(scheduled(woA), nil).Once()
	b.env.OnActivity(steps.Run, mock.Anything, activities.RunInput{WorkOrderID: woA.WorkOrderID, Queue: true}).Return(ran(woA), nil).Once()
	b.env.OnActivity(steps.Gate, mock.Anything, gateIn(woA)).Return(activities.GateResult{NeedsRepository: true}, nil).Once()
	b.env.OnActivity(steps.Gate, mock.Anything, activities.GateInput{WorkOrderID: woA.WorkOrderID}).Return(passed(), nil).Once()
	b.updateAt(time.Minute, workflows.Approve, workflows.Decision{By: "ana"})
	b.execute(workflows.ObjectiveInput{ObjectiveID: objID})
	s, err := b.result()
	require.NoError(t, err)
	require.Equal(t, workflows.StepDone, s.Step)
	require.Equal(t, domain.GatePass, s.GateResult)
	require.Equal(t, []string{"Load", "Ready", "Schedule", "Gate"}, k.local)
	require.Equal(t, []string{"Run", "Gate"}, k.remote)
}

// Runs whose round began on version 4 of run-slots gate by the activity,
// as their recorded histories say.
func TestObjective_RunsBeforeTheLocalGateGateByActivity(t *testing.T) {
	_, k := approveToDone(t, pin{"run-slots", 4})
	require.Equal(t, []string{"Load", "Ready", "Schedule"}, k.local)
	require.Equal(t, []string{"Run", "Gate"}, k.remote)
}

// A rejection is a store step too.
func TestObjective_RejectRunsAsLocalActivity(t *testing.T) {
	b := setup(t)
	k := watchSteps(b)
	b.env.OnActivity(steps.Load, mock.Anything, objID).Return(view(domain.StatusNew), nil).Once()
	b.env.OnActivity(steps.Reject, mock.Anything, activities.RejectInput{ObjectiveID: objID, By: "ana"}).Return(rejectedPause, nil).Once()
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

// After approval the lifecycle upserts twice: the workorder about to run
// with the status Ready and Schedule set (IN_PROGRESS; the TODO between
// them lasts one workflow task and is never upserted), and the gate's
// verdict. Runs on earlier versions upserted TODO on its own and, before
// one-upsert-per-run, IN_PROGRESS on its own too.
func TestObjective_RunStatusAndWorkOrderShareOneUpsert(t *testing.T) {
	t.Parallel()
	var now, v1, before1 *testBundle
	t.Run("now", func(t *testing.T) {
		now, _ = approveToDone(t)
		run := upsertWith(now, "AzollaDiazotroph")
		require.Contains(t, run, "AzollaStatus", "upserts: %v", now.upserts)
	})
	t.Run("runs on local-store-steps 1", func(t *testing.T) {
		v1, _ = approveToDone(t, pin{"local-store-steps", 1})
		run := upsertWith(v1, "AzollaDiazotroph")
		require.Contains(t, run, "AzollaStatus", "upserts: %v", v1.upserts)
	})
	t.Run("runs before one-upsert-per-run", func(t *testing.T) {
		before1, _ = approveToDone(t, before("one-upsert-per-run"), pin{"local-store-steps", 1})
		run := upsertWith(before1, "AzollaDiazotroph")
		require.NotContains(t, run, "AzollaStatus", "upserts: %v", before1.upserts)
	})
	// Subtests that call t.Parallel run after this function returns.
	t.Cleanup(func() {
		if now == nil || v1 == nil || before1 == nil {
			return
		}
		require.Equal(t, domain.StatusStrings([]domain.Status{domain.StatusNew, domain.StatusInProgress, domain.StatusDone}),
			now.statuses)
		want := domain.StatusStrings([]domain.Status{domain.StatusNew, domain.StatusTodo, domain.StatusInProgress, domain.StatusDone})
		require.Equal(t, want, v1.statuses)
		require.Equal(t, want, before1.statuses)
		require.Len(t, v1.upserts, len(now.upserts)+1)
		require.Len(t, before1.upserts, len(now.upserts)+2)
	})
}
