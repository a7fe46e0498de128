package controlplane

import (
	"context"
	"errors"
)

// Claim long-polls the request's streams for a job and starts an attempt.
func (s *Service) Claim(ctx context.Context, req ClaimRequest) (ClaimResponse, error) {
	return ClaimResponse{}, errors.New("TODO")
}

// Heartbeat extends the lease of the job's running attempt.
func (s *Service) Heartbeat(ctx context.Context, req HeartbeatRequest) (HeartbeatResponse, error) {
	return HeartbeatResponse{}, errors.New("TODO")
}
