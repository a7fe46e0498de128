package bridge_test

import (
	"context"
	"errors"
	"slices"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/azolla/azolla/workflows"
)

// fakeTemporal is the part of a Temporal frontend the poller and the
// starter use, with the rule that matters here: one running execution per
// workflow id. SignalWithStart signals the running execution if there is
// one, else starts a new one, unless the reuse policy rejects duplicates
// and one has closed. Any other client call panics on the nil embedded
// interface.
type fakeTemporal struct {
	client.Client

	mu    sync.Mutex
	runs  map[string][]enumspb.WorkflowExecutionStatus // per workflow id, oldest first
	steps map[string]string                            // the state query's Step, per workflow id
	fail  map[string]error                             // Describe fails for these ids
	// afterDescribe, if set, runs after each Describe answered (outside the lock).
	afterDescribe func(id string)

	describes, signalStarts, signals, queries int

	// enqueued holds each track's events; failEnqueue fails every enqueue.
	enqueued    map[string][]string
	failEnqueue error
	updates     int
}

func newFakeTemporal() *fakeTemporal {
	return &fakeTemporal{runs: map[string][]enumspb.WorkflowExecutionStatus{}, steps: map[string]string{},
		fail: map[string]error{}}
}

// set gives objective id a run in status (appended to its runs).
func (f *fakeTemporal) set(objectiveID string, status enumspb.WorkflowExecutionStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := workflows.ObjectiveWorkflowID(objectiveID)
	f.runs[id] = append(f.runs[id], status)
}

// closeRun ends objective id's running execution as status.
func (f *fakeTemporal) closeRun(objectiveID string, status enumspb.WorkflowExecutionStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	runs := f.runs[workflows.ObjectiveWorkflowID(objectiveID)]
	runs[len(runs)-1] = status
}

func (f *fakeTemporal) step(objectiveID, step string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps[workflows.ObjectiveWorkflowID(objectiveID)] = step
}

// runCount is how many executions objective id has had.
func (f *fakeTemporal) runCount(objectiveID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.runs[workflows.ObjectiveWorkflowID(objectiveID)])
}

// calls returns the Describe, SignalWithStart and Query calls so far.
func (f *fakeTemporal) calls() (describes, signalStarts, queries int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.describes, f.signalStarts, f.queries
}

func (f *fakeTemporal) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	f.mu.Lock()
	f.describes++
	runs, err := f.runs[id], f.fail[id]
	hook := f.afterDescribe
	f.mu.Unlock()
	if hook != nil {
		defer hook(id)
	}
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, serviceerror.NewNotFound("workflow not found for ID: " + id)
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{Status: runs[len(runs)-1]}}, nil
}

func (f *fakeTemporal) SignalWithStartWorkflow(_ context.Context, id, _ string, _ any,
	opts client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signalStarts++
	runs := f.runs[id]
	switch {
	case len(runs) > 0 && runs[len(runs)-1] == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		f.signals++
	case len(runs) > 0 && opts.WorkflowIDReusePolicy == enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE:
		return nil, serviceerror.NewWorkflowExecutionAlreadyStarted("workflow execution already finished", "", "")
	default:
		f.runs[id] = append(runs, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING)
	}
	return nil, nil
}

func (f *fakeTemporal) QueryWorkflow(_ context.Context, id, _, _ string, _ ...any) (converter.EncodedValue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries++
	if len(f.runs[id]) == 0 {
		return nil, serviceerror.NewNotFound("workflow not found for ID: " + id)
	}
	return stateValue{workflows.State{Step: f.steps[id]}}, nil
}

// stateValue is a query's answer.
type stateValue struct{ s workflows.State }

func (v stateValue) HasValue() bool { return true }

func (v stateValue) Get(ptr any) error {
	p, ok := ptr.(*workflows.State)
	if !ok {
		return errors.New("stateValue decodes into *workflows.State only")
	}
	*p = v.s
	return nil
}

// withStartOp is the start half of an update-with-start, as the fake reads
// it back.
type withStartOp struct {
	client.WithStartWorkflowOperation
	opts client.StartWorkflowOptions
	args []any
}

func (f *fakeTemporal) NewWithStartWorkflowOperation(opts client.StartWorkflowOptions, _ any, args ...any) client.WithStartWorkflowOperation {
	return &withStartOp{opts: opts, args: args}
}

// UpdateWithStartWorkflow is the track's enqueue: the track runs from the
// first call on (USE_EXISTING), and an event it has is a duplicate. While
// failEnqueue is set every call fails.
func (f *fakeTemporal) UpdateWithStartWorkflow(_ context.Context, o client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates++
	if f.failEnqueue != nil {
		return nil, f.failEnqueue
	}
	op := o.StartWorkflowOperation.(*withStartOp)
	if op.opts.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING {
		return nil, errors.New("update-with-start without USE_EXISTING")
	}
	if f.enqueued == nil {
		f.enqueued = map[string][]string{}
	}
	item := o.UpdateOptions.Args[0].(workflows.TrackItem)
	id := op.opts.ID
	res := workflows.EnqueueResult{Duplicate: slices.Contains(f.enqueued[id], item.EventID)}
	if !res.Duplicate {
		f.enqueued[id] = append(f.enqueued[id], item.EventID)
	}
	res.Waiting = len(f.enqueued[id])
	return updateHandle{res}, nil
}

// trackItems returns the events the track has, in enqueue order, and the
// enqueue calls so far.
func (f *fakeTemporal) trackItems(track string) ([]string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.enqueued[workflows.TrackWorkflowID(track)]), f.updates
}

type updateHandle struct{ res workflows.EnqueueResult }

func (updateHandle) WorkflowID() string { return "" }
func (updateHandle) RunID() string      { return "" }
func (updateHandle) UpdateID() string   { return "" }
func (h updateHandle) Get(_ context.Context, ptr any) error {
	*ptr.(*workflows.EnqueueResult) = h.res
	return nil
}
