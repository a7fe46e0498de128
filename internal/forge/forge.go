// Package forge is azolla's seam to the services that hold pull requests:
// Gitea and Forgejo, GitHub, GitLab. One interface, one conformance suite
// (package forgetest) run against every implementation.
//
// The seam speaks of pull requests in one vocabulary, whatever a forge
// calls them (GitLab: merge requests, iid). Every call is azolla's own: the
// token an implementation holds never reaches an executor, and no error an
// implementation returns carries it (errors name the request, never its
// headers).
//
// Exactly once: OpenOrAdopt is the only way to create a pull request, and
// it is safe to call again with the same head branch after any failure,
// including one where the forge created the pull request and the answer
// was lost. It first looks for an open pull request from that head and
// adopts it; it creates one only when there is none, and a create the
// forge refuses because one already exists (GitHub's 422, Gitea's 409,
// GitLab's 409) adopts that one. Two callers racing therefore end with one
// pull request, both holding it.
package forge

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Forge is one repository on one forge, reached with one token.
type Forge interface {
	// OpenOrAdopt returns the open pull request whose head is p.Head and
	// base p.Base, creating it from p if there is none. created says
	// whether this call created it. A closed or merged pull request from
	// the same head is never reopened or adopted: a new one is created.
	OpenOrAdopt(ctx context.Context, p NewPullRequest) (pr PullRequest, created bool, err error)
	// Update sets a pull request's title and body.
	Update(ctx context.Context, number int, title, body string) (PullRequest, error)
	// Comment adds a comment to the pull request's conversation.
	Comment(ctx context.Context, number int, body string) error
	// PullRequest reads a pull request's current state.
	PullRequest(ctx context.Context, number int) (PullRequest, error)
	// Reviews returns the reviews submitted after cursor (the zero Cursor:
	// all of them), oldest first, each with its line comments, and the
	// cursor to pass next time. Pending (unsubmitted) reviews are not
	// returned. Calling it again with the returned cursor returns nothing
	// until a new review is submitted.
	Reviews(ctx context.Context, number int, after Cursor) ([]Review, Cursor, error)
	// Checks returns the combined status of the checks on a commit: commit
	// statuses, and on forges that have them, check runs. Posting a commit
	// status needs write access on every forge azolla speaks to, so a
	// failed check is the word of someone who may write to the
	// repository (or of a CI they set up).
	Checks(ctx context.Context, sha string) (Checks, error)
	// Permission returns what user may do in the repository, as the forge
	// says: its own collaborator or member records, never a guess. A user
	// who is not a collaborator (GitHub and GitLab answer 404), or who does
	// not exist, has PermissionNone, and no error. An error is the forge
	// refusing to answer (azolla's account may not ask) or not answering.
	Permission(ctx context.Context, user string) (Permission, error)
	// TeamMember reports whether user is an active member of team: an
	// organisation's team as "org/team" (Gitea, Forgejo; GitHub's team
	// slug), a group's full path on GitLab (members of its subgroups'
	// parents included, as GitLab counts them). A team the forge does not
	// know, or does not show azolla's account, is ErrNotFound.
	TeamMember(ctx context.Context, team, user string) (bool, error)
	// Issues reads issues and conversations, and answers in them
	// (issues.go).
	Issues
}

// NewPullRequest is what OpenOrAdopt opens.
type NewPullRequest struct {
	// Head is the branch with the work, in the same repository.
	Head string
	// Base is the branch the work is to be merged into.
	Base  string
	Title string
	Body  string
	// Draft opens it as a draft where the forge has drafts (GitLab and
	// Gitea mark drafts by a title prefix, GitHub by a flag).
	Draft bool
	// Labels are added at creation, by name. GitHub and GitLab would
	// create a label the repository does not have, so implementations
	// look labels up first and refuse the request, naming the missing
	// ones, before anything is created.
	Labels []string
	// Reviewers are requested at creation, by user name; one who may not
	// review is refused the same way. When labelling or requesting
	// reviewers fails after the pull request was created, OpenOrAdopt
	// returns it with created=true and the error: a retry adopts it
	// without them.
	Reviewers []string
}

// State is a pull request's state.
type State string

const (
	StateOpen   State = "open"
	StateMerged State = "merged"
	StateClosed State = "closed" // closed without merge
)

// PullRequest is a pull request as azolla records it.
type PullRequest struct {
	Number int
	// URL is the page a human opens (not the API's).
	URL   string
	Title string
	Body  string
	// Author is the user who opened it: azolla's own account for the pull
	// requests it opens. Its author is not one of its reviewers.
	Author string
	Head   string
	// HeadSHA is the commit the head branch points at, as the forge sees
	// it.
	HeadSHA string
	Base    string
	State   State
	Draft   bool
	// Mergeable is nil while the forge has not computed it.
	Mergeable *bool
	// Conflicts says the forge found that the pull request conflicts with
	// its base branch: GitLab names it, Gitea and GitHub say not
	// mergeable (Gitea also while it checks, a moment after a push).
	Conflicts bool
	// MergeSHA is the merge commit of a merged pull request, when the
	// forge gives one.
	MergeSHA string
}

// ReviewState is the verdict a review carries.
type ReviewState string

const (
	ReviewApproved         ReviewState = "approved"
	ReviewChangesRequested ReviewState = "changes_requested"
	ReviewCommented        ReviewState = "commented"
	// ReviewDismissed is a review whose verdict was withdrawn.
	ReviewDismissed ReviewState = "dismissed"
)

// Review is one submitted review.
type Review struct {
	// ID is the forge's id for the review (GitLab: the discussion note
	// that carried it).
	ID          string
	Author      string
	State       ReviewState
	Body        string
	SubmittedAt time.Time
	// CommitSHA is the head commit the review was made on, when known.
	CommitSHA string
	Comments  []ReviewComment
}

// ReviewComment is one comment on a line of the diff.
type ReviewComment struct {
	ID     string
	Author string
	// Path is the file, relative to the repository's root.
	Path string
	// Line is the line in the new version of the file; 0 when the
	// comment is on a removed line (OldLine then) or on the file.
	Line    int
	OldLine int
	Body    string
}

// Cursor marks how far Reviews has read. Its text is opaque to callers
// and stable across processes: azolla stores it.
type Cursor string

// CheckState is a commit's combined check state, or one check's.
type CheckState string

const (
	// ChecksNone: no check reported on the commit.
	ChecksNone    CheckState = "none"
	ChecksPending CheckState = "pending"
	ChecksSuccess CheckState = "success"
	// ChecksFailure covers failure and error.
	ChecksFailure CheckState = "failure"
)

// Checks is the combined status of a commit's checks.
type Checks struct {
	SHA string
	// State is failure if any check failed, else pending if any is not
	// done, else success; none when there are no checks.
	State  CheckState
	Checks []Check
}

// Check is one status or check run.
type Check struct {
	Name        string
	State       CheckState
	Description string
	// URL is where its details (a CI log) are, when the forge has one.
	URL string
}

// Failed returns the checks that failed.
func (c Checks) Failed() []Check {
	var out []Check
	for _, k := range c.Checks {
		if k.State == ChecksFailure {
			out = append(out, k)
		}
	}
	return out
}

// Combine computes the combined state of checks by the rule on Checks.
func Combine(checks []Check) CheckState {
	if len(checks) == 0 {
		return ChecksNone
	}
	state := ChecksSuccess
	for _, c := range checks {
		switch c.State {
		case ChecksFailure:
			return ChecksFailure
		case ChecksPending, ChecksNone:
			state = ChecksPending
		}
	}
	return state
}

// ErrNotFound: the pull request, commit or repository does not exist, or
// the token may not see it.
var ErrNotFound = errors.New("not found on the forge")

// ErrUnauthorized: the forge refused the token (missing, expired, revoked
// or without the scope). A retry does not help.
var ErrUnauthorized = errors.New("the forge refused the token")

// RateLimitError: the forge asked azolla to slow down (GitHub's primary
// and secondary rate limits, GitLab's and Gitea's 429). Retry no earlier
// than RetryAfter from now.
type RateLimitError struct {
	RetryAfter time.Duration
	// Secondary is GitHub's abuse/secondary limit, as opposed to the
	// hourly quota.
	Secondary bool
	Message   string
}

func (e *RateLimitError) Error() string {
	kind := "rate limit"
	if e.Secondary {
		kind = "secondary rate limit"
	}
	return fmt.Sprintf("forge %s: retry after %s: %s", kind, e.RetryAfter, e.Message)
}

// Permission is what a user may do in a repository, as its forge says,
// in increasing order: each level may do what the ones before it may.
type Permission int

// Permissions, mapped from each forge's own: Gitea's access modes (none,
// read, write, admin, owner), GitHub's role names (read and triage are
// read; write; maintain; admin), GitLab's access levels (Guest, Planner
// and Reporter are read; Developer is write; Maintainer is maintain;
// Owner is admin).
const (
	PermissionNone Permission = iota
	PermissionRead
	PermissionWrite
	PermissionMaintain
	PermissionAdmin
)

var permissionNames = []string{"none", "read", "write", "maintain", "admin"}

// String is the permission's name as configuration spells it.
func (p Permission) String() string {
	if p < 0 || int(p) >= len(permissionNames) {
		return fmt.Sprintf("permission(%d)", int(p))
	}
	return permissionNames[p]
}

// ParsePermission reads a permission's name.
func ParsePermission(name string) (Permission, error) {
	for i, n := range permissionNames {
		if n == name {
			return Permission(i), nil
		}
	}
	return PermissionNone, fmt.Errorf("unknown permission %q: one of %v", name, permissionNames)
}

// Kinds of forge.
const (
	KindGitea  = "gitea" // Gitea and Forgejo
	KindGitHub = "github"
	KindGitLab = "gitlab"
)
