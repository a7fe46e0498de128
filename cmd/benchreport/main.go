// Command benchreport reads `go test -bench` output on stdin and prints
// every benchmark bar against its goal (bars.go holds them). It
// reports and never fails on speed: it exits 1 only when a bar has no
// figure, because its benchmark did not run or did not report it.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	target := flag.String("target", "", "report the bars of this make target (bench-idle, bench-scale) instead of make bench's")
	flag.Parse()
	goals := Of(*target)
	if len(goals) == 0 {
		fmt.Fprintf(os.Stderr, "benchreport: no bars belong to target %q\n", *target)
		os.Exit(2)
	}
	m, err := Parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(2)
	}
	fmt.Println("\nbenchmark bars (each ratio against a baseline measured in the same run)")
	missed, absent := Report(os.Stdout, m, goals)
	fmt.Printf("%d of %d bars met, %d missed, %d without a figure\n", len(goals)-missed-absent,
		len(goals), missed, absent)
	if absent > 0 {
		os.Exit(1)
	}
}
