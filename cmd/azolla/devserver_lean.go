//go:build !devserver

package main

import "github.com/azolla/azolla/internal/cli"

// startDevServer is nil in the lean binary, the default build: it links
// no Temporal server, so `azolla dev` says which build has one.
var startDevServer cli.StartDevServer
