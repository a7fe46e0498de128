// Package pause builds pause states, the hand-back of an objective to a
// human: for each way a lifecycle pauses, which actions the human gets, in
// which order and in which words. It is the one place those are decided.
//
// Activities name actions by kind and give the facts (a branch, a failure's
// first line); New renders the words stored in prioritized_actions, which
// follow the protocol (docs/protocol/lifecycle.md#pause-states), and stores the kinds beside them. The command
// that carries an action out is not stored: a client renders it from the
// kind at the edge (Command), as the user invoked azolla.
package pause

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/textsafe"
)

// Kinds of action, as stored in pause_state.action_kinds.
const (
	// ReviewOutput asks for a look at a run's output (no branch to review).
	ReviewOutput = "REVIEW_OUTPUT"
	// ReviewBranch asks for a review of the work branch (docs/protocol/patch-flow.md#pass).
	ReviewBranch = "REVIEW_BRANCH"
	// ConfirmCompletion asks the human to confirm the objective is done.
	ConfirmCompletion = "CONFIRM_COMPLETION"
	// KeepBranch warns that the work branch was not pushed and lives only in
	// a workspace that will be pruned: push or fetch it before then.
	KeepBranch = "KEEP_BRANCH"
	// ReviewGateFailure asks for a look at why the gate failed.
	ReviewGateFailure = "REVIEW_GATE_FAILURE"
	// Retry asks to refine the objective and retry (objective retry).
	Retry = "RETRY"
	// ResolveBlockers asks to resolve the objective's blockers.
	ResolveBlockers = "RESOLVE_BLOCKERS"
	// Unblock asks to re-emit TICKET_READY once resolved (objective unblock).
	Unblock = "UNBLOCK"
	// ReviewRejection records who rejected the objective and why.
	ReviewRejection = "REVIEW_REJECTION"
	// CreateRefined suggests a refined objective if the work is still wanted.
	CreateRefined = "CREATE_REFINED"
	// ReviewPullRequest points at the objective's pull request.
	ReviewPullRequest = "REVIEW_PULL_REQUEST"
	// AddBudget asks to raise the objective's budget_usd (objective
	// budget --add) before another run may start.
	AddBudget = "ADD_BUDGET"
	// ReviewSpend records that the objective's runs spent past its budget.
	ReviewSpend = "REVIEW_SPEND"
	// ReviewRepeatedFailure warns that the gate failed the same way as in
	// the round before: retrying unchanged would likely fail again.
	ReviewRepeatedFailure = "REVIEW_REPEATED_FAILURE"
	// PartialWork says the run left partial work the next round resumes
	// from (docs/patches.md#partial-work).
	PartialWork = "PARTIAL_WORK"
	// Answer asks for the answer to the question the round's agent asked
	// (objective answer), which starts the next round
	// (docs/patches.md#questions).
	Answer = "ANSWER"
)

// Action is one thing the human should do: its kind and the words for it.
type Action struct {
	Kind string
	Text string
}

// Spec is what a pause state is made of.
type Spec struct {
	ObjectiveID string
	// Seq is the objective's status_seq after the transition that paused it:
	// it keys the pause state, so a retried step writes the same one.
	Seq         int64
	WorkOrderID string
	Reason      string
	Actions     []Action
	Now         time.Time
}

// ID is the pause state id of an objective's pause for reason at seq.
func ID(objectiveID string, seq int64, reason string) string {
	return fmt.Sprintf("ps-%s-%d-%s", objectiveID, seq, reason)
}

// New is the pause state of s: its id, its actions' words and kinds. Every
// action's text is made one safe line, whatever the facts in it held.
func New(s Spec) domain.PauseState {
	ps := domain.PauseState{PauseStateID: ID(s.ObjectiveID, s.Seq, s.Reason), ObjectiveID: s.ObjectiveID,
		WorkOrderID: s.WorkOrderID, Reason: s.Reason, CreatedAt: s.Now}
	for _, a := range s.Actions {
		ps.PrioritizedActions = append(ps.PrioritizedActions, textsafe.Line(a.Text))
		ps.ActionKinds = append(ps.ActionKinds, a.Kind)
	}
	return ps
}

// RunComplete is a PASS (docs/protocol/patch-flow.md#pass): review the branch (or, without one, the
// output) and confirm. keep, when set, warns that the branch was not pushed.
func RunComplete(objectiveID string, seq int64, workOrderID, branch string, keep *Action, now time.Time) domain.PauseState {
	return RunCompleteOn(objectiveID, seq, workOrderID, branch, "", keep, nil, now)
}

// RunCompleteOn is RunComplete on a branch whose pull request is known:
// the review action names it. spent, when set, records that the runs went
// past the objective's budget (Overspent).
func RunCompleteOn(objectiveID string, seq int64, workOrderID, branch, pullRequest string, keep, spent *Action, now time.Time) domain.PauseState {
	review := Action{ReviewOutput, "Review the output of " + workOrderID}
	switch {
	case branch != "" && pullRequest != "":
		review = Action{ReviewBranch, "Review PR " + pullRequest}
	case branch != "":
		review = Action{ReviewBranch, "Review PR on " + branch}
	}
	actions := []Action{review}
	for _, a := range []*Action{keep, spent} {
		if a != nil {
			actions = append(actions, *a)
		}
	}
	actions = append(actions, Action{ConfirmCompletion, "Confirm completion"})
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, WorkOrderID: workOrderID, Reason: domain.PauseRunComplete,
		Actions: actions, Now: now})
}

// GateFailed is a FAIL (docs/protocol/patch-flow.md#fail): review the failure, then refine and retry.
// repeated, when set, says the failure is the previous round's again
// (Repeated).
func GateFailed(objectiveID string, seq int64, workOrderID, failure string, keep, repeated *Action, now time.Time) domain.PauseState {
	actions := []Action{{ReviewGateFailure, "Review gate failure reason: " + firstLine(failure)}}
	if repeated != nil {
		actions = append(actions, *repeated)
	}
	actions = append(actions, Action{Retry, "Refine objective and retry"})
	if keep != nil {
		actions = append(actions, *keep)
	}
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, WorkOrderID: workOrderID, Reason: domain.PauseGateFailed,
		Actions: actions, Now: now})
}

// BudgetSpent is a FAIL after which the objective's runs have spent its
// budget: review the failure, raise the budget, then retry. No run starts
// before the budget is raised. Without a failure ("") it is a round that
// was not started (a pull request's review asked for one).
func BudgetSpent(objectiveID string, seq int64, workOrderID, failure string, standing budget.Standing,
	keep, repeated *Action, now time.Time) domain.PauseState {
	var actions []Action
	if failure != "" {
		actions = append(actions, Action{ReviewGateFailure, "Review gate failure reason: " + firstLine(failure)})
	}
	if repeated != nil {
		actions = append(actions, *repeated)
	}
	actions = append(actions,
		Action{AddBudget, standing.Told() + ": raise the budget to run again"},
		Action{Retry, "Then refine objective and retry"})
	if keep != nil {
		actions = append(actions, *keep)
	}
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, WorkOrderID: workOrderID, Reason: domain.PauseBudgetSpent,
		Actions: actions, Now: now})
}

// Question is a round whose agent asked a human a question and exited:
// answer it (the answer starts the next round, which resumes the partial
// work), or, when the runs have spent the objective's budget, raise it
// first. The question is the first action's, made one line.
func Question(objectiveID string, seq int64, workOrderID, question string, standing budget.Standing,
	now time.Time) domain.PauseState {
	var actions []Action
	if standing.Exhausted() {
		actions = append(actions, Action{AddBudget, standing.Told() + ": raise the budget before the answer can start a round"})
	}
	actions = append(actions, Action{Answer, "Answer the agent's question: " + question})
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, WorkOrderID: workOrderID, Reason: domain.PauseQuestion,
		Actions: actions, Now: now})
}

// Overspent is the action that records runs past the budget on a PASS.
func Overspent(standing budget.Standing) *Action {
	return &Action{ReviewSpend, standing.Told()}
}

// Repeated warns that the gate failed as in the round of workOrderID.
func Repeated(workOrderID string) *Action {
	return &Action{ReviewRepeatedFailure, "The same failure as the round before (" + workOrderID +
		"): the same command failed with the same first error lines; change the approach before retrying"}
}

// Blocked is the scheduler's (docs/protocol/patch-flow.md#blockers): resolve the blockers, then re-emit.
func Blocked(objectiveID string, seq int64, blockers []string, now time.Time) domain.PauseState {
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, Reason: domain.PauseBlocked, Now: now, Actions: []Action{
		{ResolveBlockers, fmt.Sprintf("Resolve blockers for %s: %s", objectiveID, strings.Join(blockers, "; "))},
		{Unblock, "Re-emit TICKET_READY after resolution"},
	}})
}

// EnvironmentBlocked is the gate's, when a run failed for its environment
// rather than its patch (its setup, a tool that could not start, a sandbox
// limit): fix the environment, then unblock; no round was charged.
func EnvironmentBlocked(objectiveID string, seq int64, workOrderID, blocker, fix string, now time.Time) domain.PauseState {
	actions := []Action{{ResolveBlockers, "Fix the environment of " + objectiveID + ": " + firstLine(blocker)}}
	if fix != "" {
		actions = append(actions, Action{ResolveBlockers, "How: " + firstLine(fix)})
	}
	actions = append(actions, Action{Unblock, "Then unblock: the next round runs in the fixed environment"})
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, WorkOrderID: workOrderID, Reason: domain.PauseBlocked, Now: now,
		Actions: actions})
}

// Rejected ends a NEW objective that a human refused.
func Rejected(objectiveID string, seq int64, by, comment string, now time.Time) domain.PauseState {
	why := "Rejected by " + by
	if by == "" {
		why = "Rejected by a reviewer"
	}
	if comment != "" {
		why += ": " + comment
	}
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, Reason: domain.PauseRejected, Now: now, Actions: []Action{
		{ReviewRejection, why},
		{CreateRefined, "Create a refined objective if the work is still wanted"},
	}})
}

// KeepBranchAction warns that branch was not pushed anywhere: it lives only
// in the runner's workspace, which is pruned retention after the objective
// is done or the workorder is superseded by a retry.
func KeepBranchAction(branch string, retention time.Duration) *Action {
	return &Action{KeepBranch, fmt.Sprintf("Push or fetch %s within %s: it was not pushed and lives only in the runner's workspace, which is pruned then",
		branch, Duration(retention))}
}

// Duration says d the way a person would: "7 days", "36 hours", "90 minutes".
func Duration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour && d%(24*time.Hour) == 0:
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	case d >= 2*time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d >= 2*time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

// Warned reports whether ps told the human, beforehand, that the work
// branch would be pruned with its workspace.
func Warned(ps *domain.PauseState) bool {
	for _, k := range ps.ActionKinds {
		if k == KeepBranch {
			return true
		}
	}
	return false
}

// firstLine is the first non-empty line of s, or a placeholder.
func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if l = strings.TrimSpace(l); l == "" {
		return "(no reason given)"
	}
	return l
}

// WasRejected reports whether the objective whose pause states are pauses,
// oldest first, was rejected: its latest pause of its own (an OVERDUE pause
// is the monitor's, not its own) is REJECTED. A rejected objective stays
// NEW and waits for nobody. It is the one rule every part of azolla asks,
// the lifecycle with the one pause it knows (nil entries are skipped).
func WasRejected(pauses []*domain.PauseState) bool {
	for _, p := range slices.Backward(pauses) {
		if p != nil && p.Reason != domain.PauseOverdue {
			return p.Reason == domain.PauseRejected
		}
	}
	return false
}

// PullRequestClosed: the objective's pull request was closed without
// merge (docs/pull-requests.md). The objective stays DONE and its work on
// its branch; if the work is still wanted, it is a new objective.
func PullRequestClosed(objectiveID string, seq int64, workOrderID, url string, now time.Time) domain.PauseState {
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, WorkOrderID: workOrderID, Reason: domain.PausePullRequestClosed,
		Now: now, Actions: []Action{
			{ReviewPullRequest, "Pull request " + url + " was closed without merge"},
			{CreateRefined, "Create a refined objective if the work is still wanted"},
		}})
}

// RevisionLimit: review or checks asked for changes again, but the pull
// request has had forge.max_rounds rounds; a human decides.
func RevisionLimit(objectiveID string, seq int64, url string, rounds int, waiting string, now time.Time) domain.PauseState {
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, Reason: domain.PauseRevisionLimit, Now: now, Actions: []Action{
		{ReviewPullRequest, fmt.Sprintf("Review pull request %s: %d rounds, and still %s", url, rounds, waiting)},
		{Retry, "Retry for one more round, or take it from here"},
	}})
}

// Closed on the forge: the issue an objective came from was closed while
// the objective was in flight (docs/forge.md#an-issues-way-through). The round
// that was running keeps its verdict; nothing more starts by itself.

// ClosedAfterPass is a PASS whose issue was closed while the round ran:
// the objective is DONE, its work on its branch, and no pull request is
// opened for it.
func ClosedAfterPass(objectiveID string, seq int64, workOrderID, issue, branch string, now time.Time) domain.PauseState {
	review := Action{ReviewOutput, "Issue " + issue + " was closed on the forge while the round ran: it passed, " +
		"and no pull request was opened; review the output of " + workOrderID}
	if branch != "" {
		review = Action{ReviewBranch, "Issue " + issue + " was closed on the forge while the round ran: it passed, " +
			"and no pull request was opened; its work is on " + branch}
	}
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, WorkOrderID: workOrderID, Reason: domain.PauseClosedOnForge,
		Now: now, Actions: []Action{review,
			{CreateRefined, "Create a refined objective (or open a new issue) if the work is still wanted"}}})
}

// ClosedAfterFail is a FAIL whose issue was closed while the round ran:
// the objective waits, as after any FAIL, for a human's retry, which
// nothing on the forge gives by itself.
func ClosedAfterFail(objectiveID string, seq int64, workOrderID, issue, failure string, now time.Time) domain.PauseState {
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, WorkOrderID: workOrderID, Reason: domain.PauseClosedOnForge,
		Now: now, Actions: []Action{
			{ReviewGateFailure, "Issue " + issue + " was closed on the forge while the round ran; it failed: " + firstLine(failure)},
			{Retry, "Reopen the issue and retry if the work is still wanted"},
		}})
}

// ClosedInReview: the issue was closed while the objective's pull request
// was open. The pull request is left as it is, for a human to close or
// merge; its reviews start no round by themselves, a human's retry still
// does.
func ClosedInReview(objectiveID string, seq int64, workOrderID, issue, url string, now time.Time) domain.PauseState {
	return New(Spec{ObjectiveID: objectiveID, Seq: seq, WorkOrderID: workOrderID, Reason: domain.PauseClosedOnForge,
		Now: now, Actions: []Action{
			{ReviewPullRequest, "Issue " + issue + " was closed on the forge while pull request " + url +
				" was open: close the pull request, or merge it"},
			{Retry, "Reopen the issue and retry for another round if the work is still wanted"},
		}})
}

// WithPartialWork adds to a FAIL's pause that its run left partial work,
// which the next round starts from.
func WithPartialWork(ps domain.PauseState, pw *domain.PartialWork) domain.PauseState {
	if pw == nil {
		return ps
	}
	ps.PrioritizedActions = append(ps.PrioritizedActions, textsafe.Line(fmt.Sprintf(
		"Partial work kept: %d file(s) (%s), commit %s; the next round resumes from it (retry --fresh starts over)",
		pw.FilesChanged, strings.Join(pw.Files, ", "), pw.CommitSHA)))
	ps.ActionKinds = append(ps.ActionKinds, PartialWork)
	return ps
}
