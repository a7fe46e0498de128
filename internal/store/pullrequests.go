package store

import (
	"context"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// An objective's pull request: after a gate PASS the objective's branch is
// pushed and one pull request is opened or adopted on the repository's
// forge (package forge). The store keeps one per objective, whatever
// retries and racing workers do, and the feedback already taken from it:
// the forge's review cursor and the head whose failing checks were taken,
// each moved by compare-and-swap so that a review, or a failing head, starts
// at most one revision round.

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
	RecordPullRequest(ctx context.Context, p RecordPullRequestParams) (stored *domain.PullRequest, created bool, err error)
	// GetPullRequest returns the objective's pull request, or a
	// *NotFoundError.
	GetPullRequest(ctx context.Context, objectiveID string) (*domain.PullRequest, error)
	// UpdatePullRequestState records the state the forge reports: OPEN to
	// MERGED or CLOSED, CLOSED to OPEN (reopened) or MERGED. merged_at and
	// closed_at are set on arrival (closed_at cleared on reopening). A
	// move the diagram on PullRequestState does not have, any move off
	// MERGED included, is a *TransitionError and nothing is written. The
	// same state again is no move: changed=false, unless p.HeadSHA updates
	// the head.
	UpdatePullRequestState(ctx context.Context, p UpdatePullRequestStateParams) (pr *domain.PullRequest, changed bool, err error)
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
	AdvancePullRequestCursor(ctx context.Context, p AdvancePullRequestCursorParams) (*domain.PullRequest, error)
	// ListPullRequests pages through pull requests in (created_at,
	// objective_id) order, strictly after p.After, keeping those in one of
	// p.States (every state when empty).
	ListPullRequests(ctx context.Context, p ListPullRequestsParams) ([]*domain.PullRequest, error)
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
	State       domain.PullRequestState
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
	States []domain.PullRequestState
	After  domain.Cursor
	Limit  int // zero means no limit
}
