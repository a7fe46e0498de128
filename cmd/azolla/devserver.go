//go:build devserver

package main

import (
	"context"

	"go.temporal.io/sdk/worker"

	"github.com/azolla/azolla/deploy/devserver"
	"github.com/azolla/azolla/internal/cli"
	"github.com/azolla/azolla/workers"
)

// startDevServer runs deploy/devserver for `azolla dev`. Only a build with
// the devserver tag links it: the Temporal server and its Web UI are most
// of a full binary's size and start-up time.
var startDevServer cli.StartDevServer = func(ctx context.Context, o cli.DevServerOptions) (cli.DevServer, error) {
	// The SDK's sticky cache is one per process, sized when its first
	// worker starts, and the server's own system workers start here,
	// before azolla's: bound it now, or the process keeps the SDK's default
	// (10,000 lifecycles, each five parked goroutines, all marked by every
	// collection) whatever workers.Run asks for later.
	worker.SetStickyWorkflowCacheSize(workers.WorkflowCacheSize)
	return devserver.Start(ctx, devserver.Options{Host: o.Host, GRPCPort: o.GRPCPort, UIPort: o.UIPort,
		DBPath: o.DBPath, Ephemeral: o.Ephemeral, Namespace: o.Namespace, SearchAttributes: o.SearchAttributes, Logger: o.Log})
}
