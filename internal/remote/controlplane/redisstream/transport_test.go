package redisstream_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream/redistest"
	"github.com/azolla/azolla/internal/remote/controlplane/transporttest"
)

// flushDB is the logical database of the one test that flushes: no other
// test keeps keys there.
const flushDB = 9

func TestTransport(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	transporttest.Exercise(t, func(t *testing.T, c transporttest.Config) controlplane.Transport {
		return newTransport(t, redisstream.Options{
			URL:      url,
			Prefix:   redistest.Prefix(t, url),
			LeaseTTL: c.MinIdle / 2,
			MinIdle:  c.MinIdle,
		})
	})
}

func newTransport(t *testing.T, o redisstream.Options) *redisstream.Transport {
	t.Helper()
	tr, err := redisstream.New(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tr.Close()) })
	return tr
}

// bundle is one test's transport on its own keys.
type bundle struct {
	tr  *redisstream.Transport
	rdb *redis.Client
}

func setup(t *testing.T, o redisstream.Options) bundle {
	t.Helper()
	if o.URL == "" {
		o.URL = redistest.URL(t)
	}
	if o.Prefix == "" {
		o.Prefix = redistest.Prefix(t, o.URL)
	}
	tr := newTransport(t, o)
	return bundle{tr: tr, rdb: tr.Client()}
}

func TestNew_Defaults(t *testing.T) {
	t.Parallel()
	b := setup(t, redisstream.Options{})
	o := b.tr.Options()
	require.Equal(t, int64(redisstream.DefaultMaxLen), o.MaxLen)
	require.Equal(t, redisstream.DefaultGroup, o.Group)
	require.Equal(t, controlplane.DefaultLeaseTTL, o.LeaseTTL)
	require.Equal(t, 2*controlplane.DefaultLeaseTTL, o.MinIdle)
	require.Equal(t, redisstream.DefaultReadTimeout, o.ReadTimeout)
	require.Equal(t, controlplane.MaxClaimWait, b.tr.MaxBlock())
	require.Less(t, b.tr.MaxBlock(), b.rdb.Options().ReadTimeout, "a BLOCK must end before the read timeout")
}

func TestNew_Refuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name string
		o    redisstream.Options
	}{
		{"MinIdleNotAboveLeaseTTL", redisstream.Options{LeaseTTL: time.Minute, MinIdle: time.Minute}},
		{"BadURL", redisstream.Options{URL: "http://127.0.0.1:6379"}},
		{"Unreachable", redisstream.Options{URL: "redis://127.0.0.1:1/0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr, err := redisstream.New(ctx, c.o)
			require.Error(t, err)
			require.Nil(t, tr)
		})
	}
}

func TestReceive_BlockLongerThanReadTimeoutIsCappedAndEmpty(t *testing.T) {
	t.Parallel()
	const readTimeout = time.Second
	b := setup(t, redisstream.Options{ReadTimeout: readTimeout})
	require.Equal(t, readTimeout, b.rdb.Options().ReadTimeout)
	require.Less(t, b.tr.MaxBlock(), readTimeout)

	const wait = 5 * readTimeout
	start := time.Now()
	m, err := b.tr.Receive(context.Background(), "instance-a", []string{"patch"}, wait)
	require.NoError(t, err, "a long wait must end as an empty read, not an i/o timeout")
	require.Nil(t, m)
	require.Less(t, time.Since(start), wait, "the wait was not capped")
}

func TestReceive_ContextDeadlineShortensBlock(t *testing.T) {
	t.Parallel()
	b := setup(t, redisstream.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	m, err := b.tr.Receive(ctx, "instance-a", []string{"patch"}, 10*time.Second)
	require.NoError(t, err, "the BLOCK must end before the caller's deadline closes the socket")
	require.Nil(t, m)
}

// A reply that arrives after the caller's deadline (a loaded machine, a
// slow network) is nothing received, not an error: the proxy holds every
// reply once the transport is connected, so the first command's read
// times out at the deadline.
func TestReceive_ReplyAfterDeadlineIsEmpty(t *testing.T) {
	t.Parallel()
	direct := redistest.URL(t)
	p := newStallingProxy(t, direct)
	b := setup(t, redisstream.Options{URL: p.url, Prefix: redistest.Prefix(t, direct)})
	p.stall()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	m, err := b.tr.Receive(ctx, "instance-a", []string{"patch"}, 10*time.Second)
	require.NoError(t, err)
	require.Nil(t, m)
	require.GreaterOrEqual(t, p.held.Load(), int64(1), "no reply was held: the test proved nothing")

	// A caller that cancels, rather than runs out its deadline, gets its
	// error: only a passed deadline means that nothing came.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, err = b.tr.Receive(ctx2, "instance-a", []string{"patch"}, 0)
	require.ErrorIs(t, err, context.Canceled)
}

// stallingProxy forwards TCP to Redis; after stall, replies are held
// until the test ends.
type stallingProxy struct {
	url     string
	stalled atomic.Bool
	held    atomic.Int64
	done    chan struct{}
}

func newStallingProxy(t *testing.T, redisURL string) *stallingProxy {
	t.Helper()
	u, err := url.Parse(redisURL)
	require.NoError(t, err)
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	u.Host = ln.Addr().String()
	p := &stallingProxy{url: u.String(), done: make(chan struct{})}
	var conns sync.WaitGroup
	t.Cleanup(func() {
		close(p.done)
		_ = ln.Close()
		conns.Wait()
	})
	conns.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			conns.Go(func() {
				<-p.done
				_ = c.Close()
				_ = s.Close()
			})
			conns.Go(func() { _, _ = io.Copy(s, c) })
			conns.Go(func() { p.replies(c, s) })
		}
	})
	return p
}

func (p *stallingProxy) stall() { p.stalled.Store(true) }

// replies copies the server's bytes to the client unless stalled.
func (p *stallingProxy) replies(client, server net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 && p.stalled.Load() {
			p.held.Add(1)
			<-p.done
			return
		}
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// A flushed (or restarted) Redis loses the streams and their consumer
// groups: the next Enqueue and Receive work again, the group made anew.
func TestReceive_AfterFlushRecreatesGroup(t *testing.T) {
	url := redistest.URLWithDB(t, flushDB)
	b := setup(t, redisstream.Options{URL: url, LeaseTTL: 50 * time.Millisecond, MinIdle: 100 * time.Millisecond})
	ctx := context.Background()

	id, err := b.tr.Enqueue(ctx, "patch", "job-1", "enq-1")
	require.NoError(t, err)
	require.Equal(t, id, receiveNow(t, b.tr, "patch").MessageID)

	require.NoError(t, b.rdb.FlushDB(ctx).Err())
	st, err := b.tr.State(ctx, "patch", id)
	require.NoError(t, err, "State on a flushed stream")
	require.Equal(t, controlplane.MessageState{}, st)
	requireNothing(t, b.tr, "patch")

	// Flushed again between the enqueue and the receive: the stream
	// exists, its group does not (NOGROUP).
	require.NoError(t, b.rdb.FlushDB(ctx).Err())
	id2, err := b.tr.Enqueue(ctx, "patch", "job-2", "enq-2")
	require.NoError(t, err)
	require.Equal(t, id2, receiveNow(t, b.tr, "patch").MessageID)
	require.NoError(t, b.tr.Ack(ctx, "patch", id2))

	// Flushed while a receiver blocks.
	done := make(chan error, 1)
	var got *controlplane.Message
	go func() {
		m, err := b.tr.Receive(ctx, "instance-a", []string{"patch"}, 10*time.Second)
		got = m
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // let it block; the checks hold either way
	require.NoError(t, b.rdb.FlushDB(ctx).Err())
	id3, err := b.tr.Enqueue(ctx, "patch", "job-3", "enq-3")
	require.NoError(t, err)
	require.NoError(t, <-done)
	if got == nil { // the flushed BLOCK ended empty; the next receive finds it
		got = receiveNow(t, b.tr, "patch")
	}
	require.Equal(t, id3, got.MessageID)
	require.NoError(t, b.rdb.FlushDB(ctx).Err())
}

func TestEnqueue_StreamLengthBounded(t *testing.T) {
	t.Parallel()
	const maxLen = 100
	b := setup(t, redisstream.Options{MaxLen: maxLen})
	ctx := context.Background()
	for i := range 1000 {
		_, err := b.tr.Enqueue(ctx, "patch", fmt.Sprintf("job-%d", i), "enq")
		require.NoError(t, err)
	}
	n, err := b.rdb.XLen(ctx, b.tr.Key("patch")).Result()
	require.NoError(t, err)
	// MAXLEN ~ trims whole nodes of the stream (100 entries by default).
	require.LessOrEqual(t, n, int64(2*maxLen+100), "stream length %d", n)
	require.GreaterOrEqual(t, n, int64(maxLen))
}

func TestAck_EmptiesPendingListAndStream(t *testing.T) {
	t.Parallel()
	b := setup(t, redisstream.Options{})
	ctx := context.Background()
	key := b.tr.Key("patch")
	const n = 20
	for i := range n {
		_, err := b.tr.Enqueue(ctx, "patch", fmt.Sprintf("job-%d", i), "enq")
		require.NoError(t, err)
	}
	var ids []string
	for range n {
		ids = append(ids, receiveNow(t, b.tr, "patch").MessageID)
	}
	p, err := b.rdb.XPending(ctx, key, redisstream.DefaultGroup).Result()
	require.NoError(t, err)
	require.Equal(t, int64(n), p.Count)

	for _, id := range ids {
		require.NoError(t, b.tr.Ack(ctx, "patch", id))
	}
	p, err = b.rdb.XPending(ctx, key, redisstream.DefaultGroup).Result()
	require.NoError(t, err)
	require.Zero(t, p.Count, "pending list after acks")
	l, err := b.rdb.XLen(ctx, key).Result()
	require.NoError(t, err)
	require.Zero(t, l, "stream length after acks")
}

func TestStream_KeyAndFields(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	prefix := redistest.Prefix(t, url)
	b := setup(t, redisstream.Options{URL: url, Prefix: prefix})
	ctx := context.Background()
	require.Equal(t, prefix+"stream:patch", b.tr.Key("patch"))

	id, err := b.tr.Enqueue(ctx, "patch", "job-1", "enq-1")
	require.NoError(t, err)
	entries, err := b.rdb.XRange(ctx, prefix+"stream:patch", id, id).Result()
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, map[string]any{"job_id": "job-1", "enqueue_id": "enq-1"}, entries[0].Values)
}

func TestAckAndState_RefuseMalformedMessageID(t *testing.T) {
	t.Parallel()
	b := setup(t, redisstream.Options{})
	ctx := context.Background()
	for _, id := range []string{"", "abc", "1-", "-1", "1-1 2-2", "+", "-", "0-0\n"} {
		require.ErrorIs(t, b.tr.Ack(ctx, "patch", id), redisstream.ErrInvalidMessageID, "Ack %q", id)
		_, err := b.tr.State(ctx, "patch", id)
		require.ErrorIs(t, err, redisstream.ErrInvalidMessageID, "State %q", id)
	}
}

func receiveNow(t *testing.T, tr controlplane.Transport, streams ...string) *controlplane.Message {
	t.Helper()
	m, err := tr.Receive(context.Background(), "instance-a", streams, 0)
	require.NoError(t, err)
	require.NotNil(t, m, "no message on %v", streams)
	return m
}

func requireNothing(t *testing.T, tr controlplane.Transport, streams ...string) {
	t.Helper()
	m, err := tr.Receive(context.Background(), "instance-a", streams, 0)
	require.NoError(t, err)
	require.Nil(t, m)
}

// When one BLOCK delivers entries of several streams, the one of highest
// priority is returned and the others are handed back: at once
// reclaimable by any consumer, not stuck pending until min-idle.
func TestReceive_BlockHandsBackLowerPriorityEntries(t *testing.T) {
	t.Parallel()
	b := setup(t, redisstream.Options{})
	ctx := context.Background()
	low, err := b.tr.Enqueue(ctx, "low", "job-low", "enq-low")
	require.NoError(t, err)
	high, err := b.tr.Enqueue(ctx, "high", "job-high", "enq-high")
	require.NoError(t, err)

	m, err := b.tr.BlockOnly(ctx, "instance-a", []string{"high", "low"}, time.Second)
	require.NoError(t, err)
	require.NotNil(t, m)
	require.Equal(t, high, m.MessageID)
	p, err := b.rdb.XPending(ctx, b.tr.Key("low"), redisstream.DefaultGroup).Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), p.Count, "the BLOCK delivered low's entry too")

	again, err := b.tr.Receive(ctx, "instance-b", []string{"low"}, 0)
	require.NoError(t, err)
	require.NotNil(t, again, "the handed-back entry waits for min-idle (%s)", b.tr.Options().MinIdle)
	require.Equal(t, low, again.MessageID)
}
