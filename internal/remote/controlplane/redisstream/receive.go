package redisstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/azolla/azolla/internal/remote/controlplane"
)

// Receive returns one message for consumer from streams, in priority
// order, waiting up to wait (capped at MaxBlock and by ctx's deadline).
// Nil and no error when nothing came, also when ctx's deadline passed
// before a reply did: an entry Redis delivered into that lost reply stays
// pending for consumer and is reclaimed after MinIdle.
func (t *Transport) Receive(ctx context.Context, consumer string, streams []string, wait time.Duration) (*controlplane.Message, error) {
	m, err := t.receive(ctx, consumer, streams, wait)
	if err != nil && deadlinePassed(ctx, err) {
		return nil, nil
	}
	return m, err
}

// deadlinePassed reports err as ctx's deadline cutting a command short: a
// socket read that timed out at the deadline (go-redis sets the read
// deadline to ctx's, ContextTimeoutEnabled) or the context's own error.
func deadlinePassed(ctx context.Context, err error) bool {
	dl, ok := ctx.Deadline()
	if !ok || time.Now().Before(dl) {
		return false
	}
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func (t *Transport) receive(ctx context.Context, consumer string, streams []string, wait time.Duration) (*controlplane.Message, error) {
	if consumer == "" {
		return nil, errors.New("redis transport: receive: consumer is required")
	}
	if len(streams) == 0 {
		return nil, errors.New("redis transport: receive: no streams")
	}
	keys := make([]string, len(streams))
	for i, s := range streams {
		if err := controlplane.ValidateStream(s); err != nil {
			return nil, err
		}
		keys[i] = t.Key(s)
	}
	// Without blocking, in priority order: a message a crashed consumer
	// left pending, then a new one.
	for i, key := range keys {
		m, err := t.withGroup(ctx, key, func() (*redis.XMessage, error) { return t.autoClaim(ctx, key, consumer) })
		if err != nil {
			return nil, fmt.Errorf("redis transport: reclaim on %q: %w", streams[i], err)
		}
		if m == nil {
			m, err = t.withGroup(ctx, key, func() (*redis.XMessage, error) { return t.readNew(ctx, key, consumer) })
			if err != nil {
				return nil, fmt.Errorf("redis transport: read %q: %w", streams[i], err)
			}
		}
		if m != nil {
			return message(streams[i], m), nil
		}
	}
	return t.block(ctx, consumer, streams, keys, wait)
}

// autoClaim takes over one entry of key pending longer than MinIdle.
func (t *Transport) autoClaim(ctx context.Context, key, consumer string) (*redis.XMessage, error) {
	t.mu.Lock()
	start := t.cursors[key]
	t.mu.Unlock()
	if start == "" {
		start = "0-0"
	}
	msgs, next, err := t.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: key, Group: t.opts.Group, Consumer: consumer,
		MinIdle: t.opts.MinIdle, Start: start, Count: 1,
	}).Result()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.cursors[key] = next
	t.mu.Unlock()
	if len(msgs) == 0 {
		return nil, nil
	}
	return &msgs[0], nil
}

// readNew reads one new entry of key without blocking.
func (t *Transport) readNew(ctx context.Context, key, consumer string) (*redis.XMessage, error) {
	res, err := t.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: t.opts.Group, Consumer: consumer,
		Streams: []string{key, ">"}, Count: 1,
		Block: -1, // go-redis omits BLOCK for a negative value; 0 would block forever
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, s := range res {
		if len(s.Messages) > 0 {
			return &s.Messages[0], nil
		}
	}
	return nil, nil
}

// block waits on every stream at once for the first new entry.
func (t *Transport) block(ctx context.Context, consumer string, streams, keys []string, wait time.Duration) (*controlplane.Message, error) {
	end := time.Now().Add(min(wait, t.maxBlock))
	if dl, ok := ctx.Deadline(); ok {
		// Leave the reply time to arrive before the caller's deadline
		// closes the socket.
		if early := dl.Add(-100 * time.Millisecond); early.Before(end) {
			end = early
		}
	}
	args := make([]string, 0, 2*len(keys))
	args = append(args, keys...)
	for range keys {
		args = append(args, ">")
	}
	for {
		d := time.Until(end)
		if d < time.Millisecond {
			return nil, nil // BLOCK 0 would wait forever
		}
		for _, key := range keys {
			if err := t.ensureGroup(ctx, key); err != nil {
				return nil, err
			}
		}
		res, err := t.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: t.opts.Group, Consumer: consumer, Streams: args, Count: 1, Block: d,
		}).Result()
		switch {
		case isNoGroup(err):
			// Flushed while we looked, or while we waited: nothing was
			// delivered; make the groups again and wait out the rest.
			for _, key := range keys {
				t.forgetGroup(key)
			}
			continue
		case errors.Is(err, redis.Nil):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("redis transport: wait on %v: %w", streams, err)
		}
		return t.first(ctx, consumer, streams, keys, res)
	}
}

// first picks the reply's entry of highest priority. A race with
// enqueuers may deliver one entry on each of several streams; the others
// are handed back.
func (t *Transport) first(ctx context.Context, consumer string, streams, keys []string, res []redis.XStream) (*controlplane.Message, error) {
	var got *controlplane.Message
	for i, key := range keys {
		for _, s := range res {
			if s.Stream != key || len(s.Messages) == 0 {
				continue
			}
			if got == nil {
				got = message(streams[i], &s.Messages[0])
				continue
			}
			if err := t.release(ctx, key, consumer, s.Messages); err != nil {
				return nil, err
			}
		}
	}
	return got, nil
}

// release makes delivered entries immediately reclaimable: their idle time
// is set past MinIdle, so the next XAUTOCLAIM (any consumer's) takes them.
// Redis 7 has no command to put an entry back among the new ones.
func (t *Transport) release(ctx context.Context, key, consumer string, msgs []redis.XMessage) error {
	idle := (t.opts.MinIdle + time.Second).Milliseconds()
	for _, m := range msgs {
		err := t.rdb.Do(ctx, "XCLAIM", key, t.opts.Group, consumer, 0, m.ID, "IDLE", idle, "JUSTID").Err()
		if err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("redis transport: hand back %s on %s: %w", m.ID, key, err)
		}
	}
	return nil
}

// withGroup runs f once the key's group exists, making it again and
// retrying once when f finds it gone.
func (t *Transport) withGroup(ctx context.Context, key string, f func() (*redis.XMessage, error)) (*redis.XMessage, error) {
	if err := t.ensureGroup(ctx, key); err != nil {
		return nil, err
	}
	m, err := f()
	if !isNoGroup(err) {
		return m, err
	}
	t.forgetGroup(key)
	if err := t.ensureGroup(ctx, key); err != nil {
		return nil, err
	}
	return f()
}

// ensureGroup creates key's consumer group (and the stream) unless this
// process already did. It starts from id 0, so entries written before the
// group (after a flush, by an enqueuer that came first) are delivered.
func (t *Transport) ensureGroup(ctx context.Context, key string) error {
	t.mu.Lock()
	ok := t.groups[key]
	t.mu.Unlock()
	if ok {
		return nil
	}
	err := t.rdb.XGroupCreateMkStream(ctx, key, t.opts.Group, "0").Err()
	if err != nil && !isBusyGroup(err) {
		return fmt.Errorf("create consumer group %s on %s: %w", t.opts.Group, key, err)
	}
	t.mu.Lock()
	t.groups[key] = true
	t.mu.Unlock()
	return nil
}

func (t *Transport) forgetGroup(key string) {
	t.mu.Lock()
	delete(t.groups, key)
	delete(t.cursors, key)
	t.mu.Unlock()
}

func isBusyGroup(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "BUSYGROUP")
}

func message(stream string, m *redis.XMessage) *controlplane.Message {
	str := func(k string) string {
		s, _ := m.Values[k].(string)
		return s
	}
	return &controlplane.Message{
		Stream:    stream,
		MessageID: m.ID,
		JobID:     str(fieldJobID),
		EnqueueID: str(fieldEnqueueID),
	}
}
