package workflows_test

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
)

// harness is what every workflow test bundle shares: the test, and an
// environment with the lifecycle's activities registered whose workflow
// log goes to the test's log.
type harness struct {
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment
}

// newHarness registers wf under name in a new test environment.
func newHarness(t *testing.T, wf any, name string) harness {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: name})
	registerActivities(env)
	return harness{t: t, env: env}
}

// registerActivities registers every activity struct on env, as a worker
// does; the tests mock each activity they expect.
func registerActivities(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivity(&activities.Steps{})
	env.RegisterActivity(&activities.Tracks{})
	env.RegisterActivity(&activities.PullRequests{})
	env.RegisterActivity(&activities.Candidates{})
}

// unexpected fails the test for an activity call no expectation matches,
// and returns the error that fails the activity for good, so an unexpected
// step cannot hide behind retries.
func (h harness) unexpected(name string, in any) error {
	h.t.Errorf("unexpected activity call %s(%+v)", name, in)
	return temporal.NewNonRetryableApplicationError("unexpected activity call "+name, "Unexpected", nil)
}

// at runs fn when the workflow clock reaches d.
func (h harness) at(d time.Duration, fn func()) { h.env.RegisterDelayedCallback(fn, d) }

// cancelAt cancels the workflow at d.
func (h harness) cancelAt(d time.Duration) { h.at(d, h.env.CancelWorkflow) }

// canceled requires the workflow to have ended by cancellation.
func (h harness) canceled() {
	h.t.Helper()
	var ce *temporal.CanceledError
	err := h.env.GetWorkflowError()
	require.True(h.t, errors.As(err, &ce), "want canceled, got %v", err)
}

// query asks the workflow the query name and decodes its answer.
func query[S any](h harness, name string) S {
	h.t.Helper()
	v, err := h.env.QueryWorkflow(name)
	require.NoError(h.t, err)
	var s S
	require.NoError(h.t, v.Get(&s))
	return s
}

// queryAt captures the answer to the query name at d.
func queryAt[S any](h harness, d time.Duration, name string) *S {
	s := new(S)
	h.at(d, func() { *s = query[S](h, name) })
	return s
}

// continuedAsNew requires the workflow to have continued as new as
// wfName and returns the next run's input.
func continuedAsNew[I any](h harness, wfName string) I {
	h.t.Helper()
	err := h.env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.True(h.t, errors.As(err, &can), "want continue-as-new, got %v", err)
	require.Equal(h.t, wfName, can.WorkflowType.Name)
	var next I
	require.NoError(h.t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	return next
}

// updateOutcome records what became of one update answering R.
type updateOutcome[R any] struct {
	accepted  bool
	rejected  error
	completed bool
	result    R
	err       error
}

func (u *updateOutcome[R]) String() string {
	return fmt.Sprintf("accepted=%v rejected=%v completed=%v result=%+v err=%v", u.accepted, u.rejected,
		u.completed, u.result, u.err)
}

// updateAt sends the update name with arg at d.
func updateAt[R any](h harness, d time.Duration, name string, arg any) *updateOutcome[R] {
	u := new(updateOutcome[R])
	h.at(d, func() {
		h.env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{
			OnAccept: func() { u.accepted = true },
			OnReject: func(err error) { u.rejected = err },
			OnComplete: func(res any, err error) {
				u.completed, u.err = true, err
				if err == nil {
					r, ok := res.(R)
					require.True(h.t, ok, "update result is %T", res)
					u.result = r
				}
			},
		}, arg)
	})
	return u
}

// testWriter sends the workflow's log to the test's log, shown on failure.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
