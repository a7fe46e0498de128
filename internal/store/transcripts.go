package store

import (
	"context"

	"github.com/azolla/azolla/internal/domain"
)

// TranscriptQuerier is the storage side of run transcripts: one per
// workorder.
type TranscriptQuerier interface {
	// PutTranscript writes the workorder's one transcript, replacing the
	// one written before (a retried run's), and returns it as stored.
	PutTranscript(ctx context.Context, t *domain.Transcript) (*domain.Transcript, error)
	// GetTranscript loads a workorder's transcript; ErrNotFound if none.
	GetTranscript(ctx context.Context, workOrderID string) (*domain.Transcript, error)
	// ListTranscripts pages through transcripts in (created_at,
	// work_order_id) order, strictly after p.After, without their text.
	ListTranscripts(ctx context.Context, p PageParams) ([]*domain.Transcript, error)
	// DeleteTranscript removes a workorder's transcript and reports
	// whether there was one.
	DeleteTranscript(ctx context.Context, workOrderID string) (bool, error)
}
