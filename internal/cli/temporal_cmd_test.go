package cli

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// fakeCluster is as much of a Temporal frontend as `temporal setup` and the
// worker's check need: a gRPC health service, SERVING unless a test says
// otherwise; namespaces with their retention and custom search attributes.
// A namespace it creates stays unknown to the Operator API for lag
// answers, as a real frontend's namespace cache makes it.
type fakeCluster struct {
	workflowservice.UnimplementedWorkflowServiceServer
	operatorservice.UnimplementedOperatorServiceServer
	addr   string
	health *probedHealth

	mu         sync.Mutex
	retention  map[string]time.Duration
	attrs      map[string]map[string]enumspb.IndexedValueType
	lag        int
	lagLeft    map[string]int
	registered int // RegisterNamespace calls
	addCalls   int // AddSearchAttributes calls
}

func startFakeCluster(t *testing.T, lag int) *fakeCluster {
	t.Helper()
	return newFakeCluster(t, lag, true)
}

// newFakeCluster starts a fake cluster, with the gRPC health service or
// without it.
func newFakeCluster(t *testing.T, lag int, withHealth bool) *fakeCluster {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fc := &fakeCluster{addr: l.Addr().String(), lag: lag, retention: map[string]time.Duration{},
		attrs: map[string]map[string]enumspb.IndexedValueType{}, lagLeft: map[string]int{},
		health: &probedHealth{Server: health.NewServer(), probed: make(chan struct{})}}
	fc.health.SetServingStatus(workflowServiceName, healthpb.HealthCheckResponse_SERVING)
	srv := grpc.NewServer()
	workflowservice.RegisterWorkflowServiceServer(srv, fc)
	operatorservice.RegisterOperatorServiceServer(srv, fc)
	if withHealth {
		healthpb.RegisterHealthServer(srv, fc.health)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return fc
}

// workflowServiceName is the service the SDK's CheckHealth asks about.
var workflowServiceName = workflowservice.WorkflowService_ServiceDesc.ServiceName

// probedHealth is a gRPC health service that closes probed once it has
// answered a first check.
type probedHealth struct {
	*health.Server
	once   sync.Once
	probed chan struct{}
}

func (h *probedHealth) Check(ctx context.Context, r *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	resp, err := h.Server.Check(ctx, r)
	h.once.Do(func() { close(h.probed) })
	return resp, err
}

// addNamespace gives the cluster a namespace with attrs, usable at once.
func (f *fakeCluster) addNamespace(name string, retention time.Duration, attrs map[string]enumspb.IndexedValueType) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.retention[name], f.attrs[name] = retention, attrs
}

func (f *fakeCluster) namespaceAttrs(name string) map[string]enumspb.IndexedValueType {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attrs[name]
}

func (*fakeCluster) GetSystemInfo(context.Context, *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	return &workflowservice.GetSystemInfoResponse{Capabilities: &workflowservice.GetSystemInfoResponse_Capabilities{}}, nil
}

func (f *fakeCluster) DescribeNamespace(_ context.Context, r *workflowservice.DescribeNamespaceRequest) (*workflowservice.DescribeNamespaceResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ret, ok := f.retention[r.GetNamespace()]
	if !ok {
		return nil, asStatus(serviceerror.NewNotFound("namespace " + r.GetNamespace() + " not found"))
	}
	return &workflowservice.DescribeNamespaceResponse{
		NamespaceInfo: &namespacepb.NamespaceInfo{Name: r.GetNamespace(), State: enumspb.NAMESPACE_STATE_REGISTERED},
		Config:        &namespacepb.NamespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(ret)},
	}, nil
}

func (f *fakeCluster) RegisterNamespace(_ context.Context, r *workflowservice.RegisterNamespaceRequest) (*workflowservice.RegisterNamespaceResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered++
	if _, ok := f.retention[r.GetNamespace()]; ok {
		return nil, asStatus(serviceerror.NewNamespaceAlreadyExists("namespace already exists"))
	}
	f.retention[r.GetNamespace()] = r.GetWorkflowExecutionRetentionPeriod().AsDuration()
	f.attrs[r.GetNamespace()] = map[string]enumspb.IndexedValueType{}
	f.lagLeft[r.GetNamespace()] = f.lag
	return &workflowservice.RegisterNamespaceResponse{}, nil
}

// known says whether the Operator API knows the namespace yet; the lock is
// held.
func (f *fakeCluster) known(ns string) error {
	if _, ok := f.attrs[ns]; !ok || f.lagLeft[ns] > 0 {
		f.lagLeft[ns]--
		return asStatus(serviceerror.NewNamespaceNotFound(ns))
	}
	return nil
}

func (f *fakeCluster) ListSearchAttributes(_ context.Context, r *operatorservice.ListSearchAttributesRequest) (*operatorservice.ListSearchAttributesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.known(r.GetNamespace()); err != nil {
		return nil, err
	}
	custom := map[string]enumspb.IndexedValueType{}
	for k, v := range f.attrs[r.GetNamespace()] {
		custom[k] = v
	}
	return &operatorservice.ListSearchAttributesResponse{CustomAttributes: custom}, nil
}

func (f *fakeCluster) AddSearchAttributes(_ context.Context, r *operatorservice.AddSearchAttributesRequest) (*operatorservice.AddSearchAttributesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addCalls++
	if err := f.known(r.GetNamespace()); err != nil {
		return nil, err
	}
	// A SQL visibility store's bound, answered as the server words it.
	keywords := 0
	for _, v := range f.attrs[r.GetNamespace()] {
		if v == enumspb.INDEXED_VALUE_TYPE_KEYWORD {
			keywords++
		}
	}
	for _, v := range r.GetSearchAttributes() {
		if v == enumspb.INDEXED_VALUE_TYPE_KEYWORD {
			keywords++
		}
	}
	if keywords > sqlKeywordSlots {
		return nil, asStatus(serviceerror.NewInvalidArgument(fmt.Sprintf(
			"Unable to create search attributes: cannot have more than %d search attribute of type Keyword.", sqlKeywordSlots)))
	}
	for k, v := range r.GetSearchAttributes() {
		if _, ok := f.attrs[r.GetNamespace()][k]; ok {
			return nil, asStatus(serviceerror.NewAlreadyExists("search attribute " + k + " already exists"))
		}
		f.attrs[r.GetNamespace()][k] = v
	}
	return &operatorservice.AddSearchAttributesResponse{}, nil
}

// asStatus is err as the gRPC status a Temporal frontend sends (its
// interceptor converts serviceerrors; this fake has none).
func asStatus(err error) error { return serviceerror.ToStatus(err).Err() }

func clusterEnv(fc *fakeCluster) map[string]string {
	return map[string]string{"AZOLLA_TEMPORAL_ADDRESS": fc.addr, "AZOLLA_LOG_LEVEL": "warn",
		"AZOLLA_TEMPORAL_TASK_QUEUE": "azolla-setup-test", "AZOLLA_CONTROL_PLANE_ADDRESS": "127.0.0.1:0"}
}

// A first setup creates the namespace with the retention asked for, waits
// for the frontend to know it, and registers every attribute with its type;
// a second changes nothing and says so.
func TestTemporalSetup_CreatesNamespaceAndAttributesThenIsIdempotent(t *testing.T) {
	t.Parallel()
	fc := startFakeCluster(t, 3)
	env := clusterEnv(fc)

	r := azolla(t, env, "temporal", "setup", "--namespace", "azolla-prod", "--retention", "240h")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stdout, "namespace azolla-prod created (retention 240h0m0s)")
	require.Contains(t, r.stdout, "13 search attributes added: AzollaBranch, ")
	require.Equal(t, wantedSearchAttributes(), fc.namespaceAttrs("azolla-prod"))
	require.Equal(t, enumspb.INDEXED_VALUE_TYPE_BOOL, fc.namespaceAttrs("azolla-prod")["AzollaOverdue"])

	r = azolla(t, env, "temporal", "setup", "--namespace", "azolla-prod")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	require.Equal(t, "namespace azolla-prod exists (retention 240h0m0s)\n13 search attributes present\n", r.stdout)
	fc.mu.Lock()
	defer fc.mu.Unlock()
	require.Equal(t, 1, fc.registered, "the second run registered the namespace again")
	require.Equal(t, 1, fc.addCalls, "the second run added attributes again")
}

// sqlKeywordSlots is how many Keyword attributes a namespace may have on a
// SQL visibility store.
const sqlKeywordSlots = 10

// A namespace whose Keyword slots are taken gets a clear answer: which
// attributes could not be added, why, and what to do; nothing is added.
func TestTemporalSetup_SaysWhenTheNamespaceHasNoSlotLeft(t *testing.T) {
	t.Parallel()
	fc := startFakeCluster(t, 0)
	fc.addNamespace("default", 24*time.Hour, map[string]enumspb.IndexedValueType{
		"CustomerId": enumspb.INDEXED_VALUE_TYPE_KEYWORD, "AzollaObjectiveId": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"AzollaStatus": enumspb.INDEXED_VALUE_TYPE_KEYWORD, "AzollaObjectiveType": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"AzollaDiazotroph": enumspb.INDEXED_VALUE_TYPE_KEYWORD, "AzollaGateResult": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"AzollaWorkOrderId": enumspb.INDEXED_VALUE_TYPE_KEYWORD, "AzollaBranch": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"AzollaCommitSha": enumspb.INDEXED_VALUE_TYPE_KEYWORD, "AzollaTrack": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"AzollaOverdue": enumspb.INDEXED_VALUE_TYPE_BOOL})

	r := azolla(t, clusterEnv(fc), "temporal", "setup")
	require.Equal(t, exitUsage, r.code, "stdout: %s", r.stdout)
	require.Contains(t, r.stderr, "register search attributes AzollaIssue, AzollaPullRequest, AzollaQueued in namespace default: the namespace has no free slot")
	require.Contains(t, r.stderr, "azolla uses 10 of them")
	require.Contains(t, r.stderr, "give azolla a namespace of its own")
	fc.mu.Lock()
	defer fc.mu.Unlock()
	require.NotContains(t, fc.attrs["default"], "AzollaPullRequest")
}

// On a namespace that has some of the attributes, setup adds only the
// others.
func TestTemporalSetup_AddsOnlyTheMissingAttributes(t *testing.T) {
	t.Parallel()
	fc := startFakeCluster(t, 0)
	fc.addNamespace("default", 24*time.Hour, map[string]enumspb.IndexedValueType{
		"AzollaObjectiveId": enumspb.INDEXED_VALUE_TYPE_KEYWORD, "AzollaOverdue": enumspb.INDEXED_VALUE_TYPE_BOOL,
		"CustomerId": enumspb.INDEXED_VALUE_TYPE_TEXT})

	r := azolla(t, clusterEnv(fc), "temporal", "setup")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stdout, "namespace default exists (retention 24h0m0s)\n11 search attributes added: ")
	require.Contains(t, r.stdout, "2 search attributes present")
	require.NotContains(t, r.stdout, "AzollaObjectiveId")
	require.Len(t, fc.namespaceAttrs("default"), 14)
}

// An attribute registered with another type is an error that names it, and
// nothing is added.
func TestTemporalSetup_AttributeOfAnotherTypeIsAnError(t *testing.T) {
	t.Parallel()
	fc := startFakeCluster(t, 0)
	fc.addNamespace("default", 24*time.Hour, map[string]enumspb.IndexedValueType{
		"AzollaStatus": enumspb.INDEXED_VALUE_TYPE_TEXT})

	r := azolla(t, clusterEnv(fc), "temporal", "setup")
	require.Equal(t, exitUsage, r.code, "stdout: %s", r.stdout)
	require.Contains(t, r.stderr, "search attribute AzollaStatus is a Text, azolla sets a Keyword")
	require.Len(t, fc.namespaceAttrs("default"), 1)
}

// Setup waits while the frontend answers its health check NOT_SERVING, as
// one still starting does, says so on stderr, and goes on once it answers
// SERVING.
func TestTemporalSetup_WaitsUntilTheClusterIsHealthy(t *testing.T) {
	t.Parallel()
	fc := startFakeCluster(t, 0)
	fc.health.SetServingStatus(workflowServiceName, healthpb.HealthCheckResponse_NOT_SERVING)

	done := make(chan result, 1)
	go func() { done <- azolla(t, clusterEnv(fc), "temporal", "setup", "--health-timeout", "1m") }()
	select {
	case <-fc.health.probed:
	case r := <-done:
		t.Fatalf("setup ended before asking the cluster's health: %+v", r)
	}
	fc.mu.Lock()
	require.Zero(t, fc.registered, "setup went on while the cluster was NOT_SERVING")
	fc.mu.Unlock()
	fc.health.SetServingStatus(workflowServiceName, healthpb.HealthCheckResponse_SERVING)

	r := <-done
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stderr, "waiting for Temporal at "+fc.addr+" to be healthy")
	require.Contains(t, r.stderr, "NOT_SERVING")
	require.Contains(t, r.stderr, "Temporal at "+fc.addr+" is healthy")
	require.Contains(t, r.stdout, "namespace default created")
}

// Setup gives up after --health-timeout on a cluster that never answers,
// naming its address and the flag, and creates nothing; one that stays
// NOT_SERVING is refused the same way.
func TestTemporalSetup_GivesUpOnAClusterThatIsNotHealthy(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())
	sick := startFakeCluster(t, 0)
	sick.health.SetServingStatus(workflowServiceName, healthpb.HealthCheckResponse_NOT_SERVING)

	for _, tc := range []struct {
		name, addr, why string
	}{
		{"closed port", closed, "connect to Temporal at " + closed},
		{"NOT_SERVING", sick.addr, "NOT_SERVING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := azolla(t, map[string]string{"AZOLLA_TEMPORAL_ADDRESS": tc.addr, "AZOLLA_LOG_LEVEL": "error"},
				"temporal", "setup", "--health-timeout", "600ms")
			require.Equal(t, exitUnavailable, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			last := r.stderr[strings.LastIndex(strings.TrimSuffix(r.stderr, "\n"), "\n")+1:]
			require.Contains(t, last, "wait for Temporal at "+tc.addr+" to be healthy: gave up after 600ms (--health-timeout)")
			require.Contains(t, last, tc.why)
			require.Empty(t, r.stdout)
		})
	}
	sick.mu.Lock()
	defer sick.mu.Unlock()
	require.Zero(t, sick.registered)
}

// A frontend that refuses the credentials will not change its mind: setup
// says so at once instead of waiting out --health-timeout.
func TestTemporalSetup_CredentialsRefusedEndTheWaitAtOnce(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	workflowservice.RegisterWorkflowServiceServer(srv, refusingFrontend{})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)

	r := azolla(t, map[string]string{"AZOLLA_TEMPORAL_ADDRESS": l.Addr().String(), "AZOLLA_LOG_LEVEL": "error"},
		"temporal", "setup", "--health-timeout", "30s")
	require.Equal(t, exitUnavailable, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stderr, "the server refused an unauthenticated client")
	require.NotContains(t, r.stderr, "waiting for Temporal")
}

// refusingFrontend refuses every client's credentials.
type refusingFrontend struct {
	workflowservice.UnimplementedWorkflowServiceServer
}

func (refusingFrontend) GetSystemInfo(context.Context, *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	return nil, status.Error(codes.Unauthenticated, "no credentials")
}

// A frontend without the gRPC health service (behind a proxy that does not
// forward it) answers Unimplemented: setup takes its answer to the dial as
// all there is to go by, and goes on.
func TestTemporalSetup_UsesAClusterWithoutHealthService(t *testing.T) {
	t.Parallel()
	fc := newFakeCluster(t, 0, false)

	r := azolla(t, clusterEnv(fc), "temporal", "setup", "--health-timeout", "1m")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	require.NotContains(t, r.stderr, "waiting for Temporal")
	require.Contains(t, r.stdout, "namespace default created")
}

// A worker refuses a namespace without azolla's attributes, naming the
// missing ones and the command that registers them, and one that does not
// exist; it starts on one setup has prepared.
func TestWorker_RefusesANamespaceNotSetUp(t *testing.T) {
	t.Parallel()
	fc := startFakeCluster(t, 0)
	fc.addNamespace("default", 24*time.Hour, map[string]enumspb.IndexedValueType{
		"AzollaObjectiveId": enumspb.INDEXED_VALUE_TYPE_KEYWORD})
	env := clusterEnv(fc)

	r := azolla(t, env, "worker", "--no-poller")
	require.Equal(t, exitUsage, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stderr, "namespace default lacks azolla's search attributes AzollaBranch, AzollaCommitSha, ")
	require.Contains(t, r.stderr, "AzollaOverdue")
	require.NotContains(t, r.stderr, "AzollaObjectiveId")
	require.Contains(t, r.stderr, "run `azolla temporal setup --namespace default`")

	r = azolla(t, env, "worker", "--no-poller", "--namespace", "nowhere")
	require.Equal(t, exitUsage, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stderr, "namespace nowhere does not exist: run `azolla temporal setup --namespace nowhere`")
}

// checkSearchAttributes passes a namespace with every attribute, so the
// worker goes on to start.
func TestCheckSearchAttributes_PassesASetUpNamespace(t *testing.T) {
	t.Parallel()
	fc := startFakeCluster(t, 0)
	fc.addNamespace("default", time.Hour, wantedSearchAttributes())
	conn, err := grpc.NewClient(fc.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, checkSearchAttributes(t.Context(), operatorservice.NewOperatorServiceClient(conn), "default", "azolla", nil))
}
