package sqlstore

import (
	"context"
	"errors"

	"github.com/azolla/azolla/internal/store"
)

// Stubs of the task-management store methods, replaced as they are built.

var errNotBuilt = errors.New("not built yet")

func (q *querier) CreatePauseStateOnce(ctx context.Context, p *store.PauseState) (*store.PauseState, bool, error) {
	return nil, false, errNotBuilt
}

func (q *querier) GetPauseState(ctx context.Context, id string) (*store.PauseState, error) {
	return nil, errNotBuilt
}

func (q *querier) ListPauseStatesPage(ctx context.Context, p store.ListPauseStatesParams) ([]*store.PauseState, error) {
	return nil, errNotBuilt
}

func (q *querier) MarkEventHandedOver(ctx context.Context, p store.MarkEventHandedOverParams) error {
	return errNotBuilt
}

func (q *querier) ListObjectivesPage(ctx context.Context, p store.ObjectivesPageParams) ([]*store.Objective, error) {
	return nil, errNotBuilt
}

func (q *querier) ListUntakenCaptures(ctx context.Context, limit int) ([]*store.CaptureBuffer, error) {
	return nil, errNotBuilt
}

func (q *querier) TakeCaptures(ctx context.Context, p store.TakeCapturesParams) error {
	return errNotBuilt
}

func (q *querier) ProcessCapture(ctx context.Context, p store.ProcessCaptureParams) (*store.CaptureBuffer, error) {
	return nil, errNotBuilt
}
