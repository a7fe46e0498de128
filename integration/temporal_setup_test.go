package integration

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// `azolla temporal setup` prepares a namespace the server has never seen: a
// worker refuses it before, a second setup changes nothing, and an
// objective then runs to RUN_COMPLETE on a worker process there (a search
// attribute upsert the namespace did not know would fail its workflow
// task).
func TestTemporalSetup_NewNamespaceRunsALifecycle(t *testing.T) {
	t.Parallel()
	namespace := "it-setup-" + randomHex(4)
	b := setup(t, setupOptions{noWorker: true})
	b.env = append(b.env, "AZOLLA_TEMPORAL_NAMESPACE="+namespace)
	run := func(args ...string) (string, int) {
		out, errOut, code := b.azolla(t, args...)
		return out + errOut, code
	}

	out, code := run("worker", "--no-poller")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "namespace "+namespace+" does not exist: run `")

	out, code = run("temporal", "setup", "--retention", "24h")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "namespace "+namespace+" created (retention 24h0m0s)\n13 search attributes added: ")

	out, code = run("temporal", "setup")
	require.Equal(t, 0, code, out)
	require.Equal(t, "namespace "+namespace+" exists (retention 24h0m0s)\n13 search attributes present\n", out)

	b.workerProcess(t, "setup")
	id := uniqueID("setup")
	out, code = run("objective", "create", "--id", id, "--title", "Tidy the changelog", "--criteria", "it is tidy")
	require.Equal(t, 0, code, out)
	out, code = run("objective", "approve", id, "--by", "alice")
	require.Equal(t, 0, code, out)
	out, code = run("objective", "watch", id, "--timeout", "90s")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "RUN_COMPLETE")
}
