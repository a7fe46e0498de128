package domain

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/azolla/azolla/internal/textsafe"
)

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
