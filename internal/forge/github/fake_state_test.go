package github_test

// The fake's state: what GitHub holds for one repository, as much of it as
// azolla's calls touch, and the faults it can be told to answer.

import (
	"net/http"
	"time"
)

// fakeUser is one of the people with a token. What they may do in the
// repository is their role (fakeGitHub.roles), not a field of theirs.
type fakeUser struct {
	login string
	id    int64
}

// fakeTeam is one of the organisation's teams, its memberships by
// lower-case login.
type fakeTeam struct {
	id          int64
	slug, name  string
	memberships map[string]fakeMembership
}

type fakeMembership struct {
	role  string // member or maintainer
	state string // active, or pending until the invitation is accepted
}

type fakeBranch struct {
	sha    string
	files  []string
	pushes int
}

type fakePull struct {
	number         int
	id             int64
	title, body    string
	author         string
	head, base     string
	headSHA        string
	state          string // open or closed
	draft          bool
	merged         bool
	mergedBy       string
	mergeSHA       string // the test merge commit while open, the merge commit once merged
	mergeableKnown bool
	labels         []string
	assignees      []string
	reviewers      []string
	created        time.Time
	updated        time.Time
	closed         time.Time
	mergedAt       time.Time
}

// fakeIssue is an issue that is not a pull request. GitHub numbers issues
// and pull requests alike, from one sequence (fakeGitHub.lastNumber); a
// pull request's issue side (labels, conversation) is kept on its
// fakePull.
type fakeIssue struct {
	number      int
	id          int64
	title, body string
	author      string
	state       string // open or closed
	stateReason string // completed, not_planned, reopened; "" while never closed
	closedBy    string
	labels      []string
	assignees   []string
	created     time.Time
	updated     time.Time
	closed      time.Time
}

// fakeIssueComment is one comment of an issue's or a pull request's
// conversation.
type fakeIssueComment struct {
	id               int64
	number           int
	author, body     string
	created, updated time.Time
}

type fakeReview struct {
	id        int64
	pull      int
	author    string
	state     string
	body      string
	commit    string
	submitted time.Time
}

type fakeComment struct {
	id, review   int64
	pull         int
	author       string
	path, side   string
	line         int
	outdated     bool // the line left the diff: line is null
	body, commit string
	created      time.Time
}

type fakeStatus struct {
	id          int64
	sha, state  string
	context     string
	description string
	targetURL   string
	creator     string
	created     time.Time
}

type fakeCheckRun struct {
	id                 int64
	sha, name          string
	status, conclusion string
	title, detailsURL  string
	started, completed time.Time
}

type fakeLabel struct {
	id                 int64
	name, color, descr string
}

// fault is an answer given in place of the next one to azolla's token.
type fault struct {
	status     int
	primary    bool          // x-ratelimit-remaining 0, reset after resetIn
	resetIn    time.Duration // primary
	retryAfter time.Duration // secondary: the Retry-After header, none when 0
	message    string
	docURL     string
}

// primaryLimit is GitHub's answer once the hourly quota is spent.
func primaryLimit(resetIn time.Duration) fault {
	return fault{status: http.StatusForbidden, primary: true, resetIn: resetIn,
		message: "API rate limit exceeded for user ID 1001.",
		docURL:  "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits"}
}

// secondaryLimit is GitHub's answer to too many requests at once.
func secondaryLimit(retryAfter time.Duration) fault {
	return fault{status: http.StatusForbidden, retryAfter: retryAfter,
		message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
		docURL:  "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}
}
