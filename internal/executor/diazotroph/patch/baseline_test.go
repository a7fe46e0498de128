package patch_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A failing gate command says whether it failed on the base commit too
// (the patch did not break it) or passed there (the patch did); the
// baseline is computed once per base commit and kept.
func TestCheck_AFailureSaysWhetherTheBaseCommitFailedToo(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	// The good patch makes greet.sh take a name; the README never says
	// "goodbye"; the base commit's greet.sh echoes hello.
	tb.settings.GateCommands, tb.settings.GateBudget = []string{
		"grep -q goodbye README.md",
		"grep -qx 'echo hello' src/greet.sh",
	}, time.Minute
	c := executed(t, tb)
	v, err := tb.p.Check(context.Background(), c)
	require.NoError(t, err)
	require.False(t, v.Pass)
	require.False(t, v.Environment, "the patch's failure, not the environment's")
	require.Contains(t, v.Reason, "gate command \"grep -q goodbye README.md\" exited with status 1")
	require.Contains(t, v.Reason, "\nbaseline: it fails on the base commit too: it failed before the change\noutput tail:",
		"after the line naming the command, before its output")

	kept, err := filepath.Glob(filepath.Join(tb.gitDir, "baselines", "*.json"))
	require.NoError(t, err)
	require.Len(t, kept, 1, "kept once computed")
	require.NoError(t, os.WriteFile(kept[0], []byte(`{"grep -q goodbye README.md":true,"grep -qx 'echo hello' src/greet.sh":true}`), 0o644))
	v, err = tb.p.Check(context.Background(), c)
	require.NoError(t, err)
	require.Contains(t, v.Reason, "baseline: it passes on the base commit: the change broke it",
		"the kept baseline is read, not computed again")

	tb.settings.GateCommands = []string{"grep -qx 'echo hello' src/greet.sh"}
	v, err = tb.p.Check(context.Background(), c)
	require.NoError(t, err)
	require.False(t, v.Pass)
	require.Contains(t, v.Reason, "\nbaseline: it passes on the base commit: the change broke it\n")
}
