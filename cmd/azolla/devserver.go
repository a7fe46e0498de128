//go:build devserver

package main

import (
	"context"

	"github.com/azolla/azolla/deploy/devserver"
	"github.com/azolla/azolla/internal/cli"
)

// startDevServer runs deploy/devserver for `azolla dev`. Only a build with
// the devserver tag links it: the Temporal server and its Web UI are most
// of a full binary's size and start-up time.
var startDevServer cli.StartDevServer = func(ctx context.Context, o cli.DevServerOptions) (cli.DevServer, error) {
	return devserver.Start(ctx, devserver.Options{Host: o.Host, GRPCPort: o.GRPCPort, UIPort: o.UIPort,
		DBPath: o.DBPath, Ephemeral: o.Ephemeral, Namespace: o.Namespace, SearchAttributes: o.SearchAttributes, Logger: o.Log})
}
