package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// initBudget is what one azolla package's initialisation may allocate. Every
// command pays for every linked package's initialisation, `azolla version`
// included (S2), so work a command may not need, such as a regular
// expression whose counted repetition compiles into tens of kilobytes, a
// schema or a client, waits for its first use (sync.OnceValue).
const initBudget = 32 << 10

// inittraceLine is one line of GODEBUG=inittrace=1: package, bytes, allocs.
var inittraceLine = regexp.MustCompile(`^init (\S+) @.* ([0-9]+) bytes, ([0-9]+) allocs$`)

// The test binary links every package the azolla binary does; run again
// with GODEBUG=inittrace=1 and no test, it reports what each package's
// initialisation allocated.
func TestStartup_AzollaPackagesInitialiseWithinBudget(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	seen := 0
	var over []string
	for line := range strings.Lines(string(out)) {
		m := inittraceLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil || !strings.HasPrefix(m[1], "github.com/azolla/azolla/") {
			continue
		}
		seen++
		if n, _ := strconv.Atoi(m[2]); n > initBudget {
			over = append(over, m[1]+": "+m[2]+" bytes, "+m[3]+" allocs")
		}
	}
	require.NotZero(t, seen, "no azolla package in the init trace:\n%s", out)
	require.Empty(t, over, "initialisation allocates more than %d bytes; move what a command may not need to its first use", initBudget)
}
