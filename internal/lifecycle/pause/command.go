package pause

import (
	"github.com/azolla/azolla/internal/domain"
)

// Command is the azolla command line that carries out the i-th action of
// ps, as invoked by self (e.g. "azolla"), or "" when the action is the
// human's alone (review a branch, resolve a blocker). Pause states written
// before kinds existed carry their commands in the text and get none here.
func Command(self string, ps *domain.PauseState, i int) string {
	if i < 0 || i >= len(ps.ActionKinds) {
		return ""
	}
	if ps.Subject() != domain.SubjectObjective {
		return subjectCommand(self, ps, i)
	}
	id := ps.ObjectiveID
	switch ps.ActionKinds[i] {
	case ReviewOutput, ReviewGateFailure, ReviewOverdue, ReviewPullRequest, ReviewSpend, ReviewRepeatedFailure:
		return self + " objective show " + id
	case AddBudget:
		return self + " objective budget " + id + " --add 5"
	case Retry:
		return self + " objective retry " + id + ` --comment "what to do differently"`
	case Answer:
		return self + " objective answer " + id + ` "your answer"`
	case Unblock:
		return self + " objective unblock " + id
	case CreateRefined:
		return self + " objective create --help"
	}
	return ""
}

// ForgeCommand is the comment that carries out the i-th action of an
// objective's pause ps on the forge ("/azolla retry <what to do
// differently>"), or "" when the forge has no command for it (a review is
// done on the forge itself, unblocking on the CLI).
func ForgeCommand(ps *domain.PauseState, i int) string {
	if i < 0 || i >= len(ps.ActionKinds) || ps.Subject() != domain.SubjectObjective {
		return ""
	}
	switch ps.ActionKinds[i] {
	case AddBudget:
		return "/azolla budget +5"
	case Retry:
		return "/azolla retry <what to do differently>"
	case Answer:
		return "/azolla answer <your answer>"
	}
	return ""
}

// subjectCommand is Command for a triage or manifest pause.
func subjectCommand(self string, ps *domain.PauseState, i int) string {
	switch ps.ActionKinds[i] {
	case ReviewProposals:
		return self + " objective list --status NEW"
	case Approve:
		if i >= len(ps.PrioritizedActions) {
			return ""
		}
		if id := approveID(ps.PrioritizedActions[i]); id != "" {
			return self + " objective approve " + id
		}
	case ReviewManifest:
		return self + " manifest show " + ps.SubjectID
	case Retry:
		if ps.Subject() == domain.SubjectManifest {
			return self + " manifest request"
		}
	case CreateRefined:
		return self + " objective create --help"
	}
	return ""
}
