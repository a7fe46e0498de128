package workers_test

import (
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/workers"
)

// lifecycleActivityNames are the activity types the lifecycle task queue
// serves. Recorded workflow histories (workflows/testdata) and running
// workflows schedule activities by these names: renaming one strands
// every history that names it.
var lifecycleActivityNames = []string{
	"AwaitRunSlot",
	"Gate",
	"GateTrack",
	"Load",
	"OpenPullRequest",
	"PendingTrackEvents",
	"Ready",
	"Reject",
	"Run",
	"RunCandidate",
	"ScanDeadlines",
	"Schedule",
	"ScheduleTrack",
	"SelectCandidate",
	"SyncPullRequest",
}

// deadlineActivityNames are the activity types the deadlines task queue
// serves: the monitor's scan alone.
var deadlineActivityNames = []string{"ScanDeadlines"}

// runActivityNames are the activity types the run task queue serves: the
// heavy steps, under the names the lifecycle queue gives them too.
var runActivityNames = []string{"Gate", "Run", "RunCandidate"}

func TestRegister_ActivityNamesStayAsRecordedHistoriesNameThem(t *testing.T) {
	t.Parallel()
	set := &activities.Set{Steps: &activities.Steps{}, Tracks: &activities.Tracks{},
		PullRequests: &activities.PullRequests{}, Candidates: &activities.Candidates{}, RunSlots: &activities.RunSlots{}}

	var lifecycle names
	workers.Register(&lifecycle, set)
	require.Equal(t, lifecycleActivityNames, lifecycle.sorted(), "the lifecycle task queue's activity types")

	var deadlines names
	workers.RegisterDeadlines(&deadlines, set)
	require.Equal(t, deadlineActivityNames, deadlines.sorted(), "the deadlines task queue's activity types")

	var runs names
	workers.RegisterRuns(&runs, set)
	require.Equal(t, runActivityNames, runs.sorted(), "the run task queue's activity types")

	// The SDK takes the same registrations: no name twice, every exported
	// method an activity.
	var suite testsuite.WorkflowTestSuite
	require.NotPanics(t, func() { workers.Register(suite.NewTestWorkflowEnvironment(), set) })
	require.NotPanics(t, func() { workers.RegisterDeadlines(suite.NewTestWorkflowEnvironment(), set) })
	require.NotPanics(t, func() { workers.RegisterRuns(suite.NewTestWorkflowEnvironment(), set) })
}

// names is a worker.Registry that records the activity types registered,
// named as the SDK names them: a struct's exported methods by method name
// (after RegisterOptions.Name as a prefix), a function by its own name or
// RegisterOptions.Name. Workflows it takes and forgets.
type names struct {
	worker.Registry // nil: any other registration panics
	activities      []string
}

func (n *names) RegisterWorkflowWithOptions(any, workflow.RegisterOptions)     {}
func (n *names) RegisterActivity(a any)                                        { n.add(a, activity.RegisterOptions{}) }
func (n *names) RegisterActivityWithOptions(a any, o activity.RegisterOptions) { n.add(a, o) }

func (n *names) add(a any, o activity.RegisterOptions) {
	t := reflect.TypeOf(a)
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		for m := range t.Methods() {
			n.activities = append(n.activities, o.Name+m.Name)
		}
		return
	}
	if o.Name != "" {
		n.activities = append(n.activities, o.Name)
		return
	}
	full := runtime.FuncForPC(reflect.ValueOf(a).Pointer()).Name()
	n.activities = append(n.activities, strings.TrimSuffix(full[strings.LastIndex(full, ".")+1:], "-fm"))
}

func (n *names) sorted() []string { return slices.Sorted(slices.Values(n.activities)) }
