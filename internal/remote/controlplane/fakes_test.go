package controlplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// fakeTransport is an in-memory Transport that records what happened to
// every message, so tests can assert when (and whether) one was
// acknowledged. Receive never blocks: tests poll with max_wait_ms 0.
type fakeTransport struct {
	mu       sync.Mutex
	seq      int
	messages map[string]*fakeMessage // by message id, until acknowledged or flushed
	acked    []string                // message ids acknowledged while they existed, in order
	enqueued []Message
	ackErr   error
}

type fakeMessage struct {
	Message
	delivered bool
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{messages: map[string]*fakeMessage{}}
}

func (f *fakeTransport) Enqueue(_ context.Context, stream, jobID, enqueueID string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	m := Message{Stream: stream, MessageID: fmt.Sprintf("%d-0", f.seq), JobID: jobID, EnqueueID: enqueueID}
	f.messages[m.MessageID] = &fakeMessage{Message: m}
	f.enqueued = append(f.enqueued, m)
	return m.MessageID, nil
}

// Receive returns the oldest undelivered message of the first stream that
// has one.
func (f *fakeTransport) Receive(_ context.Context, _ string, streams []string, _ time.Duration) (*Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range streams {
		var best *fakeMessage
		for _, m := range f.messages {
			if m.Stream == s && !m.delivered && (best == nil || f.older(m, best)) {
				best = m
			}
		}
		if best != nil {
			best.delivered = true
			m := best.Message
			return &m, nil
		}
	}
	return nil, nil
}

func (f *fakeTransport) older(a, b *fakeMessage) bool {
	var x, y int
	_, _ = fmt.Sscanf(a.MessageID, "%d-0", &x)
	_, _ = fmt.Sscanf(b.MessageID, "%d-0", &y)
	return x < y
}

func (f *fakeTransport) Ack(_ context.Context, _ string, messageID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ackErr != nil {
		return f.ackErr
	}
	if _, ok := f.messages[messageID]; ok { // acknowledging a missing message does nothing
		delete(f.messages, messageID)
		f.acked = append(f.acked, messageID)
	}
	return nil
}

func (f *fakeTransport) State(_ context.Context, _ string, messageID string) (MessageState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.messages[messageID]
	if !ok {
		return MessageState{}, nil
	}
	return MessageState{Exists: true, Pending: m.delivered}, nil
}

func (f *fakeTransport) Close() error { return nil }

// redeliver makes a pending message deliverable again, as XAUTOCLAIM does
// for a message whose control-plane instance died.
func (f *fakeTransport) redeliver(messageID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.messages[messageID]; ok {
		m.delivered = false
	}
}

// duplicate writes a second message for an existing one's job and
// enqueue, as an at-least-once producer may.
func (f *fakeTransport) duplicate(messageID string) string {
	f.mu.Lock()
	m := f.messages[messageID].Message
	f.mu.Unlock()
	id, _ := f.Enqueue(context.Background(), m.Stream, m.JobID, m.EnqueueID)
	return id
}

// flush loses every message, as FLUSHALL does.
func (f *fakeTransport) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messages = map[string]*fakeMessage{}
}

func (f *fakeTransport) ackedIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.acked)
}

func (f *fakeTransport) live() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.messages)
}

// fakeActivities records every call; err, if set, answers them.
type fakeActivities struct {
	mu         sync.Mutex
	heartbeats []domain.ActivityRef
	completed  []string // job ids
	failed     []string // job ids
	err        error
}

func (a *fakeActivities) Heartbeat(_ context.Context, ref domain.ActivityRef) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.heartbeats = append(a.heartbeats, ref)
	return a.err
}

func (a *fakeActivities) Complete(_ context.Context, j *domain.Job) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	a.completed = append(a.completed, j.JobID)
	return nil
}

func (a *fakeActivities) Fail(_ context.Context, j *domain.Job) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	a.failed = append(a.failed, j.JobID)
	return nil
}

func (a *fakeActivities) setErr(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.err = err
}

func (a *fakeActivities) calls() (heartbeats int, completed, failed []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.heartbeats), slices.Clone(a.completed), slices.Clone(a.failed)
}

// recordingHooks records the hooks called; errSucceed, if set, fails
// OnSucceed (and so the complete's transaction).
type recordingHooks struct {
	NopHooks
	mu           sync.Mutex
	started      int
	renewed      int
	succeeded    []string
	deadLettered []string
	errSucceed   error
}

func (h *recordingHooks) OnStart(context.Context, store.Querier, *store.StartedJobAttempt) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started++
	return nil
}

func (h *recordingHooks) OnRenew(context.Context, store.Querier, *domain.Job, *domain.JobLease) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.renewed++
	return nil
}

func (h *recordingHooks) OnSucceed(_ context.Context, _ store.Querier, j *domain.Job) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.errSucceed != nil {
		return h.errSucceed
	}
	h.succeeded = append(h.succeeded, j.JobID)
	return nil
}

func (h *recordingHooks) OnDeadLetter(_ context.Context, _ store.Querier, j *domain.Job) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deadLettered = append(h.deadLettered, j.JobID)
	return nil
}

// clock is a settable clock for leases and timestamps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var errInjected = errors.New("injected failure")
