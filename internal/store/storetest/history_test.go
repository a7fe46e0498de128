package storetest

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"
)

func deliver(call, ret int64, bundle string, created bool, stored string) porcupine.Operation {
	return porcupine.Operation{Input: OutcomeInput{Rule: RuleBundle, Key: "wo-1", Value: bundle}, Call: call, Return: ret,
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
	unknown := []porcupine.Operation{{Input: OutcomeInput{Rule: RuleBundle, Key: "wo-1", Value: "OK a"}, Call: 0, Return: 1 << 62,
		Output: OutcomeOutput{Unknown: true}}, deliver(5, 6, "OK b", false, "OK a")}
	require.True(t, porcupine.CheckOperations(OutcomeModel(), unknown))

	twice := []porcupine.Operation{deliver(0, 10, "OK a", true, "OK a"), deliver(20, 30, "OK b", true, "OK b")}
	require.False(t, porcupine.CheckOperations(OutcomeModel(), twice), "a second bundle created")
	replaced := []porcupine.Operation{deliver(0, 10, "OK a", true, "OK a"), deliver(20, 30, "OK c", false, "OK a"),
		deliver(40, 50, "OK d", false, "OK c")}
	require.False(t, porcupine.CheckOperations(OutcomeModel(), replaced), "the kept bundle replaced")
}

func write(rule string, call, ret int64, value string, out OutcomeOutput) porcupine.Operation {
	return porcupine.Operation{Input: OutcomeInput{Rule: rule, Key: "k", Value: value}, Call: call, Return: ret, Output: out}
}

// An objective keeps its one pull request: recorded again it is not
// created, and another is refused; a second one created, or another
// refused while none is kept, are violations. A workorder's chosen
// candidate is kept the same way.
func TestOutcomeModel_OnePullRequestAndOneChosenCandidate(t *testing.T) {
	t.Parallel()
	pr := RulePullRequest
	legal := []porcupine.Operation{write(pr, 0, 10, "7", OutcomeOutput{Created: true, Stored: "7"}),
		write(pr, 20, 30, "7", OutcomeOutput{Stored: "7"}), write(pr, 40, 50, "8", OutcomeOutput{Refused: true})}
	require.True(t, porcupine.CheckOperations(OutcomeModel(), legal))
	unknown := []porcupine.Operation{write(pr, 0, 1<<62, "8", OutcomeOutput{Unknown: true}),
		write(pr, 5, 6, "7", OutcomeOutput{Refused: true})}
	require.True(t, porcupine.CheckOperations(OutcomeModel(), unknown), "the unknown one may have been kept")

	second := []porcupine.Operation{write(pr, 0, 10, "7", OutcomeOutput{Created: true, Stored: "7"}),
		write(pr, 20, 30, "8", OutcomeOutput{Created: true, Stored: "8"})}
	require.False(t, porcupine.CheckOperations(OutcomeModel(), second), "a second pull request")
	emptyRefusal := []porcupine.Operation{write(pr, 0, 10, "7", OutcomeOutput{Refused: true})}
	require.False(t, porcupine.CheckOperations(OutcomeModel(), emptyRefusal), "refused with none kept")
	answeredOther := []porcupine.Operation{write(pr, 0, 10, "7", OutcomeOutput{Created: true, Stored: "7"}),
		write(pr, 20, 30, "8", OutcomeOutput{Stored: "7"})}
	require.False(t, porcupine.CheckOperations(OutcomeModel(), answeredOther), "another one answered, not refused")

	ch := RuleChosen
	chosen := []porcupine.Operation{write(ch, 0, 10, "2", OutcomeOutput{Stored: "2"}), write(ch, 20, 30, "2", OutcomeOutput{Stored: "2"}),
		write(ch, 40, 50, "1", OutcomeOutput{Refused: true})}
	require.True(t, porcupine.CheckOperations(OutcomeModel(), chosen))
	twoChosen := []porcupine.Operation{write(ch, 0, 10, "2", OutcomeOutput{Stored: "2"}), write(ch, 20, 30, "1", OutcomeOutput{Stored: "1"})}
	require.False(t, porcupine.CheckOperations(OutcomeModel(), twoChosen), "a second candidate chosen")
}
