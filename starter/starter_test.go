package starter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// The frontend's refusal while a namespace does not know a search attribute
// yet, as the dev server and SQL visibility word it.
var errNoMapping = serviceerror.NewInvalidArgument(
	"Namespace default has no mapping defined for search attribute AzollaObjectiveId")

// fakeClient answers SignalWithStartWorkflow with errs, one per call, then
// success. Any other client call panics on the nil embedded interface.
type fakeClient struct {
	client.Client
	errs   []error
	calls  int
	onCall func()
	opts   client.StartWorkflowOptions
}

func (f *fakeClient) SignalWithStartWorkflow(_ context.Context, _, _ string, _ any,
	opts client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	f.calls++
	f.opts = opts
	if f.onCall != nil {
		f.onCall()
	}
	if f.calls <= len(f.errs) {
		return nil, f.errs[f.calls-1]
	}
	return nil, nil
}

var objective = &domain.Objective{ObjectiveID: "o1", ObjectiveType: "TICKET", Status: domain.StatusNew}

func TestStart_WaitsWhileTheNamespaceLearnsItsSearchAttributes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
	}{
		{"no alias yet (SQL visibility)", errNoMapping},
		{"not defined yet (Elasticsearch visibility)", serviceerror.NewInvalidArgument("search attribute AzollaStatus is not defined")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &fakeClient{errs: []error{tt.err, tt.err}}
			s := &starter.Starter{Client: c, TaskQueue: "q"}
			require.NoError(t, s.Start(t.Context(), objective))
			require.Equal(t, 3, c.calls, "two refusals, then the start")
			require.Equal(t, workflows.ObjectiveWorkflowID("o1"), c.opts.ID)
		})
	}
}

func TestStart_GivesUpAfterAttributesWaitSayingWhy(t *testing.T) {
	t.Parallel()
	errs := make([]error, 1000)
	for i := range errs {
		errs[i] = errNoMapping
	}
	c := &fakeClient{errs: errs}
	s := &starter.Starter{Client: c, TaskQueue: "q", AttributesWait: 300 * time.Millisecond}
	err := s.Start(t.Context(), objective)
	require.ErrorContains(t, err, "start lifecycle of o1: the namespace still lacks azolla's search attributes after 300ms")
	var invalid *serviceerror.InvalidArgument
	require.ErrorAs(t, err, &invalid, "the server's refusal is kept")
	require.Greater(t, c.calls, 1, "it was retried")
	require.Less(t, c.calls, len(errs))
}

func TestStart_FailsAtOnceOnAnyOtherError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		wait time.Duration
	}{
		{"another invalid argument", serviceerror.NewInvalidArgument("WorkflowId is not set on request."), 0},
		{"same words, another type", errors.New("Namespace default has no mapping defined for search attribute AzollaStatus"), 0},
		{"unavailable", serviceerror.NewUnavailable("connection refused"), 0},
		{"no wait asked for", errNoMapping, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &fakeClient{errs: []error{tt.err}}
			s := &starter.Starter{Client: c, TaskQueue: "q", AttributesWait: tt.wait}
			err := s.Start(t.Context(), objective)
			require.ErrorIs(t, err, tt.err)
			require.Equal(t, 1, c.calls)
		})
	}
}

func TestStart_ContextEndStopsTheWait(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(t.Context())
	errGone := errors.New("user pressed Ctrl-C")
	// The context ends while the first refusal is being answered; the wait
	// (thirty seconds by default) must not outlast it.
	c := &fakeClient{errs: []error{errNoMapping}, onCall: func() { cancel(errGone) }}
	s := &starter.Starter{Client: c, TaskQueue: "q"}
	err := s.Start(ctx, objective)
	require.ErrorIs(t, err, errGone)
	require.ErrorIs(t, err, errNoMapping)
	require.Equal(t, 1, c.calls)
}
