package storetest

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
)

func deliver(call, ret int64, bundle string, created bool, stored string) porcupine.Operation {
	return porcupine.Operation{Input: OutcomeInput{WorkOrder: "wo-1", Bundle: bundle}, Call: call, Return: ret,
		Output: OutcomeOutput{Created: created, Stored: stored}}
}

// The outcome model takes one bundle per workorder, the first, and sees
// a second one created, or a delivery answered with a bundle other than
// the first, as the violations they are.
func TestOutcomeModel_OneBundlePerWorkorder(t *testing.T) {
	t.Parallel()
	legal := []porcupine.Operation{deliver(0, 10, "OK a", true, "OK a"), deliver(5, 20, "OK b", false, "OK a"),
		deliver(30, 40, "OK c", false, "OK a")}
	require.True(t, porcupine.CheckOperations(OutcomeModel(), legal))
	// Two concurrent deliveries: either may have been first.
	concurrent := []porcupine.Operation{deliver(0, 10, "OK a", false, "OK b"), deliver(1, 9, "OK b", true, "OK b")}
	require.True(t, porcupine.CheckOperations(OutcomeModel(), concurrent))
	// An unknown delivery may have been the one kept.
	unknown := []porcupine.Operation{{Input: OutcomeInput{WorkOrder: "wo-1", Bundle: "OK a"}, Call: 0, Return: 1 << 62,
		Output: OutcomeOutput{Unknown: true}}, deliver(5, 6, "OK b", false, "OK a")}
	require.True(t, porcupine.CheckOperations(OutcomeModel(), unknown))

	twice := []porcupine.Operation{deliver(0, 10, "OK a", true, "OK a"), deliver(20, 30, "OK b", true, "OK b")}
	require.False(t, porcupine.CheckOperations(OutcomeModel(), twice), "a second bundle created")
	replaced := []porcupine.Operation{deliver(0, 10, "OK a", true, "OK a"), deliver(20, 30, "OK c", false, "OK a"),
		deliver(40, 50, "OK d", false, "OK c")}
	require.False(t, porcupine.CheckOperations(OutcomeModel(), replaced), "the kept bundle replaced")
}
