package activities_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/schemas"
)

const (
	fakeType   = "FAKE_DIAZOTROPH"
	testBudget = 90 * time.Second
	testLease  = time.Minute
	// testSHA is a commit id the schemas accept.
	testSHA = "0123456789abcdef0123456789abcdef01234567"
)

// testBundle is what each test gets: a fresh migrated store and the
// activities on it, whose only diazotroph is a fake. Timestamps come from
// a step clock, so every write is later than the one before; claims use
// the real clock, which the keeper's ticker runs on too.
type testBundle struct {
	store  store.Store
	steps  *activities.Steps
	tracks *activities.Tracks
	prs    *activities.PullRequests
	cands  *activities.Candidates
	fake   *fakeDiazotroph
}

// forEachBackend runs test on a fresh bundle per store backend, in parallel.
func forEachBackend(t *testing.T, test func(t *testing.T, tb *testBundle)) {
	t.Helper()
	t.Parallel()
	for _, be := range storetest.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			test(t, setup(t, be))
		})
	}
}

func setup(t *testing.T, be storetest.Backend) *testBundle {
	t.Helper()
	s := be.Open(t)
	fake := newFake(fakeType, okResult)
	clock := &storetest.StepClock{Start: storetest.T0, Step: time.Second}
	base := activities.Base{Now: clock.Now}
	claims := activities.Claimant{Claims: claim.NewBridge(s), Identity: "tester", LeaseTTL: testLease}
	return &testBundle{store: s, fake: fake,
		steps: &activities.Steps{Base: base, Claimant: claims, Store: s, Diazotrophs: diazotroph.NewRegistry(fake),
			Diazotroph: fakeType, Budget: testBudget},
		tracks: &activities.Tracks{Base: base, Claimant: claims, Store: s},
		prs:    &activities.PullRequests{Base: base, Store: s},
		cands:  &activities.Candidates{Base: base, Claimant: claims, Store: s},
	}
}

// observe has every activity struct of the bundle tell o what it wrote.
func (tb *testBundle) observe(o activities.Observer) {
	tb.steps.Observer, tb.tracks.Observer, tb.prs.Observer, tb.cands.Observer = o, o, o, o
}

// register puts every activity struct of the bundle on r, as a worker does.
func (tb *testBundle) register(r interface{ RegisterActivity(a any) }) {
	for _, a := range []any{tb.steps, tb.tracks, tb.prs, tb.cands} {
		r.RegisterActivity(a)
	}
}

// fakeDiazotroph records every request and answers with exec.
type fakeDiazotroph struct {
	typ  string
	exec func(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error)

	mu    sync.Mutex
	calls []diazotroph.Request
}

func newFake(typ string, exec func(context.Context, diazotroph.Request) (diazotroph.Result, error)) *fakeDiazotroph {
	return &fakeDiazotroph{typ: typ, exec: exec}
}

func (f *fakeDiazotroph) Type() string { return f.typ }

func (f *fakeDiazotroph) Execute(ctx context.Context, req diazotroph.Request) (diazotroph.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req)
	exec := f.exec
	f.mu.Unlock()
	return exec(ctx, req)
}

func (f *fakeDiazotroph) Calls() []diazotroph.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]diazotroph.Request(nil), f.calls...)
}

// okResult is a successful patch run.
func okResult(_ context.Context, req diazotroph.Request) (diazotroph.Result, error) {
	return diazotroph.Result{Title: "Patch for " + req.Objective.ObjectiveID,
		Content: "diff --git a/x.go b/x.go\n+// fixed\n", Notes: "changed x.go",
		Metadata:     domain.BundleMetadata{BranchName: req.WorkOrder.BranchName},
		RunnerStatus: domain.RunnerOK}, nil
}

// returning makes an exec that answers res whatever the request.
func returning(res diazotroph.Result) func(context.Context, diazotroph.Request) (diazotroph.Result, error) {
	return func(context.Context, diazotroph.Request) (diazotroph.Result, error) { return res, nil }
}

// newObjective stores a NEW ticket objective, changed by edit first.
func (tb *testBundle) newObjective(t *testing.T, id string, edit func(o *domain.Objective)) *domain.Objective {
	t.Helper()
	o := storetest.Objective(id)
	o.AcceptanceCriteria = []string{"the build is green", "x.go handles empty input"}
	o.BaseBranch = "main"
	if edit != nil {
		edit(o)
	}
	require.NoError(t, tb.store.CreateObjective(context.Background(), o))
	return o
}

func (tb *testBundle) ready(t *testing.T, id, mode string) activities.ReadyResult {
	t.Helper()
	res, err := tb.steps.Ready(context.Background(), activities.ReadyInput{ObjectiveID: id, Mode: mode})
	require.NoError(t, err)
	return res
}

// scheduled stores an objective, approves it and schedules its event: the
// returned workorder is CREATED and the objective IN_PROGRESS.
func (tb *testBundle) scheduled(t *testing.T, id string) *activities.WorkOrderRef {
	t.Helper()
	tb.newObjective(t, id, nil)
	ev := tb.ready(t, id, activities.ReadyApprove)
	res, err := tb.steps.Schedule(context.Background(), activities.ScheduleInput{EventID: ev.EventID})
	require.NoError(t, err)
	require.Equal(t, domain.ReasonScheduled, res.Reason)
	require.NotNil(t, res.WorkOrder)
	return res.WorkOrder
}

func (tb *testBundle) objective(t *testing.T, id string) *domain.Objective {
	t.Helper()
	o, err := tb.store.GetObjective(context.Background(), id)
	require.NoError(t, err)
	return o
}

func (tb *testBundle) events(t *testing.T, subject string) []*domain.Event {
	t.Helper()
	evs, err := tb.store.ListEvents(context.Background(), store.ListEventsParams{SubjectID: subject})
	require.NoError(t, err)
	return evs
}

func (tb *testBundle) event(t *testing.T, id string) *domain.Event {
	t.Helper()
	ev, err := tb.store.GetEvent(context.Background(), id)
	require.NoError(t, err)
	return ev
}

func (tb *testBundle) workOrders(t *testing.T, objectiveID string) []*domain.WorkOrder {
	t.Helper()
	wos, err := tb.store.ListWorkOrders(context.Background(), store.ListWorkOrdersParams{ObjectiveID: objectiveID})
	require.NoError(t, err)
	return wos
}

func (tb *testBundle) workOrder(t *testing.T, id string) *domain.WorkOrder {
	t.Helper()
	w, err := tb.store.GetWorkOrder(context.Background(), id)
	require.NoError(t, err)
	return w
}

func (tb *testBundle) pauses(t *testing.T, objectiveID string) []*domain.PauseState {
	t.Helper()
	ps, err := tb.store.ListPauseStates(context.Background(), objectiveID)
	require.NoError(t, err)
	return ps
}

// pausesOf returns the pause states written for one workorder.
func (tb *testBundle) pausesOf(t *testing.T, objectiveID, workOrderID string) []*domain.PauseState {
	t.Helper()
	var out []*domain.PauseState
	for _, p := range tb.pauses(t, objectiveID) {
		if p.WorkOrderID == workOrderID {
			out = append(out, p)
		}
	}
	return out
}

// requireNoBundle asserts the workorder has no output bundle and is CREATED.
func (tb *testBundle) requireNoBundle(t *testing.T, workOrderID string) {
	t.Helper()
	_, err := tb.store.GetOutputBundle(context.Background(), workOrderID)
	require.ErrorIs(t, err, domain.ErrNotFound, "no output bundle is written")
	require.Equal(t, domain.WorkOrderCreated, tb.workOrder(t, workOrderID).Status)
}

// requireReleased asserts the claim row of a resource exists, is released
// and is a valid claim record.
func (tb *testBundle) requireReleased(t *testing.T, resourceType, resourceID string) *domain.ClaimRecord {
	t.Helper()
	c, err := tb.store.GetClaim(context.Background(), resourceType, resourceID)
	require.NoError(t, err)
	require.NotNil(t, c.ReleasedAt, "the claim is released after the write")
	require.NoError(t, schemas.Validate(schemas.ClaimRecord, c))
	return c
}

// requirePermanent asserts err is a non-retryable application error of
// errType.
func requirePermanent(t *testing.T, err error, errType string) {
	t.Helper()
	var ae *temporal.ApplicationError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, errType, ae.Type())
	require.True(t, ae.NonRetryable(), "a retry cannot fix %s", errType)
}

// requireRetryable asserts err is not a non-retryable application error.
func requireRetryable(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		require.False(t, ae.NonRetryable(), "a retry may succeed: %v", err)
	}
}

// thief is a bridge whose clock is an hour ahead: every lease of the
// lifecycle's bridge looks expired to it, as to a worker that took over.
func (tb *testBundle) thief() *claim.Bridge {
	return claim.NewBridge(tb.store, claim.WithClock(func() time.Time { return time.Now().Add(time.Hour) }))
}
