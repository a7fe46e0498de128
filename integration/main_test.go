// Package integration runs azolla's lifecycle end to end on real parts: the
// embedded Temporal server, SQLite stores in temp dirs, in-process workers and
// worker processes of the azolla binary.
package integration

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/deploy/devserver"
	"github.com/azolla/azolla/internal/forge/giteatest"
	"github.com/azolla/azolla/workflows"
)

// The package shares one server (the Temporal server keeps process-wide
// state) and one azolla binary; each test has its own store and task queue.
var (
	server    *devserver.Server
	azollaBin string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "azolla-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)

	azollaBin = filepath.Join(tmp, "azolla")
	// The full build: the tests run `azolla dev` (devproc_test.go).
	build := exec.Command("go", "build", "-tags", "devserver", "-o", azollaBin, "github.com/azolla/azolla/cmd/azolla")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build azolla:", err)
		return 1
	}

	attrs := map[string]enumspb.IndexedValueType{}
	for _, k := range workflows.SearchAttributes() {
		attrs[k.GetName()] = k.GetValueType()
	}
	server, err = devserver.Start(context.Background(), devserver.Options{
		GRPCPort: freePort(), UIPort: devserver.UIDisabled, Ephemeral: true, SearchAttributes: attrs,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start Temporal dev server:", err)
		return 1
	}
	defer func() { _ = server.Stop() }()
	// The forge tests' Gitea: built before the tests run, stopped after.
	giteatest.Prepare()
	defer giteatest.StopShared()
	return m.Run()
}

// freePorts returns n distinct free ports: each is held until all are
// found, so two calls cannot hand out the same one.
func freePorts(n int) []int {
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func dialClient(t testing.TB) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: server.FrontendAddress(), Namespace: "default",
		Logger: quietSDKLogger{}})
	if err != nil {
		t.Fatalf("dial Temporal: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}
