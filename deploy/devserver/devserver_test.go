package devserver_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/azolla/azolla/deploy/devserver"
)

const taskQueue = "devserver-test"

// quietLogger keeps SDK info chatter out of test output.
var quietLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

var searchAttributes = map[string]enums.IndexedValueType{
	"AzollaStatus":      enums.INDEXED_VALUE_TYPE_KEYWORD,
	"AzollaObjectiveId": enums.INDEXED_VALUE_TYPE_KEYWORD,
}

func TestStart_EphemeralRunsWorkflowsUpdatesAndUI(t *testing.T) {
	t.Parallel()
	ports := freePorts(t, 2)
	srv := start(t, devserver.Options{
		GRPCPort:         ports[0],
		UIPort:           ports[1],
		Ephemeral:        true,
		Namespace:        "azolla-test",
		SearchAttributes: searchAttributes,
	})
	c := dial(t, srv, "azolla-test")
	ctx := t.Context()

	_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "azolla-test"})
	require.NoError(t, err)
	listed, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "azolla-test"})
	require.NoError(t, err)
	for name, typ := range searchAttributes {
		require.Equal(t, typ, listed.GetCustomAttributes()[name], name)
	}

	runWorker(t, c)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "greet",
		TaskQueue: taskQueue,
		// Setting an attribute proves it is usable right after Start.
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword("AzollaStatus").ValueSet("running")),
	}, greetWorkflow, "azolla")
	require.NoError(t, err)

	update, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   run.GetID(),
		UpdateName:   greetUpdate,
		Args:         []any{"hello"},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	require.NoError(t, err)
	var ack string
	require.NoError(t, update.Get(ctx, &ack))
	require.Equal(t, "accepted hello", ack)

	var msg string
	require.NoError(t, run.Get(ctx, &msg))
	require.Equal(t, "hello, azolla", msg)

	resp, err := http.Get(srv.UIURL())
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestStart_FileDatabaseSurvivesRestart(t *testing.T) {
	t.Parallel()
	opts := devserver.Options{
		GRPCPort:         freePorts(t, 1)[0],
		UIPort:           devserver.UIDisabled,
		DBPath:           filepath.Join(t.TempDir(), "nested", "dev.db"),
		SearchAttributes: searchAttributes,
	}
	ctx := t.Context()

	// First life: start a workflow and let a worker block it on the signal.
	first := start(t, opts)
	c := dial(t, first, "default")
	w := runWorker(t, c)
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "wait", TaskQueue: taskQueue},
		waitForSignalWorkflow, "before")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := c.QueryWorkflow(ctx, "wait", "", stateQuery)
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)
	w.Stop()
	c.Close()
	require.NoError(t, first.Stop())

	// Second life on the same file and port, in the same process; the
	// already registered search attributes must not fail the start.
	second := start(t, opts)
	c = dial(t, second, "default")
	runWorker(t, c)
	require.NoError(t, c.SignalWorkflow(ctx, "wait", "", resumeSignal, "after"))
	var out string
	require.NoError(t, c.GetWorkflow(ctx, "wait", "").Get(ctx, &out))
	require.Equal(t, "before after", out)
}

func TestStart_SearchAttributeTypeConflictFailsAndCleansUp(t *testing.T) {
	t.Parallel()
	opts := devserver.Options{
		GRPCPort:         freePorts(t, 1)[0],
		UIPort:           devserver.UIDisabled,
		DBPath:           filepath.Join(t.TempDir(), "dev.db"),
		SearchAttributes: map[string]enums.IndexedValueType{"AzollaStatus": enums.INDEXED_VALUE_TYPE_KEYWORD},
	}
	require.NoError(t, start(t, opts).Stop())

	conflicting := opts
	conflicting.SearchAttributes = map[string]enums.IndexedValueType{"AzollaStatus": enums.INDEXED_VALUE_TYPE_INT}
	srv, err := devserver.Start(t.Context(), conflicting)
	require.ErrorContains(t, err, "AzollaStatus exists")
	require.Nil(t, srv)

	// The failed Start stopped what it had started: the port is free again.
	start(t, opts)
}

// Not parallel: parallel tests wait until it is done, so the goroutine dump
// holds no other test's workers.
func TestStop_ReleasesPortsAndLeavesNoWorkerPolling(t *testing.T) {
	ports := freePorts(t, 2)
	srv := start(t, devserver.Options{GRPCPort: ports[0], UIPort: ports[1], Ephemeral: true})
	require.NoError(t, srv.Stop())
	require.NoError(t, srv.Stop(), "second Stop")

	for _, port := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		require.NoError(t, err, "port %d still taken after Stop", port)
		require.NoError(t, l.Close())
	}
	// SDK workers inside the server that outlive Stop would poll whichever
	// server next listens on the port.
	require.Eventually(t, func() bool {
		buf := make([]byte, 8<<20)
		return !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("sdk/internal.(*baseWorker)"))
	}, 5*time.Second, 50*time.Millisecond, "SDK worker goroutines still running after Stop")
}

func TestStart_PortInUseNamesThePort(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = taken.Close() })
	port := taken.Addr().(*net.TCPAddr).Port

	for name, opts := range map[string]devserver.Options{
		"frontend": {GRPCPort: port, UIPort: devserver.UIDisabled, Ephemeral: true},
		"ui":       {GRPCPort: freePorts(t, 1)[0], UIPort: port, Ephemeral: true},
	} {
		t.Run(name, func(t *testing.T) {
			srv, err := devserver.Start(t.Context(), opts)
			require.ErrorIs(t, err, devserver.ErrPortInUse)
			require.ErrorContains(t, err, strconv.Itoa(port))
			require.Nil(t, srv)
		})
	}
}

// start runs a server for the test and stops it when the test ends.
func start(t *testing.T, o devserver.Options) *devserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	srv, err := devserver.Start(ctx, o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Stop()) })
	return srv
}

func dial(t *testing.T, srv *devserver.Server, namespace string) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  srv.FrontendAddress(),
		Namespace: namespace,
		Logger:    sdklog.NewStructuredLogger(quietLogger),
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func runWorker(t *testing.T, c client.Client) worker.Worker {
	t.Helper()
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterWorkflow(waitForSignalWorkflow)
	w.RegisterActivity(composeGreeting)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return w
}

// freePorts returns n distinct ports nothing listens on right now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// azollaAttributes are the eight keyword attributes azolla's lifecycle sets.
var azollaAttributes = []string{"AzollaObjectiveId", "AzollaStatus", "AzollaObjectiveType", "AzollaDiazotroph",
	"AzollaGateResult", "AzollaWorkOrderId", "AzollaBranch", "AzollaCommitSha"}

func keywords(names ...string) map[string]enums.IndexedValueType {
	m := map[string]enums.IndexedValueType{}
	for _, n := range names {
		m[n] = enums.INDEXED_VALUE_TYPE_KEYWORD
	}
	return m
}

// setAll sets every attribute in names, as a lifecycle start does.
func setAll(names []string) temporal.SearchAttributes {
	var updates []temporal.SearchAttributeUpdate
	for _, n := range names {
		updates = append(updates, temporal.NewSearchAttributeKeyKeyword(n).ValueSet("x"))
	}
	return temporal.NewSearchAttributes(updates...)
}

// A start that sets the search attributes is accepted as soon as Start has
// returned, on a new namespace and on one that lacked some of them.
func TestStart_SearchAttributesAreUsableWhenStartReturns(t *testing.T) {
	t.Parallel()
	existing := devserver.Options{
		GRPCPort:         freePorts(t, 1)[0],
		UIPort:           devserver.UIDisabled,
		DBPath:           filepath.Join(t.TempDir(), "dev.db"),
		SearchAttributes: keywords("AzollaStatus"),
	}
	require.NoError(t, start(t, existing).Stop())
	existing.SearchAttributes = keywords(azollaAttributes...)

	for name, opts := range map[string]devserver.Options{
		"new namespace": {GRPCPort: freePorts(t, 1)[0], UIPort: devserver.UIDisabled, Ephemeral: true,
			SearchAttributes: keywords(azollaAttributes...)},
		"namespace lacking some": existing,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := dial(t, start(t, opts), "default")
			_, err := c.SignalWithStartWorkflow(t.Context(), "probe", resumeSignal, "now",
				client.StartWorkflowOptions{TaskQueue: taskQueue, TypedSearchAttributes: setAll(azollaAttributes)},
				waitForSignalWorkflow, "before")
			require.NoError(t, err)
		})
	}
}

// A client that starts lifecycles while the server is still starting (a
// script run right after `azolla dev`) may find it not answering yet, but
// never answering and refusing the search attributes.
func TestStart_NoStartIsRefusedForItsSearchAttributesWhileStarting(t *testing.T) {
	t.Parallel()
	opts := devserver.Options{
		GRPCPort:         freePorts(t, 1)[0],
		UIPort:           devserver.UIDisabled,
		DBPath:           filepath.Join(t.TempDir(), "dev.db"),
		SearchAttributes: keywords("AzollaStatus"),
	}
	// The namespace knows one attribute; the restart below brings seven more.
	require.NoError(t, start(t, opts).Stop())
	opts.SearchAttributes = keywords(azollaAttributes...)

	// A raw connection that redials every few milliseconds and holds each
	// call until it is connected, so that calls reach the server from the
	// first moment it listens (an SDK client backs off for seconds after
	// refused connections).
	conn, err := grpc.NewClient(net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.GRPCPort)),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: time.Second,
			Backoff: backoff.Config{BaseDelay: 5 * time.Millisecond, Multiplier: 1, MaxDelay: 5 * time.Millisecond}}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ws := workflowservice.NewWorkflowServiceClient(conn)
	value, err := converter.GetDefaultDataConverter().ToPayload("x")
	require.NoError(t, err)
	fields := map[string]*commonpb.Payload{}
	for _, name := range azollaAttributes {
		fields[name] = value
	}
	probe := &workflowservice.SignalWithStartWorkflowExecutionRequest{
		Namespace: "default", WorkflowId: "probe", SignalName: resumeSignal,
		WorkflowType:     &commonpb.WorkflowType{Name: "waitForSignalWorkflow"},
		TaskQueue:        &taskqueuepb.TaskQueue{Name: taskQueue},
		SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields},
	}

	type started struct {
		srv *devserver.Server
		err error
	}
	startedC := make(chan started, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		srv, err := devserver.Start(ctx, opts)
		startedC <- started{srv, err}
	}()
	// Calls run one after another from before the server listens until
	// Start has returned. Those that reach no server time out waiting for
	// the connection; none that does may be refused.
	var refusals []string
	var srv *devserver.Server
	for srv == nil {
		select {
		case s := <-startedC:
			require.NoError(t, s.err)
			t.Cleanup(func() { require.NoError(t, s.srv.Stop()) })
			srv = s.srv
			continue
		default:
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, err := ws.SignalWithStartWorkflowExecution(ctx, probe, grpc.WaitForReady(true))
		cancel()
		if status.Code(err) == codes.InvalidArgument {
			refusals = append(refusals, err.Error())
		}
	}
	require.Empty(t, refusals, "starts refused while the server was starting")

	// Once Start has returned, a start is accepted. A new client: the one
	// above may still be backing off from the refused connections.
	_, err = dial(t, srv, "default").SignalWithStartWorkflow(t.Context(), "probe", resumeSignal, "now",
		client.StartWorkflowOptions{TaskQueue: taskQueue, TypedSearchAttributes: setAll(azollaAttributes)},
		waitForSignalWorkflow, "before")
	require.NoError(t, err, "a start after Start returned")
}
