package activities

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A task-management step heartbeats while it runs, so a heartbeat timeout
// notices a dead worker; once stopped it never beats again, and outside an
// activity it does nothing.
func TestKeepBeating_BeatsUntilStopped(t *testing.T) {
	var beats atomic.Int64
	var stopped atomic.Bool
	reached := make(chan struct{})
	stop := keepBeating(t.Context(), time.Millisecond, func() {
		if stopped.Load() {
			t.Error("beat after stop returned")
		}
		if beats.Add(1) == 3 {
			close(reached)
		}
	})
	<-reached
	stop()
	stopped.Store(true)
	require.GreaterOrEqual(t, beats.Load(), int64(3))

	// A cancelled step stops beating too.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	keepBeating(ctx, time.Millisecond, func() {})()

	alive(context.Background())() // outside an activity: a no-op
}
