package intake

import "context"

// Pass is one pass as the loop runs it, not woken: each repository is
// read only when due.
func (s *Service) Pass(ctx context.Context) (Counts, error) { return s.pass(ctx) }
