package controlplane

import (
	"context"
	"errors"

	"github.com/azolla/azolla/internal/store"
)

// Enqueue stores a QUEUED job, then writes its message. It is idempotent
// by work order: a job not yet settled for p.WorkOrderID gets p.Activity
// recorded and is returned as it is.
func (s *Service) Enqueue(ctx context.Context, p EnqueueParams) (*store.Job, error) {
	return nil, errors.New("TODO")
}
