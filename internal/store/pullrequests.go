package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// An objective's pull request: after a gate PASS the objective's branch is
// pushed and one pull request is opened or adopted on the repository's
// forge (package forge). The store keeps one per objective, whatever
// retries and racing workers do, and the feedback already taken from it:
// the forge's review cursor and the head whose failing checks were taken,
// each moved by compare-and-swap so that a review, or a failing head, starts
// at most one revision round.

// PullRequestState is a pull request's state as azolla last saw it.
//
//	OPEN ──closed──▶ CLOSED ──a new pull request (RecordPullRequest)──▶ OPEN, another number
//	 │  ◀──reopened──  │
//	merged           merged (reopened and merged between two looks)
//	 ▼                 │
//	MERGED ◀───────────┘  final: nothing moves a merged pull request
type PullRequestState string

// Pull request states.
const (
	PullRequestOpen   PullRequestState = "OPEN"
	PullRequestMerged PullRequestState = "MERGED"
	// PullRequestClosed is closed without merge.
	PullRequestClosed PullRequestState = "CLOSED"
)

// pullRequestMoves is the diagram above: the states each state may move to.
var pullRequestMoves = map[PullRequestState][]PullRequestState{
	PullRequestOpen:   {PullRequestMerged, PullRequestClosed},
	PullRequestClosed: {PullRequestOpen, PullRequestMerged},
	PullRequestMerged: nil,
}

// PullRequestStates returns every state (a new slice each time).
func PullRequestStates() []PullRequestState {
	return []PullRequestState{PullRequestOpen, PullRequestMerged, PullRequestClosed}
}

// PullRequestMayMove reports whether a pull request in from may move to to
// (staying in from is no move).
func PullRequestMayMove(from, to PullRequestState) bool {
	return slices.Contains(pullRequestMoves[from], to)
}

// pullRequestMovesTo returns, as strings, the states that may move to to.
func pullRequestMovesTo(to PullRequestState) []string {
	var out []string
	for _, from := range PullRequestStates() {
		if PullRequestMayMove(from, to) {
			out = append(out, string(from))
		}
	}
	return out
}

// PullRequest is an objective's one pull request.
type PullRequest struct {
	ObjectiveID string `json:"objective_id"`
	// WorkOrderID is the workorder whose PASS last pushed to it.
	WorkOrderID string `json:"work_order_id"`
	// Forge is the kind of forge (forge.KindGitea, KindGitHub, KindGitLab);
	// Repository its owner/name there.
	Forge      string `json:"forge"`
	Repository string `json:"repository"`
	Number     int    `json:"number"`
	URL        string `json:"url"`
	// HeadBranch is always the objective's branch, azolla/<objective_id>.
	HeadBranch string           `json:"head_branch"`
	BaseBranch string           `json:"base_branch"`
	HeadSHA    string           `json:"head_sha"`
	State      PullRequestState `json:"state"`
	// Adopted says it was open before azolla asked for it, as the first
	// record of it found it.
	Adopted bool `json:"adopted"`
	// ReviewCursor is the forge's cursor (forge.Cursor) after the last
	// review taken, "" before any.
	ReviewCursor string `json:"review_cursor"`
	// ChecksSHA is the head whose failing checks were last taken.
	ChecksSHA string `json:"checks_sha,omitempty"`
	// Rounds counts the revision rounds started on this pull request, the
	// first (the run that opened it) included.
	Rounds    int        `json:"rounds"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	MergedAt  *time.Time `json:"merged_at,omitempty"`
	ClosedAt  *time.Time `json:"closed_at,omitempty"`
}

// Same reports whether p is pull request number on repository of forge.
func (p *PullRequest) Same(forge, repository string, number int) bool {
	return p.Forge == forge && p.Repository == repository && p.Number == number
}

// CheckHeadBranch refuses a head that is not the objective's own branch,
// azolla/<objective_id> (the branch its workorders push), so that one pull
// request per objective means one per branch. The schema cannot say it;
// the error names /head_branch and wraps ErrInvalid.
func (p *PullRequest) CheckHeadBranch() error {
	if want := "azolla/" + p.ObjectiveID; p.HeadBranch != want {
		return fmt.Errorf("invalid pull_request: /head_branch: %q is not the objective's branch %s: %w",
			p.HeadBranch, want, ErrInvalid)
	}
	return nil
}

// Ref names the pull request as "<forge> <repository>#<number>".
func (p *PullRequest) Ref() string {
	return p.Forge + " " + p.Repository + "#" + strconv.Itoa(p.Number)
}

// PullRequestQuerier is the storage side of an objective's pull request.
type PullRequestQuerier interface {
	// RecordPullRequest records the pull request a PASS of p.WorkOrderID
	// opened or adopted for p.ObjectiveID, and returns the stored one:
	//
	//   - none recorded: it is inserted OPEN, round 1, with no feedback
	//     taken; created=true.
	//   - the same one recorded (forge, repository and number): a retry, a
	//     second worker, or a new round pushed to it. work_order_id and
	//     head_sha are updated if they differ, nothing else (state moves
	//     only by UpdatePullRequestState); created=false. On a MERGED one a
	//     change is a *TransitionError.
	//   - another one recorded, OPEN or MERGED: a *PullRequestConflictError
	//     (ErrPullRequestConflict), nothing written: an objective has one
	//     pull request.
	//   - another one recorded, CLOSED (a human closed it without merging):
	//     the new one replaces it as if none had been recorded, its rounds
	//     and feedback starting afresh; created=true. The closed one stays
	//     on the forge, closed, and azolla does not follow it any more.
	//
	// An unknown objective or workorder, or a workorder of another
	// objective, is refused; the objective must exist and so must the
	// workorder.
	RecordPullRequest(ctx context.Context, p RecordPullRequestParams) (stored *PullRequest, created bool, err error)
	// GetPullRequest returns the objective's pull request, or a
	// *NotFoundError.
	GetPullRequest(ctx context.Context, objectiveID string) (*PullRequest, error)
	// UpdatePullRequestState records the state the forge reports: OPEN to
	// MERGED or CLOSED, CLOSED to OPEN (reopened) or MERGED. merged_at and
	// closed_at are set on arrival (closed_at cleared on reopening). A
	// move the diagram on PullRequestState does not have, any move off
	// MERGED included, is a *TransitionError and nothing is written. The
	// same state again is no move: changed=false, unless p.HeadSHA updates
	// the head.
	UpdatePullRequestState(ctx context.Context, p UpdatePullRequestStateParams) (pr *PullRequest, changed bool, err error)
	// AdvancePullRequestCursor takes feedback once: it moves review_cursor
	// from p.From to p.To by compare-and-swap, records p.ChecksSHA as the
	// head whose failing checks were taken (refused if it is that already),
	// and with p.NewRound counts a revision round (only on an OPEN pull
	// request). Of two callers starting from the same cursor, one wins;
	// the other gets a *PullRequestStaleError (ErrPullRequestStale) and
	// nothing is written, so a restart never replays feedback into a
	// second round. A round that takes no feedback (p.To == p.From, no
	// p.ChecksSHA: a human asked for it) is counted by the same swap, which
	// then cannot tell two callers apart: their own compare-and-swap (the
	// objective's transition) must. A call that changes nothing is
	// refused (ErrInvalid).
	AdvancePullRequestCursor(ctx context.Context, p AdvancePullRequestCursorParams) (*PullRequest, error)
	// ListPullRequests pages through pull requests in (created_at,
	// objective_id) order, strictly after p.After, keeping those in one of
	// p.States (every state when empty).
	ListPullRequests(ctx context.Context, p ListPullRequestsParams) ([]*PullRequest, error)
}

// RecordPullRequestParams is the pull request a PASS opened or adopted, as
// the forge answered.
type RecordPullRequestParams struct {
	ObjectiveID string
	WorkOrderID string
	Forge       string
	Repository  string
	Number      int
	URL         string
	// HeadBranch must be the objective's branch, azolla/<objective_id>.
	HeadBranch string
	BaseBranch string
	// HeadSHA is the commit azolla pushed.
	HeadSHA string
	// Adopted: the forge had it open before azolla asked (OpenOrAdopt's
	// created=false).
	Adopted bool
	Now     time.Time
}

// UpdatePullRequestStateParams records a state the forge reported.
type UpdatePullRequestStateParams struct {
	ObjectiveID string
	State       PullRequestState
	// HeadSHA, when set, replaces head_sha: the head as the forge sees it.
	HeadSHA string
	Now     time.Time
}

// AdvancePullRequestCursorParams takes one batch of feedback.
type AdvancePullRequestCursorParams struct {
	ObjectiveID string
	// From is the cursor the caller read reviews after; To the cursor the
	// forge returned with them. To may equal From when only checks are
	// taken.
	From string
	To   string
	// ChecksSHA, when set, is the head whose failing checks are taken.
	ChecksSHA string
	// NewRound counts one more revision round.
	NewRound bool
	Now      time.Time
}

// ListPullRequestsParams asks for one page of pull requests.
type ListPullRequestsParams struct {
	States []PullRequestState
	After  Cursor
	Limit  int // zero means no limit
}

// Sentinels of the pull request rules.
var (
	// ErrPullRequestConflict: the objective has another pull request, open
	// or merged.
	ErrPullRequestConflict = errors.New("the objective has another pull request")
	// ErrPullRequestStale: the feedback was taken already (the cursor
	// moved on, or the checks of that head were taken).
	ErrPullRequestStale = errors.New("pull request feedback taken already")
)

// PullRequestConflictError refuses a second pull request for an objective.
type PullRequestConflictError struct {
	// Stored is the pull request the objective has.
	Stored *PullRequest
	// Forge, Repository and Number name the one refused.
	Forge      string
	Repository string
	Number     int
}

func (e *PullRequestConflictError) Error() string {
	return fmt.Sprintf("objective %s has %s pull request %s (%s); %s %s#%d is another, and an objective has one pull request",
		e.Stored.ObjectiveID, e.Stored.State, e.Stored.Ref(), e.Stored.URL, e.Forge, e.Repository, e.Number)
}

// Is makes errors.Is(err, ErrPullRequestConflict) true.
func (e *PullRequestConflictError) Is(target error) bool { return target == ErrPullRequestConflict }

// PullRequestStaleError says why feedback was not taken: another caller
// took it first.
type PullRequestStaleError struct {
	ObjectiveID string
	// ReviewCursor and ChecksSHA are the stored ones, as found.
	ReviewCursor string
	ChecksSHA    string
	Reason       string // e.g. `review cursor is "b", not "a"`
}

func (e *PullRequestStaleError) Error() string {
	return fmt.Sprintf("pull request of objective %s: %s", e.ObjectiveID, e.Reason)
}

// Is makes errors.Is(err, ErrPullRequestStale) true.
func (e *PullRequestStaleError) Is(target error) bool { return target == ErrPullRequestStale }

// PullRequestTransitionError refuses a pull request's move from current to
// to; errors.Is(err, ErrInvalidTransition) holds.
func PullRequestTransitionError(objectiveID string, current, to PullRequestState) *TransitionError {
	return &TransitionError{Kind: "pull request of objective", ObjectiveID: objectiveID,
		Current: string(current), From: pullRequestMovesTo(to), To: string(to)}
}
