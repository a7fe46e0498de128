package domain

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

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
