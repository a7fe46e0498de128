package controlplane_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/remote/controlplane"
)

func TestStreamFor_MapsTypesBothWays(t *testing.T) {
	t.Parallel()
	for typ, stream := range map[string]string{
		"PATCH_DIAZOTROPH":      "patch",
		"COMMAND_DIAZOTROPH":    "command",
		"TRIAGE_2_DIAZOTROPH":   "triage_2",
		"A__DIAZOTROPH":         "a_",
		"DIAZOTROPH_DIAZOTROPH": "diazotroph",
	} {
		require.Equal(t, stream, controlplane.StreamFor(typ), typ)
		require.Equal(t, typ, controlplane.DiazotrophFor(stream), stream)
		require.NoError(t, controlplane.ValidateStream(stream))
	}
}

func TestStreamFor_RefusesWhatIsNoDiazotrophType(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"", "_DIAZOTROPH", "DIAZOTROPH", "patch", "Patch_DIAZOTROPH", "PATCH-X_DIAZOTROPH",
		"PATCH_DIAZOTROPH ", "1_DIAZOTROPH", strings.Repeat("A", controlplane.MaxStreamLen+1) + "_DIAZOTROPH"} {
		require.Empty(t, controlplane.StreamFor(typ), "%q", typ)
	}
	require.Equal(t, "a", controlplane.StreamFor("A_DIAZOTROPH"))
}

func TestValidateStream_RefusesBadNames(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "Patch", "patch ", "1patch", "_patch", "pat-ch", "patch\n", "pätch",
		strings.Repeat("a", controlplane.MaxStreamLen+1)} {
		require.ErrorIs(t, controlplane.ValidateStream(s), controlplane.ErrInvalidStream, "%q", s)
		require.Empty(t, controlplane.DiazotrophFor(s), "%q", s)
	}
	require.NoError(t, controlplane.ValidateStream(strings.Repeat("a", controlplane.MaxStreamLen)))
}
