// Package transporttest is the conformance suite every
// controlplane.Transport passes: Exercise runs it against one backend.
package transporttest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/remote/controlplane"
)

// Config is what a test asks of the transport it is given.
type Config struct {
	// MinIdle is how long a received, unacknowledged message waits before
	// another consumer may take it. The factory sets whatever lease TTL
	// its transport needs below it.
	MinIdle time.Duration
}

// NewFunc returns a fresh transport no other test shares (its own keys,
// its own store), closed when t ends.
type NewFunc func(t *testing.T, c Config) controlplane.Transport

// Consumers, as two control-plane instances.
const (
	consumerA = "instance-a"
	consumerB = "instance-b"
)

// noRedelivery is a MinIdle no test outlives.
const noRedelivery = 10 * time.Minute

// Exercise runs the suite; each case gets its own transport from
// newTransport.
func Exercise(t *testing.T, newTransport NewFunc) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, newTransport NewFunc)
	}{
		{"EnqueueReceiveAck", testEnqueueReceiveAck},
		{"PriorityOrderBeatsAge", testPriorityOrder},
		{"EmptyWaitReturnsNil", testEmptyWait},
		{"BlockingReceiveWakesOnEnqueue", testWakesOnEnqueue},
		{"UnackedRedeliveredOnlyAfterMinIdle", testRedelivery},
		{"DuplicateEnqueueIsTwoMessages", testDuplicateEnqueue},
		{"AckOfMissingMessageIsFine", testAckMissing},
		{"HostileStreamNamesRefused", testHostileNames},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newTransport)
		})
	}
}

func testEnqueueReceiveAck(t *testing.T, newTransport NewFunc) {
	ctx := context.Background()
	tr := newTransport(t, Config{MinIdle: noRedelivery})

	job, enq := newUUID(), newUUID()
	id, err := tr.Enqueue(ctx, "patch", job, enq)
	require.NoError(t, err)
	require.NotEmpty(t, id)
	requireState(t, tr, "patch", id, controlplane.MessageState{Exists: true})

	m, err := tr.Receive(ctx, consumerA, []string{"patch"}, 0)
	require.NoError(t, err)
	require.Equal(t, &controlplane.Message{Stream: "patch", MessageID: id, JobID: job, EnqueueID: enq}, m)
	requireState(t, tr, "patch", id, controlplane.MessageState{Exists: true, Pending: true})

	again, err := tr.Receive(ctx, consumerB, []string{"patch"}, 0)
	require.NoError(t, err)
	require.Nil(t, again, "a pending message went to a second consumer before min-idle")

	require.NoError(t, tr.Ack(ctx, "patch", id))
	requireState(t, tr, "patch", id, controlplane.MessageState{})
	requireEmpty(t, tr, consumerA, "patch")
}

func testPriorityOrder(t *testing.T, newTransport NewFunc) {
	ctx := context.Background()
	tr := newTransport(t, Config{MinIdle: noRedelivery})

	older, err := tr.Enqueue(ctx, "low", newUUID(), newUUID())
	require.NoError(t, err)
	newer, err := tr.Enqueue(ctx, "high", newUUID(), newUUID())
	require.NoError(t, err)

	first := receive(t, tr, consumerA, "high", "low")
	require.Equal(t, newer, first.MessageID)
	require.Equal(t, "high", first.Stream)
	second := receive(t, tr, consumerA, "high", "low")
	require.Equal(t, older, second.MessageID)
	require.Equal(t, "low", second.Stream)
	requireEmpty(t, tr, consumerA, "high", "low")
}

func testEmptyWait(t *testing.T, newTransport NewFunc) {
	ctx := context.Background()
	tr := newTransport(t, Config{MinIdle: noRedelivery})

	m, err := tr.Receive(ctx, consumerA, []string{"patch", "command"}, 0)
	require.NoError(t, err)
	require.Nil(t, m)

	const wait = 200 * time.Millisecond
	start := time.Now()
	m, err = tr.Receive(ctx, consumerA, []string{"patch", "command"}, wait)
	require.NoError(t, err)
	require.Nil(t, m)
	require.GreaterOrEqual(t, time.Since(start), wait/2, "an empty receive returned without waiting")
}

func testWakesOnEnqueue(t *testing.T, newTransport NewFunc) {
	ctx := context.Background()
	tr := newTransport(t, Config{MinIdle: noRedelivery})

	type result struct {
		m   *controlplane.Message
		err error
	}
	const wait = 20 * time.Second
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		m, err := tr.Receive(ctx, consumerA, []string{"high", "low"}, wait)
		done <- result{m, err}
	}()
	// Give the receiver time to reach its wait; the assertions below hold
	// whether or not it has.
	time.Sleep(100 * time.Millisecond)
	id, err := tr.Enqueue(ctx, "low", newUUID(), newUUID())
	require.NoError(t, err)

	select {
	case r := <-done:
		require.NoError(t, r.err)
		require.NotNil(t, r.m, "the wait ended without the message")
		require.Equal(t, id, r.m.MessageID)
		require.Less(t, time.Since(start), wait, "woken by the wait's end, not by the enqueue")
	case <-time.After(wait + 10*time.Second):
		t.Fatal("Receive did not return")
	}
}

func testRedelivery(t *testing.T, newTransport NewFunc) {
	ctx := context.Background()
	const minIdle = 500 * time.Millisecond
	tr := newTransport(t, Config{MinIdle: minIdle})

	id, err := tr.Enqueue(ctx, "work", newUUID(), newUUID())
	require.NoError(t, err)
	start := time.Now()
	first := receive(t, tr, consumerA, "work")
	require.Equal(t, id, first.MessageID)
	requireEmpty(t, tr, consumerB, "work")

	var again *controlplane.Message
	require.Eventually(t, func() bool {
		// The condition runs on another goroutine: assert, not require.
		m, err := tr.Receive(ctx, consumerB, []string{"work"}, 0)
		again = m
		return !assert.NoError(t, err) || m != nil
	}, 20*time.Second, 20*time.Millisecond, "consumer A's unacked message never went to B")
	require.GreaterOrEqual(t, time.Since(start), minIdle, "redelivered before min-idle")
	require.Equal(t, first, again)
	requireState(t, tr, "work", id, controlplane.MessageState{Exists: true, Pending: true})

	require.NoError(t, tr.Ack(ctx, "work", id))
	requireState(t, tr, "work", id, controlplane.MessageState{})
	// Absence takes a window: two min-idles, the time a pending message
	// would take to come back. The looks run on this goroutine, so none
	// outlives the test (require.Never's may, and then fails the test
	// after it has ended, on a transport already closed).
	for end := time.Now().Add(2 * minIdle); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		m, err := tr.Receive(ctx, consumerA, []string{"work"}, 0)
		require.NoError(t, err)
		require.Nil(t, m, "an acknowledged message was delivered again")
	}
}

func testDuplicateEnqueue(t *testing.T, newTransport NewFunc) {
	ctx := context.Background()
	tr := newTransport(t, Config{MinIdle: noRedelivery})

	job, enq := newUUID(), newUUID()
	id1, err := tr.Enqueue(ctx, "patch", job, enq)
	require.NoError(t, err)
	id2, err := tr.Enqueue(ctx, "patch", job, enq)
	require.NoError(t, err)
	require.NotEqual(t, id1, id2)

	m1 := receive(t, tr, consumerA, "patch")
	m2 := receive(t, tr, consumerB, "patch")
	require.Equal(t, []string{id1, id2}, []string{m1.MessageID, m2.MessageID})
	require.Equal(t, []string{job, job}, []string{m1.JobID, m2.JobID})
	require.Equal(t, []string{enq, enq}, []string{m1.EnqueueID, m2.EnqueueID})
	requireEmpty(t, tr, consumerA, "patch")
}

func testAckMissing(t *testing.T, newTransport NewFunc) {
	ctx := context.Background()
	tr := newTransport(t, Config{MinIdle: noRedelivery})

	id, err := tr.Enqueue(ctx, "patch", newUUID(), newUUID())
	require.NoError(t, err)
	receive(t, tr, consumerA, "patch")
	require.NoError(t, tr.Ack(ctx, "patch", id))
	require.NoError(t, tr.Ack(ctx, "patch", id), "a second ack")
	require.NoError(t, tr.Ack(ctx, "never_used", id), "an ack on a stream never written")
	requireState(t, tr, "never_used", id, controlplane.MessageState{})

	// A message never received may be acked too (a job settled or
	// dead-lettered by the reaper before any claim).
	id2, err := tr.Enqueue(ctx, "patch", newUUID(), newUUID())
	require.NoError(t, err)
	require.NoError(t, tr.Ack(ctx, "patch", id2))
	requireState(t, tr, "patch", id2, controlplane.MessageState{})
	requireEmpty(t, tr, consumerA, "patch")
}

func testHostileNames(t *testing.T, newTransport NewFunc) {
	ctx := context.Background()
	tr := newTransport(t, Config{MinIdle: noRedelivery})

	id, err := tr.Enqueue(ctx, "patch", newUUID(), newUUID())
	require.NoError(t, err)
	hostile := []string{
		"", "Patch", "../patch", "patch:other", "patch*", "a b", "patch\x00",
		"patch\n", "*", "stream:patch", string(make([]byte, 65)),
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", // 65
	}
	for _, name := range hostile {
		_, err := tr.Enqueue(ctx, name, newUUID(), newUUID())
		require.ErrorIs(t, err, controlplane.ErrInvalidStream, "Enqueue %q", name)
		_, err = tr.Receive(ctx, consumerA, []string{"patch", name}, time.Second)
		require.ErrorIs(t, err, controlplane.ErrInvalidStream, "Receive %q", name)
		require.ErrorIs(t, tr.Ack(ctx, name, id), controlplane.ErrInvalidStream, "Ack %q", name)
		_, err = tr.State(ctx, name, id)
		require.ErrorIs(t, err, controlplane.ErrInvalidStream, "State %q", name)
	}
	_, err = tr.Receive(ctx, "", []string{"patch"}, 0)
	require.Error(t, err, "a receive without a consumer")
	_, err = tr.Receive(ctx, consumerA, nil, 0)
	require.Error(t, err, "a receive without streams")

	// The refusals delivered nothing.
	requireState(t, tr, "patch", id, controlplane.MessageState{Exists: true})
	require.Equal(t, id, receive(t, tr, consumerA, "patch").MessageID)
}

// newUUID returns a random (version 4) UUID, the form of job and enqueue
// ids.
func newUUID() string { return uuid.NewString() }

// receive returns the message a non-blocking Receive must find.
func receive(t *testing.T, tr controlplane.Transport, consumer string, streams ...string) *controlplane.Message {
	t.Helper()
	m, err := tr.Receive(context.Background(), consumer, streams, 0)
	require.NoError(t, err)
	require.NotNil(t, m, "no message on %v", streams)
	return m
}

func requireEmpty(t *testing.T, tr controlplane.Transport, consumer string, streams ...string) {
	t.Helper()
	m, err := tr.Receive(context.Background(), consumer, streams, 0)
	require.NoError(t, err)
	require.Nil(t, m, "a message left on %v", streams)
}

func requireState(t *testing.T, tr controlplane.Transport, stream, id string, want controlplane.MessageState) {
	t.Helper()
	got, err := tr.State(context.Background(), stream, id)
	require.NoError(t, err)
	require.Equal(t, want, got, "state of %s on %s", id, stream)
}
