package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"

	"github.com/azolla/azolla/internal/executor/proc/proctest"
)

// The long-running commands hand the Temporal SDK the configured logger:
// its info lines (here the worker's own "Started Worker" and "Stopped
// Worker") come out at log.level in log.format, like azolla's own: on
// stderr for the worker, in dev.log for azolla dev, whose terminal only
// shows warnings and errors.
func TestWorkerAndDev_SDKLogsFollowLogLevelAndFormat(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"worker", "dev"} {
		for _, level := range []string{"info", "warn"} {
			t.Run(command+"/"+level, func(t *testing.T) {
				t.Parallel()
				stderr, devLog := runUntilPolled(t, command, level)
				logged := stderr
				if command == "dev" {
					for _, r := range jsonRecords(t, stderr) {
						require.NotEqual(t, "INFO", r["level"], "an info line on azolla dev's terminal:\n%s", stderr)
					}
					logged = devLog
				}

				records := jsonRecords(t, logged)
				sdk := map[string]map[string]any{}
				for _, r := range records {
					// One worker per task queue: the lifecycle's and the
					// deadline monitor's.
					if msg := r["msg"].(string); strings.HasSuffix(msg, " Worker") {
						sdk[msg+" "+fmt.Sprint(r["TaskQueue"])] = r
					}
				}
				if level == "warn" {
					require.Empty(t, sdk, "SDK info lines at log.level=warn:\n%s", logged)
					return
				}
				for _, msg := range []string{"Started Worker", "Stopped Worker"} {
					r, ok := sdk[msg+" azolla-sdk-log-test"]
					require.True(t, ok, "no %q line from the SDK with its TaskQueue attribute:\n%s", msg, logged)
					require.Equal(t, "INFO", r["level"])
				}
			})
		}
	}
}

// runUntilPolled runs `azolla <command>` with log.format=json at level
// against a fake frontend, stops it once the worker polls (it then has
// started), and returns what the command wrote to stderr and to
// <data_dir>/dev.log. Once Run has returned the worker has both started and
// stopped, so what was not written by then never will be.
func runUntilPolled(t *testing.T, command, level string) (stderr, devLog string) {
	t.Helper()
	fe := startFakeFrontend(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		select {
		case <-fe.polled:
			cancel()
		case <-ctx.Done():
		}
	}()

	dataDir := t.TempDir()
	env := map[string]string{"AZOLLA_DATA_DIR": dataDir, "AZOLLA_LOG_FORMAT": "json", "AZOLLA_LOG_LEVEL": level,
		"AZOLLA_TEMPORAL_ADDRESS": fe.addr, "AZOLLA_TEMPORAL_TASK_QUEUE": "azolla-sdk-log-test",
		// Any free port: another azolla dev may hold the default one.
		"AZOLLA_CONTROL_PLANE_ADDRESS": "127.0.0.1:0", "AZOLLA_OPS_ADDRESS": "127.0.0.1:0"}
	args := []string{command}
	if command == "worker" {
		args = append(args, "--no-poller")
	}
	var stdout bytes.Buffer
	errOut := &proctest.Buffer{}
	code := Run(ctx, args, &stdout, errOut, func(k string) string { return env[k] },
		WithDevServer(func(context.Context, DevServerOptions) (DevServer, error) { return fakeDevServer{fe.addr}, nil }))
	require.Equal(t, exitOK, code, "stderr:\n%s", errOut.String())
	select {
	case <-fe.polled:
	default:
		t.Fatalf("the worker never polled; stderr:\n%s", errOut.String())
	}
	log, err := os.ReadFile(filepath.Join(dataDir, "dev.log"))
	if command == "dev" {
		require.NoError(t, err, "azolla dev wrote no dev.log")
	}
	return errOut.String(), string(log)
}

// jsonRecords parses every line of out as one JSON log record.
func jsonRecords(t *testing.T, out string) []map[string]any {
	t.Helper()
	var records []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r), "not a JSON record: %s", line)
		records = append(records, r)
	}
	return records
}

// fakeFrontend is as much of a Temporal frontend as a worker needs to start
// and stop: it answers the dial, the namespace lookup and the search
// attributes check (all there) and holds every poll until the worker
// cancels it. It keeps the Temporal server out of the
// command tests' binary.
type fakeFrontend struct {
	workflowservice.UnimplementedWorkflowServiceServer
	operatorservice.UnimplementedOperatorServiceServer
	addr string
	// polled is closed at the first poll, which a worker sends once its
	// Start is under way.
	polled chan struct{}
	once   sync.Once
}

func startFakeFrontend(t *testing.T) *fakeFrontend {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fe := &fakeFrontend{addr: l.Addr().String(), polled: make(chan struct{})}
	srv := grpc.NewServer()
	workflowservice.RegisterWorkflowServiceServer(srv, fe)
	operatorservice.RegisterOperatorServiceServer(srv, fe)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return fe
}

func (*fakeFrontend) GetSystemInfo(context.Context, *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	return &workflowservice.GetSystemInfoResponse{Capabilities: &workflowservice.GetSystemInfoResponse_Capabilities{}}, nil
}

func (*fakeFrontend) DescribeNamespace(_ context.Context, r *workflowservice.DescribeNamespaceRequest) (*workflowservice.DescribeNamespaceResponse, error) {
	return &workflowservice.DescribeNamespaceResponse{
		NamespaceInfo: &namespacepb.NamespaceInfo{Name: r.GetNamespace(), State: enumspb.NAMESPACE_STATE_REGISTERED},
		Config:        &namespacepb.NamespaceConfig{},
	}, nil
}

func (*fakeFrontend) ListSearchAttributes(context.Context, *operatorservice.ListSearchAttributesRequest) (*operatorservice.ListSearchAttributesResponse, error) {
	return &operatorservice.ListSearchAttributesResponse{CustomAttributes: wantedSearchAttributes()}, nil
}

func (f *fakeFrontend) PollWorkflowTaskQueue(ctx context.Context, _ *workflowservice.PollWorkflowTaskQueueRequest) (*workflowservice.PollWorkflowTaskQueueResponse, error) {
	f.once.Do(func() { close(f.polled) })
	<-ctx.Done()
	return nil, ctx.Err()
}

func (f *fakeFrontend) PollActivityTaskQueue(ctx context.Context, _ *workflowservice.PollActivityTaskQueueRequest) (*workflowservice.PollActivityTaskQueueResponse, error) {
	f.once.Do(func() { close(f.polled) })
	<-ctx.Done()
	return nil, ctx.Err()
}

// fakeDevServer stands in for `azolla dev`'s embedded server.
type fakeDevServer struct{ addr string }

func (s fakeDevServer) FrontendAddress() string { return s.addr }
func (fakeDevServer) UIURL() string             { return "http://ui.invalid" }
func (fakeDevServer) Stop() error               { return nil }
