package cli

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store/storetest"
)

// show offers the command that carries out each action of the pause state,
// rendered from the action's kind; the stored words hold no command.
func TestObjectiveShow_OffersTheCommandOfEachPauseAction(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	failedWithHostileOutput(t, s, "obj-1")

	res := azolla(t, env, "objective", "show", "obj-1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "  1. Review gate failure reason: gate command exited 1: "+escapedHostile+"\n"+
		"       run: azolla objective show obj-1\n")
	require.Contains(t, res.stdout, "  2. Refine objective and retry\n"+
		`       run: azolla objective retry obj-1 --comment "what to do differently"`+"\n")
}

// A pause state written before action kinds existed prints as it was
// stored: its words already carry the command, and none is added.
func TestObjectiveShow_PrintsAPauseWithoutKindsAsStored(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	ctx := context.Background()
	require.NoError(t, s.CreateObjective(ctx, storetest.Objective("obj-1")))
	require.NoError(t, s.CreatePauseState(ctx, &domain.PauseState{PauseStateID: "ps-obj-1-0-REJECTED", ObjectiveID: "obj-1",
		Reason: domain.PauseRejected, PrioritizedActions: []string{"Rejected by ana", "Create a refined objective"},
		CreatedAt: storetest.T0}))

	res := azolla(t, env, "objective", "show", "obj-1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "  1. Rejected by ana\n  2. Create a refined objective\n")
	require.NotContains(t, res.stdout, "run:")
}
