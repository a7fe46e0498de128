// Command benchreport reads `go test -bench` output on stdin and prints
// every benchmark bar against its goal (see internal/benchreport). It exits
// 1 when a bar was missed or has no figure.
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
	if missed > 0 || absent > 0 {
		fmt.Printf("%d bar(s) missed, %d without a figure\n", missed, absent)
		os.Exit(1)
	}
}
