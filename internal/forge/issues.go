package forge

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Issues is the part of the seam that reads a repository's issues and
// the conversations of its issues and pull requests: where work enters
// azolla from the forge (docs/forge.md), and where azolla answers.
//
// Times are the forge's own, to the second at best: a caller that reads
// "since" a time it saw reads the items of that second again, and must
// treat them by their ids (every use in azolla is keyed by them).
type Issues interface {
	// Issues returns the repository's issues, never its pull requests,
	// open and closed, updated at or after since (the zero time: all of
	// them), oldest update first, every page read.
	Issues(ctx context.Context, since time.Time) ([]Issue, error)
	// Issue reads one issue; ErrNotFound when there is none by that
	// number (or it is a pull request).
	Issue(ctx context.Context, number int) (Issue, error)
	// Comments returns the comments of a thread's conversation (not the
	// line comments of a review) created or edited at or after since
	// (the zero time: all of them), oldest first.
	Comments(ctx context.Context, on Thread, since time.Time) ([]Comment, error)
	// PostComment adds a comment to a thread's conversation, as azolla's
	// account, and returns it.
	PostComment(ctx context.Context, on Thread, body string) (Comment, error)
	// EditComment replaces the body of one of azolla's comments.
	EditComment(ctx context.Context, on Thread, id, body string) error
	// LabelledBy returns who last applied label to issue number, and when,
	// as the forge's history of the issue says; "" and the zero time when the
	// label was never applied (or the forge keeps no such history). Label
	// names compare without regard to case.
	LabelledBy(ctx context.Context, number int, label string) (user string, at time.Time, err error)
}

// LabelEvent is one applying (Added) or removing of a label, as a forge's
// history of an issue records it.
type LabelEvent struct {
	Label string
	Added bool
	User  string
	At    time.Time
}

// LastLabelled is LabelledBy's answer from an issue's label history,
// oldest first: the last applying of label wins, and a removal after it
// leaves no one. Label names compare without regard to case.
func LastLabelled(events []LabelEvent, label string) (user string, at time.Time) {
	for _, e := range events {
		if !strings.EqualFold(e.Label, label) {
			continue
		}
		if e.Added {
			user, at = e.User, e.At
		} else {
			user, at = "", time.Time{}
		}
	}
	return user, at
}

// Thread is an issue's or a pull request's conversation. Gitea, Forgejo
// and GitHub number both alike and keep one conversation API for both;
// GitLab keeps issues and merge requests apart, so the seam asks which.
type Thread struct {
	Number int
	Pull   bool
}

func (t Thread) String() string {
	if t.Pull {
		return fmt.Sprintf("pull request #%d", t.Number)
	}
	return fmt.Sprintf("issue #%d", t.Number)
}

// IssueState is an issue's state.
type IssueState string

const (
	IssueOpen   IssueState = "open"
	IssueClosed IssueState = "closed"
)

// Issue is an issue as azolla reads it.
type Issue struct {
	Number int
	// URL is the page a human opens (not the API's).
	URL    string
	Title  string
	Body   string
	Author string
	State  IssueState
	// Labels are the labels' names; Assignees the assigned users'.
	Labels    []string
	Assignees []string
	UpdatedAt time.Time
}

// Comment is one comment of a conversation.
type Comment struct {
	// ID is the forge's id for the comment (GitLab: the note's).
	ID        string
	Author    string
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ClosesLine is the line in a pull request's description that has the
// forge close issue number when the pull request is merged. The three
// forges azolla speaks to all read "Closes #N" for an issue of the same
// repository (GitLab's default closing pattern included it; it closes
// once the merge request lands on the default branch).
func ClosesLine(kind string, number int) string {
	switch kind {
	case KindGitea, KindGitHub, KindGitLab:
		return fmt.Sprintf("Closes #%d", number)
	}
	return ""
}
