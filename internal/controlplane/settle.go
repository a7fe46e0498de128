package controlplane

import (
	"context"
	"errors"
)

// Complete settles an attempt as succeeded.
func (s *Service) Complete(ctx context.Context, req CompleteRequest) (CompleteResponse, error) {
	return CompleteResponse{}, errors.New("TODO")
}

// Fail settles an attempt as failed: requeued or dead-lettered.
func (s *Service) Fail(ctx context.Context, req FailRequest) (FailResponse, error) {
	return FailResponse{}, errors.New("TODO")
}
