package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The lean binary has no embedded server: `azolla dev` says so and names
// the build that has one, before it touches config, store or ports.
func TestDev_LeanBinaryNamesTheBuildWithTheServer(t *testing.T) {
	t.Parallel()
	r := azolla(t, nil, "dev")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "without the embedded Temporal server that azolla dev runs")
	require.Contains(t, r.stderr, "`make build`")
	require.Contains(t, r.stderr, "-tags devserver")
}
