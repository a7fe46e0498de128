// Command azolla is azolla's binary: workers, the control plane, remote
// workers, objective commands, verify, configuration, schemas and
// migrations. The commands live in internal/cli. Built with the devserver
// tag (`make build`), it also links the embedded Temporal server and Web UI
// that `azolla dev` runs; the default build leaves them out, for a binary a
// sixth the size that starts in a few milliseconds (`make build-lean`).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/azolla/azolla/internal/cli"
	"github.com/azolla/azolla/internal/executor/egress"
	"github.com/azolla/azolla/internal/store"
)

// storeWrapper wraps the stores the commands open: nil but in the tests'
// recording build (the azollahistory tag, history.go).
var storeWrapper func(store.Store) store.Store

func main() {
	if len(os.Args) > 1 && os.Args[1] == egress.RelayCommand {
		// Not a command of a person's: the first process of a sandbox whose
		// network is an allowlist (package sandbox), run before anything
		// else so that the run's signals reach the run's command.
		os.Exit(egress.RelayMain(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv,
		cli.WithDevServer(startDevServer), cli.WithName(os.Args[0]), cli.WithStoreWrapper(storeWrapper))
	stop()
	os.Exit(code)
}
