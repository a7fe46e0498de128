package redisstream

import (
	"context"
	"time"

	"github.com/azolla/azolla/internal/remote/controlplane"
)

// BlockOnly is Receive without its non-blocking pass: the BLOCK a race
// with enqueuers may answer with an entry on each of several streams.
func (t *Transport) BlockOnly(ctx context.Context, consumer string, streams []string, wait time.Duration) (*controlplane.Message, error) {
	keys := make([]string, len(streams))
	for i, s := range streams {
		keys[i] = t.Key(s)
	}
	return t.block(ctx, consumer, streams, keys, wait)
}
