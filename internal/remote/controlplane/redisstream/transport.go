package redisstream

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/azolla/azolla/internal/remote/controlplane"
)

// The fields of every stream entry.
const (
	fieldJobID     = "job_id"
	fieldEnqueueID = "enqueue_id"
)

// messageIDRE is a Redis stream entry id, compiled on first use: its counted
// repetitions are a program of about 33 KB that processes which never
// reach Redis would build at start.
var messageIDRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)
})

// ErrInvalidMessageID wraps the error of a message id that is not a Redis
// stream id ("<ms>-<seq>").
var ErrInvalidMessageID = errors.New("invalid stream message id")

// Transport is controlplane.Transport over Redis Streams; see the package
// doc. It is safe for concurrent use.
type Transport struct {
	rdb      *redis.Client
	opts     Options
	maxBlock time.Duration

	mu sync.Mutex
	// groups holds the keys whose consumer group this process has made
	// sure of; a NOGROUP reply drops a key from it.
	groups map[string]bool
	// cursors continues each key's XAUTOCLAIM scan of the pending list
	// where the last one stopped, so a long list of live entries is not
	// rescanned from the start on every Receive.
	cursors map[string]string
}

var _ controlplane.Transport = (*Transport)(nil)

// New connects to o.URL, checks the server answers, and returns the
// transport. The client's read timeout is o.ReadTimeout (or the URL's, or
// DefaultReadTimeout); the long-poll's BLOCK stays below it.
func New(ctx context.Context, o Options) (*Transport, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	ro, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("redis transport: parse URL: %w", err)
	}
	switch {
	case o.ReadTimeout != 0:
		ro.ReadTimeout = o.ReadTimeout
	case ro.ReadTimeout == 0:
		ro.ReadTimeout = DefaultReadTimeout
	}
	// A caller's deadline (an HTTP request's) bounds every command.
	ro.ContextTimeoutEnabled = true
	rdb := redis.NewClient(ro)
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("redis transport: ping %s: %w", redactURL(o.URL), err)
	}
	o.ReadTimeout = rdb.Options().ReadTimeout
	return &Transport{
		rdb:      rdb,
		opts:     o,
		maxBlock: blockCap(o.ReadTimeout),
		groups:   map[string]bool{},
		cursors:  map[string]string{},
	}, nil
}

// Options returns the options in effect, defaults filled in.
func (t *Transport) Options() Options { return t.opts }

// MaxBlock is the longest a Receive blocks, whatever wait it is given.
func (t *Transport) MaxBlock() time.Duration { return t.maxBlock }

// Key returns the Redis key of stream name.
func (t *Transport) Key(stream string) string { return t.opts.Prefix + "stream:" + stream }

// Client is the underlying client, for tests and diagnostics.
func (t *Transport) Client() *redis.Client { return t.rdb }

// Close closes the client.
func (t *Transport) Close() error { return t.rdb.Close() }

// Enqueue appends a message for the job's enqueue, trimming the stream to
// about MaxLen entries.
func (t *Transport) Enqueue(ctx context.Context, stream, jobID, enqueueID string) (string, error) {
	if err := controlplane.ValidateStream(stream); err != nil {
		return "", err
	}
	if jobID == "" || enqueueID == "" {
		return "", fmt.Errorf("redis transport: enqueue on %q: job_id and enqueue_id are required", stream)
	}
	id, err := t.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: t.Key(stream),
		MaxLen: t.opts.MaxLen,
		Approx: true,
		Values: []string{fieldJobID, jobID, fieldEnqueueID, enqueueID},
	}).Result()
	if err != nil {
		return "", fmt.Errorf("redis transport: enqueue job %s on %q: %w", jobID, stream, err)
	}
	return id, nil
}

// Ack acknowledges and deletes the message in one MULTI. A missing
// message, stream or group is not an error.
func (t *Transport) Ack(ctx context.Context, stream, messageID string) error {
	if err := validate(stream, messageID); err != nil {
		return err
	}
	key := t.Key(stream)
	var ack *redis.IntCmd
	var del *redis.IntCmd
	_, err := t.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		ack = p.XAck(ctx, key, t.opts.Group, messageID)
		del = p.XDel(ctx, key, messageID)
		return nil
	})
	if err != nil && !isNoGroup(ack.Err()) {
		return fmt.Errorf("redis transport: ack %s on %q: %w", messageID, stream, err)
	}
	if err := del.Err(); err != nil {
		return fmt.Errorf("redis transport: delete %s on %q: %w", messageID, stream, err)
	}
	return nil
}

// State reports whether the message is still in its stream (XRANGE id id)
// and whether it is pending in the group (XPENDING id id).
func (t *Transport) State(ctx context.Context, stream, messageID string) (controlplane.MessageState, error) {
	var s controlplane.MessageState
	if err := validate(stream, messageID); err != nil {
		return s, err
	}
	key := t.Key(stream)
	entries, err := t.rdb.XRangeN(ctx, key, messageID, messageID, 1).Result()
	if err != nil {
		return s, fmt.Errorf("redis transport: look up %s on %q: %w", messageID, stream, err)
	}
	s.Exists = len(entries) > 0
	pending, err := t.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
		Stream: key, Group: t.opts.Group, Start: messageID, End: messageID, Count: 1,
	}).Result()
	switch {
	case isNoGroup(err):
		// No group, no pending list: nothing was delivered since the flush.
	case err != nil:
		return s, fmt.Errorf("redis transport: pending state of %s on %q: %w", messageID, stream, err)
	default:
		s.Pending = len(pending) > 0
	}
	return s, nil
}

func validate(stream, messageID string) error {
	if err := controlplane.ValidateStream(stream); err != nil {
		return err
	}
	if !messageIDRE().MatchString(messageID) {
		return fmt.Errorf("%w: %q", ErrInvalidMessageID, messageID)
	}
	return nil
}

// isNoGroup reports a reply saying the key or its consumer group is gone
// (a flushed or restarted Redis). Redis 7.2+ answers a client blocked on
// a key that was deleted with UNBLOCKED.
func isNoGroup(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "NOGROUP") || strings.HasPrefix(msg, "UNBLOCKED")
}

func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return raw
}
