// Command shapecheck holds the repository to the shape that lets a
// newcomer find their way in (docs/development.md#where-things-live): it
// prints every place the code has left it and exits 1 if there is any;
// `make lint` runs it from the repository's root. It reads the code as
// text (imports, declarations), never builds it, and leaves tests and
// testdata out.
//
// The shape:
//   - internal/ holds at most 15 folders, each a group whose Go package
//     says in its doc comment what lives there;
//   - the domain types stand on nothing of azolla's but textsafe;
//   - workflows import no storage package, and no workflow function is
//     longer than 60 lines;
//   - no type in activities has more than 25 methods (its own and those
//     its embedded types lend it), and activities
//     never import the workflow SDK;
//   - the executor group imports neither the store nor the lifecycle's
//     rules nor the remote path; the lifecycle's rules import no executor,
//     remote path or forge; and nothing under internal/ but the CLI
//     imports the Temporal-facing packages (activities, workflows,
//     workers, starter).
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	n, err := check(root, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shapecheck:", err)
		os.Exit(2)
	}
	if n > 0 {
		os.Exit(1)
	}
}

// check prints to out every way the tree at root leaves the shape, and
// says how many there were.
func check(root string, out io.Writer) (int, error) {
	t, err := read(root)
	if err != nil {
		return 0, err
	}
	var found []string
	for _, r := range rules {
		found = append(found, r(t)...)
	}
	for _, f := range found {
		fmt.Fprintln(out, f)
	}
	return len(found), nil
}
