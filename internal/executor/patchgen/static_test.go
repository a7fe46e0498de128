package patchgen_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
)

func TestStatic_ReturnsTheSuppliedPatchUnchanged(t *testing.T) {
	t.Parallel()
	g := patchgen.NewStatic()
	require.Equal(t, patchgen.StaticName, g.Name())
	out, err := g.Generate(t.Context(), patchgen.Input{ObjectiveID: "obj-1", StaticPatch: helloDiff})
	require.NoError(t, err)
	require.Equal(t, helloDiff, out.Patch)
	require.Contains(t, out.Notes, "static patch supplied with the objective")
}

func TestStatic_NoPatchIsAMisconfiguration(t *testing.T) {
	t.Parallel()
	for _, patch := range []string{"", " \n\t"} {
		out, err := patchgen.NewStatic().Generate(t.Context(), patchgen.Input{ObjectiveID: "obj-1", StaticPatch: patch})
		require.ErrorIs(t, err, patchgen.ErrNoStaticPatch)
		require.ErrorContains(t, err, "obj-1")
		require.Zero(t, out)
	}
}

func TestStatic_EndedContextIsAnError(t *testing.T) {
	t.Parallel()
	errStopping := errors.New("worker stopping")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errStopping)
	out, err := patchgen.NewStatic().Generate(ctx, patchgen.Input{StaticPatch: helloDiff})
	require.ErrorIs(t, err, errStopping)
	require.Zero(t, out)
}
