package patchgen

import (
	"context"
	"sync"
)

// DefaultOpenAIMaxConcurrency is the number of requests one worker process
// has in flight to one endpoint when OpenAIOptions.MaxConcurrency is zero.
const DefaultOpenAIMaxConcurrency = 4

// endpointSlots caps the requests in flight to each endpoint across the
// process: a worker may run several patch activities at once, each with its
// own generator, and the endpoint's rate limit is per key and endpoint, not
// per generator. The first generator built for a base URL sets its cap; a
// worker builds its generators from one configuration, so they agree.
var endpointSlots = struct {
	mu  sync.Mutex
	sem map[string]chan struct{}
}{sem: map[string]chan struct{}{}}

// slotsFor returns the semaphore of the endpoint at base, made with n slots
// if it is the first asked for.
func slotsFor(base string, n int) chan struct{} {
	endpointSlots.mu.Lock()
	defer endpointSlots.mu.Unlock()
	sem, ok := endpointSlots.sem[base]
	if !ok {
		sem = make(chan struct{}, n)
		endpointSlots.sem[base] = sem
	}
	return sem
}

// acquire takes a slot of sem, or returns ctx.Err() if ctx ends first; the
// caller releases a slot it got by receiving from sem.
func acquire(ctx context.Context, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
