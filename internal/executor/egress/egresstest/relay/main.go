// Command relay is azolla's egress relay alone, for tests whose process
// is not azolla's binary (package egresstest builds it).
package main

import (
	"os"

	"github.com/azolla/azolla/internal/executor/egress"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == egress.RelayCommand {
		os.Exit(egress.RelayMain(os.Args[2:]))
	}
	os.Exit(2)
}
