package pause

import "github.com/azolla/azolla/internal/store"

// Command is the azolla command line that carries out the i-th action of
// ps, as invoked by self (e.g. "azolla"), or "" when the action is the
// human's alone (review a branch, resolve a blocker). Pause states written
// before kinds existed carry their commands in the text and get none here.
func Command(self string, ps *store.PauseState, i int) string {
	if i < 0 || i >= len(ps.ActionKinds) {
		return ""
	}
	id := ps.ObjectiveID
	switch ps.ActionKinds[i] {
	case ReviewOutput, ReviewGateFailure:
		return self + " objective show " + id
	case Retry:
		return self + " objective retry " + id + ` --comment "what to do differently"`
	case Unblock:
		return self + " objective unblock " + id
	case CreateRefined:
		return self + " objective create --help"
	}
	return ""
}
