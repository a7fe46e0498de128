package store

import (
	"context"

	"github.com/azolla/azolla/internal/domain"
)

// A pull request's feedback as azolla judged it. Only people who may
// write to the repository (or whom forge.trusted names) steer an agent
// (docs/security.md#the-forge): a review from anyone else is recorded
// here, not taken, and shown to a human; a review a round took is
// recorded in that round's own transaction, naming its author and why
// they were trusted. Records are written once and never change.

// PullRequestFeedbackQuerier is the storage side of the feedback judged.
type PullRequestFeedbackQuerier interface {
	// RecordPullRequestFeedback writes each piece of feedback not recorded
	// yet (by objective, number and feedback_id) and leaves one recorded
	// as it is: judged once, a retry or a second worker writes nothing
	// more. Every record is validated first; an invalid one (feedback
	// taken from an untrusted author among them) is refused with an error
	// naming the field, and nothing of the batch is written. The objective
	// must exist. It returns how many it wrote.
	RecordPullRequestFeedback(ctx context.Context, fb []*domain.PullRequestFeedback) (int, error)
	// ListPullRequestFeedback returns an objective's feedback in the order
	// it was recorded.
	ListPullRequestFeedback(ctx context.Context, objectiveID string) ([]*domain.PullRequestFeedback, error)
}
