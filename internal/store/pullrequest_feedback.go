package store

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/azolla/azolla/internal/textsafe"
)

// A pull request's feedback as azolla judged it. Only people who may
// write to the repository (or whom forge.trusted names) steer an agent
// (docs/security.md#the-forge): a review from anyone else is recorded
// here, not taken, and shown to a human; a review a round took is
// recorded in that round's own transaction, naming its author and why
// they were trusted. Records are written once and never change.

// FeedbackKind is what a piece of feedback is.
type FeedbackKind string

// Feedback kinds.
const (
	FeedbackReview FeedbackKind = "REVIEW"
	// FeedbackLineComment is a line comment by someone other than the
	// author of the review it belongs to.
	FeedbackLineComment FeedbackKind = "LINE_COMMENT"
)

// PullRequestFeedback is one review or line comment on an objective's
// pull request, and whether it was taken.
type PullRequestFeedback struct {
	ObjectiveID string `json:"objective_id"`
	// Number is the pull request's; a replaced pull request's feedback
	// keeps its own number.
	Number int `json:"number"`
	// FeedbackID is the forge's id: review-<id> or comment-<id>.
	FeedbackID string       `json:"feedback_id"`
	Kind       FeedbackKind `json:"kind"`
	Author     string       `json:"author"`
	// State is a review's verdict (forge.ReviewState's words); "" on a
	// line comment.
	State string `json:"state,omitempty"`
	// Summary is the first line of the text, safe to print
	// (FeedbackSummary).
	Summary string `json:"summary"`
	Trusted bool   `json:"trusted"`
	// TrustReason says why the author is trusted, or why not.
	TrustReason string `json:"trust_reason"`
	// TakenBy is the TICKET_READY event of the round that took it; "" when
	// not taken.
	TakenBy   string    `json:"taken_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// NotTaken says whether the feedback was refused for its author: what
// objective show and the inbox list.
func (f *PullRequestFeedback) NotTaken() bool { return !f.Trusted && f.TakenBy == "" }

// maxFeedbackSummary bounds Summary (the schema's maxLength).
const maxFeedbackSummary = 240

// FeedbackSummary is the first non-blank line of text, escaped to one
// printable line and cut to the schema's bound.
func FeedbackSummary(text string) string {
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		s := textsafe.Line(l)
		if utf8.RuneCountInString(s) > maxFeedbackSummary {
			r := []rune(s)
			s = strings.TrimRight(string(r[:maxFeedbackSummary-1]), `\`) + "…"
		}
		return s
	}
	return ""
}

// PullRequestFeedbackQuerier is the storage side of the feedback judged.
type PullRequestFeedbackQuerier interface {
	// RecordPullRequestFeedback writes each piece of feedback not recorded
	// yet (by objective, number and feedback_id) and leaves one recorded
	// as it is: judged once, a retry or a second worker writes nothing
	// more. Every record is validated first; an invalid one (feedback
	// taken from an untrusted author among them) is refused with an error
	// naming the field, and nothing of the batch is written. The objective
	// must exist. It returns how many it wrote.
	RecordPullRequestFeedback(ctx context.Context, fb []*PullRequestFeedback) (int, error)
	// ListPullRequestFeedback returns an objective's feedback in the order
	// it was recorded.
	ListPullRequestFeedback(ctx context.Context, objectiveID string) ([]*PullRequestFeedback, error)
}
