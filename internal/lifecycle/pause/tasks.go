package pause

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// Kinds of action of the task-management pauses (docs/protocol/tasks.md).
const (
	// ReviewProposals asks for a look at a triage round's proposals.
	ReviewProposals = "REVIEW_PROPOSALS"
	// Approve asks to approve (or reject) one proposed objective.
	Approve = "APPROVE"
	// ReviewManifest asks for a read of a written manifest.
	ReviewManifest = "REVIEW_MANIFEST"
	// ManifestAction is one of a manifest's top actions.
	ManifestAction = "MANIFEST_ACTION"
	// ReviewOverdue asks for a look at an objective past its deadline.
	ReviewOverdue = "REVIEW_OVERDUE"
	// SetDueDate asks to finish the objective or move its deadline.
	SetDueDate = "SET_DUE_DATE"
)

// maxIDLen is the schema's id length.
const maxIDLen = 200

// SubjectID is the pause state id of a triage or manifest pause about
// subjectID (a workorder, or a manifest request's event) for reason:
// "ps-<subject type>-<id>-<reason>", the id hashed when that would be too
// long for the schema.
func SubjectID(subjectType, subjectID, reason string) string {
	id := fmt.Sprintf("ps-%s-%s-%s", strings.ToLower(subjectType), subjectID, reason)
	if len(id) <= maxIDLen {
		return id
	}
	sum := sha256.Sum256([]byte(subjectID))
	return fmt.Sprintf("ps-%s-%s-%s", strings.ToLower(subjectType), hex.EncodeToString(sum[:16]), reason)
}

// subject is the pause of a triage or manifest run.
func subject(subjectType, subjectID, workOrderID, reason string, actions []Action, now time.Time) domain.PauseState {
	ps := New(Spec{WorkOrderID: workOrderID, Reason: reason, Actions: actions, Now: now})
	ps.PauseStateID = SubjectID(subjectType, subjectID, reason)
	ps.SubjectType, ps.SubjectID = subjectType, subjectID
	return ps
}

// Proposed is an objective a triage round created.
type Proposed struct {
	ObjectiveID string
	Title       string
}

// ProposalsReview hands a triage round's proposed objectives (created NEW)
// to the human: review them, then approve each.
func ProposalsReview(workOrderID string, proposed []Proposed, now time.Time) domain.PauseState {
	actions := []Action{{ReviewProposals, fmt.Sprintf("Review %d proposed objectives", len(proposed))}}
	for _, p := range proposed {
		actions = append(actions, Action{Approve, fmt.Sprintf("Approve %s (%s): azolla objective approve %s",
			p.ObjectiveID, p.Title, p.ObjectiveID)})
	}
	return subject(domain.SubjectTriage, workOrderID, workOrderID, domain.PauseProposalsReview, actions, now)
}

// TriageRetried is a triage round whose gate failed and handed its
// captures back to triage: nothing was created, and the next round takes
// them without anyone's help.
func TriageRetried(workOrderID, failure string, captureIDs []string, now time.Time) domain.PauseState {
	return triageFailure(workOrderID, failure, fmt.Sprintf("No objective was created and %s went back to triage: the next round takes them (with the built-in rules once tasks.triage.max_failures rounds in a row failed); create an objective by hand (azolla objective create) only if you would rather not wait",
		capturesOf(captureIDs)), now)
}

// TriageFailed is a triage round whose gate failed: nothing was created and
// its captures stay taken by the workorder.
// It is the last round that ran without a human: the rounds before it
// failed tasks.triage.max_failures times in a row, and it failed too.
func TriageFailed(workOrderID, failure string, captureIDs []string, now time.Time) domain.PauseState {
	return triageFailure(workOrderID, failure, fmt.Sprintf("No objective was created and %s stay taken by %s: create the objectives by hand (azolla objective create) or add the captures again (azolla capture add)",
		capturesOf(captureIDs), workOrderID), now)
}

// triageFailure is the pause of a failed triage round: its failure, then
// what became of its captures.
func triageFailure(workOrderID, failure, captures string, now time.Time) domain.PauseState {
	return subject(domain.SubjectTriage, workOrderID, workOrderID, domain.PauseGateFailed, []Action{
		{ReviewGateFailure, "Review gate failure reason: " + firstLine(failure)},
		{CreateRefined, captures},
	}, now)
}

// capturesOf names a round's captures.
func capturesOf(ids []string) string {
	if len(ids) == 0 {
		return "its captures"
	}
	return "captures " + strings.Join(ids, ", ")
}

// ManifestReady hands a written manifest to the human: read it, then its
// top actions.
func ManifestReady(workOrderID string, topActions []string, now time.Time) domain.PauseState {
	actions := []Action{{ReviewManifest, "Review the manifest: azolla manifest show " + workOrderID}}
	for _, a := range topActions {
		actions = append(actions, Action{ManifestAction, a})
	}
	return subject(domain.SubjectManifest, workOrderID, workOrderID, domain.PauseManifestReady, actions, now)
}

// ManifestFailed is a manifest run whose gate failed.
func ManifestFailed(workOrderID, failure string, now time.Time) domain.PauseState {
	return subject(domain.SubjectManifest, workOrderID, workOrderID, domain.PauseGateFailed, []Action{
		{ReviewGateFailure, "Review gate failure reason: " + firstLine(failure)},
		{Retry, "Request the manifest again: azolla manifest request"},
	}, now)
}

// ManifestBlocked is a manifest request that could not be scheduled (its
// substrate unreachable, or none configured): why, and how to try again.
func ManifestBlocked(eventID, why string, now time.Time) domain.PauseState {
	return subject(domain.SubjectManifest, eventID, "", domain.PauseBlocked, []Action{
		{ResolveBlockers, "Manifest not written: " + firstLine(why)},
		{Retry, "Request the manifest again once the substrate answers: azolla manifest request"},
	}, now)
}

// Overdue is the deadline monitor's pause of an objective past deadlineAt:
// its id is pauseID (one per objective and deadline).
func Overdue(pauseID, objectiveID, title string, deadlineAt, now time.Time) domain.PauseState {
	ps := New(Spec{ObjectiveID: objectiveID, Reason: domain.PauseOverdue, Now: now, Actions: []Action{
		{ReviewOverdue, fmt.Sprintf("Review overdue %s (%s): its deadline %s has passed",
			objectiveID, title, deadlineAt.UTC().Format(time.RFC3339))},
		{SetDueDate, "Finish it, or set a new due date"},
	}})
	ps.PauseStateID = pauseID
	d := deadlineAt.UTC()
	ps.DeadlineAt = &d
	return ps
}

// approveID is the objective an APPROVE action names ("Approve <id> ...").
func approveID(text string) string {
	f := strings.Fields(text)
	if len(f) < 2 || f[0] != "Approve" {
		return ""
	}
	return f[1]
}
