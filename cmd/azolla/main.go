// Command azolla is azolla's one binary: the dev server, workers, objective
// commands, verify, configuration, schemas and migrations. The commands live
// in internal/cli; this package adds what only the binary links, the
// embedded Temporal server.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/azolla/azolla/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv,
		cli.WithDevServer(startDevServer), cli.WithName(os.Args[0]))
	stop()
	os.Exit(code)
}
