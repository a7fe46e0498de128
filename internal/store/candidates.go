package store

import (
	"context"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// CandidateQuerier stores a workorder's candidates (best-of-N).
type CandidateQuerier interface {
	// PutCandidate validates c and inserts it, or replaces the stored
	// candidate of (work_order_id, attempt), keeping its created_at. It
	// fills in patch_sha256 from the patch when empty. c.Chosen must be
	// false (ChooseCandidate chooses). Once a candidate of the workorder is
	// chosen it returns an error wrapping ErrCandidatesSettled; a write
	// that would change the status of a candidate no longer RUNNING, one
	// wrapping ErrCandidateFinished; an unknown workorder is a
	// *NotFoundError; either way nothing changes.
	PutCandidate(ctx context.Context, c *domain.Candidate) (*domain.Candidate, error)
	// GetCandidate loads one candidate; a missing one is a *NotFoundError.
	GetCandidate(ctx context.Context, workOrderID string, attempt int) (*domain.Candidate, error)
	// ListCandidates returns the workorder's candidates by attempt.
	ListCandidates(ctx context.Context, workOrderID string) ([]*domain.Candidate, error)
	// ChooseCandidate marks one candidate the workorder's winner, with why
	// (kept as it was when p.Why is empty). Choosing the chosen one again
	// returns it unchanged; choosing another once one is chosen is an error
	// wrapping ErrCandidatesSettled, also when two choose at once; an
	// unknown candidate is a *NotFoundError.
	ChooseCandidate(ctx context.Context, p ChooseCandidateParams) (*domain.Candidate, error)
}

// ChooseCandidateParams names the winning candidate.
type ChooseCandidateParams struct {
	WorkOrderID string
	Attempt     int
	Why         string
	Now         time.Time
}
