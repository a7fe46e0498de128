package main

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/azolla/azolla/deploy/devserver"
	"github.com/azolla/azolla/internal/cli"
)

// startDevServer runs deploy/devserver for `azolla dev`.
func startDevServer(ctx context.Context, o cli.DevServerOptions) (cli.DevServer, error) {
	attrs := make(map[string]enumspb.IndexedValueType, len(o.SearchAttributes))
	for _, name := range o.SearchAttributes {
		attrs[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	return devserver.Start(ctx, devserver.Options{Host: o.Host, GRPCPort: o.GRPCPort, UIPort: o.UIPort,
		DBPath: o.DBPath, Ephemeral: o.Ephemeral, Namespace: o.Namespace, SearchAttributes: attrs, Logger: o.Log})
}
