// Command benchreport reads `go test -bench` output on stdin and prints
// every benchmark bar against its goal (see internal/benchreport). It
// reports and never fails on speed: it exits 1 only when a bar has no
// figure, because its benchmark did not run or did not report it.
package main

import (
	"fmt"
	"os"

	"github.com/azolla/azolla/internal/benchreport"
)

func main() {
	m, err := benchreport.Parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(2)
	}
	fmt.Println("\nbenchmark bars (each ratio against a baseline measured in the same run)")
	missed, absent := benchreport.Report(os.Stdout, m)
	fmt.Printf("%d of %d bars met, %d missed, %d without a figure\n", len(benchreport.Goals)-missed-absent,
		len(benchreport.Goals), missed, absent)
	if absent > 0 {
		os.Exit(1)
	}
}
