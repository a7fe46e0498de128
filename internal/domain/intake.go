package domain

import (
	"fmt"
	"time"
)

// Work that enters azolla from outside its CLI (docs/forge.md): an issue on
// a forge, or a document posted to the ops address's /intake by another
// tracker. Each item enters once, keyed by its source and its id there,
// however many pollers see it and however often it is delivered.

// Kinds of intake item: what the outside item became.
const (
	IntakeObjective = "objective"
	IntakeCapture   = "capture"
)

// IntakeItem records one outside item and what it became.
type IntakeItem struct {
	// Source names where the item lives: a forge repository
	// ("gitea:https://git.example.com/acme/widgets", see ForgeSource), or
	// the source a posted document names ("jira", "linear").
	Source string `json:"source"`
	// ExternalID is the item's id in its source: an issue's number, a
	// document's external_id.
	ExternalID string `json:"external_id"`
	// Kind is IntakeObjective or IntakeCapture.
	Kind        string `json:"kind"`
	ObjectiveID string `json:"objective_id,omitempty"`
	CaptureID   string `json:"capture_id,omitempty"`
	// URL is the item's page, for a human.
	URL string `json:"url,omitempty"`
	// Author is who wrote the item, as its source names them.
	Author string `json:"author,omitempty"`
	// Repository is the patch.repositories key an objective targets.
	Repository string `json:"repository,omitempty"`
	// StatusCommentID is the forge comment azolla keeps the objective's
	// status in, once posted; StatusDigest the digest of the text it last
	// wrote there, so an unchanged status is not written again.
	StatusCommentID string `json:"status_comment_id,omitempty"`
	StatusDigest    string `json:"status_digest,omitempty"`
	// Closed says the item was closed at its source when last read.
	Closed bool `json:"closed"`
	// EditedAt is when, by its source's clock, the item's text was last
	// seen changed and its NEW objective's text rewritten: an approval
	// written before it approved another text.
	EditedAt  *time.Time `json:"edited_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// ForgeSource is the Source of a forge repository's issues: its kind, web
// address and repository, so two forges' issue #1 are two items.
func ForgeSource(kind, url, repository string) string {
	return fmt.Sprintf("%s:%s/%s", kind, trimSlash(url), repository)
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// Forge commands, as a comment gives them ("/azolla approve").
const (
	CommandApprove = "approve"
	CommandReject  = "reject"
	CommandRetry   = "retry"
	CommandAnswer  = "answer"
	CommandBudget  = "budget"
	CommandStatus  = "status"
)

// ForgeCommand records one command comment and what azolla did with it.
// Keyed by source and comment id: a comment is acted on once, however
// often it is read or delivered.
type ForgeCommand struct {
	Source    string `json:"source"`
	CommentID string `json:"comment_id"`
	// ObjectiveID is the objective the thread belongs to.
	ObjectiveID string `json:"objective_id"`
	// Thread is where the comment was: "issue #12", "pull request #14".
	Thread string `json:"thread"`
	// Command is one of the Command* names; Argument what followed it,
	// on one line (a reason, the words of a retry, "+5").
	Command  string `json:"command"`
	Argument string `json:"argument,omitempty"`
	Author   string `json:"author"`
	// Trusted and TrustReason are the trust rule's verdict on Author.
	Trusted     bool   `json:"trusted"`
	TrustReason string `json:"trust_reason"`
	// Result says what came of it, on one line: "approved: emitted
	// ev-…", "refused: may not write to acme/widgets (read access)".
	Result    string    `json:"result"`
	CreatedAt time.Time `json:"created_at"`
}
