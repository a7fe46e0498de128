package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func countLines(s string) int { return strings.Count(s, "\n") }

func TestUsageErrorsExitTwoWithUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate" for "azolla"`},
		{"unknown subcommand", []string{"schema", "frobnicate"}, `unknown command "frobnicate" for "azolla schema"`},
		{"unknown flag", []string{"version", "--frob"}, "unknown flag: --frob"},
		{"missing argument", []string{"schema", "show"}, "accepts 1 arg(s), received 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := azolla(t, nil, tt.args...)
			require.Equal(t, 2, res.code)
			require.True(t, strings.HasPrefix(res.stderr, "azolla: "+tt.want+"\n"), res.stderr)
			require.Contains(t, res.stderr, "Usage:")
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"--help"}, {"schema"}} {
		res := azolla(t, nil, args...)
		require.Equal(t, 0, res.code, "%v: %s", args, res.stderr)
		require.Contains(t, res.stdout, "Usage:")
	}
}

func TestVersionPrintsOneLine(t *testing.T) {
	t.Parallel()
	res := azolla(t, nil, "version")
	require.Equal(t, 0, res.code)
	require.Regexp(t, `^azolla \S+ \(go[^)]+\)\n$`, res.stdout)
}
