package dbqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store"
)

// DefaultPollInterval is how often a waiting Receive looks at the table
// for messages written by other processes.
const DefaultPollInterval = 100 * time.Millisecond

// ErrClosed is returned by a Transport used after Close.
var ErrClosed = errors.New("database transport closed")

// Options configures a Transport. Zero values take the defaults.
type Options struct {
	// LeaseTTL is the control plane's lease TTL; MinIdle must exceed it.
	LeaseTTL time.Duration
	// MinIdle is how long a delivered, unacknowledged message waits before
	// another consumer may take it. Default 2×LeaseTTL.
	MinIdle time.Duration
	// PollInterval: see DefaultPollInterval.
	PollInterval time.Duration
	// Now is the clock of deliveries and idle times; nil means time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = controlplane.DefaultLeaseTTL
	}
	if o.MinIdle <= 0 {
		o.MinIdle = 2 * o.LeaseTTL
	}
	if o.MinIdle <= o.LeaseTTL {
		return o, fmt.Errorf("database transport: min-idle %s must exceed the lease TTL %s", o.MinIdle, o.LeaseTTL)
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Messages is what the transport needs of the store: the job_messages
// table, store.JobStore's *JobMessage methods.
type Messages interface {
	EnqueueJobMessage(ctx context.Context, m *domain.JobMessage) (*domain.JobMessage, error)
	ReceiveJobMessage(ctx context.Context, p store.ReceiveJobMessageParams) (*domain.JobMessage, error)
	AckJobMessage(ctx context.Context, stream, messageID string) error
	GetJobMessage(ctx context.Context, stream, messageID string) (*domain.JobMessage, error)
}

// Transport is controlplane.Transport over the store; see the package doc.
// It is safe for concurrent use. Close does not close the store.
type Transport struct {
	store Messages
	opts  Options

	mu sync.Mutex
	// enqueued is closed, and replaced, by every Enqueue: the waiters'
	// broadcast.
	enqueued chan struct{}
	closed   chan struct{}
	isClosed bool
}

var _ controlplane.Transport = (*Transport)(nil)

// New returns a transport over s.
func New(s Messages, o Options) (*Transport, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Transport{store: s, opts: o, enqueued: make(chan struct{}), closed: make(chan struct{})}, nil
}

// Options returns the options in effect, defaults filled in.
func (t *Transport) Options() Options { return t.opts }

// Close wakes every waiting Receive (they return nothing) and refuses
// later calls.
func (t *Transport) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.isClosed {
		t.isClosed = true
		close(t.closed)
	}
	return nil
}

func (t *Transport) checkOpen() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.isClosed {
		return ErrClosed
	}
	return nil
}

// Enqueue inserts a message for the job's enqueue and wakes this
// process's waiting receivers.
func (t *Transport) Enqueue(ctx context.Context, stream, jobID, enqueueID string) (string, error) {
	if err := controlplane.ValidateStream(stream); err != nil {
		return "", err
	}
	if err := t.checkOpen(); err != nil {
		return "", err
	}
	m, err := t.store.EnqueueJobMessage(ctx, &domain.JobMessage{
		Stream: stream, JobID: jobID, EnqueueID: enqueueID, CreatedAt: t.opts.Now(),
	})
	if err != nil {
		return "", fmt.Errorf("database transport: enqueue job %s on %q: %w", jobID, stream, err)
	}
	t.mu.Lock()
	close(t.enqueued)
	t.enqueued = make(chan struct{})
	t.mu.Unlock()
	return m.MessageID, nil
}

// Receive returns one message for consumer from streams, in priority
// order, waiting up to wait (capped at controlplane.MaxClaimWait and by
// ctx's deadline). Nil and no error when nothing came, also when ctx's
// deadline passed during a look.
func (t *Transport) Receive(ctx context.Context, consumer string, streams []string, wait time.Duration) (*controlplane.Message, error) {
	if consumer == "" {
		return nil, errors.New("database transport: receive: consumer is required")
	}
	if len(streams) == 0 {
		return nil, errors.New("database transport: receive: no streams")
	}
	for _, s := range streams {
		if err := controlplane.ValidateStream(s); err != nil {
			return nil, err
		}
	}
	end := time.Now().Add(min(wait, controlplane.MaxClaimWait))
	if dl, ok := ctx.Deadline(); ok && dl.Before(end) {
		end = dl
	}
	var timer *time.Timer
	for {
		if err := t.checkOpen(); err != nil {
			return nil, err
		}
		// Taken before looking, so an Enqueue in between still wakes us.
		t.mu.Lock()
		enqueued := t.enqueued
		t.mu.Unlock()
		m, err := t.store.ReceiveJobMessage(ctx, store.ReceiveJobMessageParams{
			Streams: streams, Consumer: consumer, MinIdle: t.opts.MinIdle, Now: t.opts.Now(),
		})
		if err != nil {
			if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
				// The deadline cut the look short: nothing came in time.
				// A message it did take stays pending until MinIdle.
				return nil, nil
			}
			return nil, fmt.Errorf("database transport: receive from %v: %w", streams, err)
		}
		if m != nil {
			return &controlplane.Message{Stream: m.Stream, MessageID: m.MessageID, JobID: m.JobID, EnqueueID: m.EnqueueID}, nil
		}
		left := time.Until(end)
		if left <= 0 {
			return nil, nil
		}
		d := min(left, t.opts.PollInterval)
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		select {
		case <-enqueued:
		case <-timer.C:
			if !time.Now().Before(end) {
				return nil, nil // no look past the end: ctx may be done
			}
		case <-t.closed:
			return nil, nil
		case <-ctx.Done():
			if time.Now().Before(end) {
				return nil, ctx.Err()
			}
			return nil, nil // the deadline the wait was cut to
		}
	}
}

// Ack deletes the message; a missing one is not an error.
func (t *Transport) Ack(ctx context.Context, stream, messageID string) error {
	if err := validate(stream, messageID); err != nil {
		return err
	}
	if err := t.checkOpen(); err != nil {
		return err
	}
	if err := t.store.AckJobMessage(ctx, stream, messageID); err != nil {
		return fmt.Errorf("database transport: %w", err)
	}
	return nil
}

// State reports whether the message is unacknowledged (Exists) and
// delivered (Pending).
func (t *Transport) State(ctx context.Context, stream, messageID string) (controlplane.MessageState, error) {
	if err := validate(stream, messageID); err != nil {
		return controlplane.MessageState{}, err
	}
	if err := t.checkOpen(); err != nil {
		return controlplane.MessageState{}, err
	}
	m, err := t.store.GetJobMessage(ctx, stream, messageID)
	if errors.Is(err, domain.ErrNotFound) {
		return controlplane.MessageState{}, nil
	}
	if err != nil {
		return controlplane.MessageState{}, fmt.Errorf("database transport: %w", err)
	}
	return controlplane.MessageState{Exists: true, Pending: m.DeliveredAt != nil}, nil
}

func validate(stream, messageID string) error {
	if err := controlplane.ValidateStream(stream); err != nil {
		return err
	}
	if messageID == "" {
		return errors.New("database transport: message id is required")
	}
	return nil
}
