// Command azolla is the command-line front door of azolla: configuration,
// record schemas and store migrations.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv, withDevServer(startDevServer), withName(os.Args[0]))
	stop()
	os.Exit(code)
}
