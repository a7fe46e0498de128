package dbqueue_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/controlplane/dbqueue"
	"github.com/azolla/azolla/internal/remote/controlplane/transporttest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

func TestTransport(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			transporttest.Exercise(t, func(t *testing.T, c transporttest.Config) controlplane.Transport {
				// No polling: a waiting Receive wakes on the enqueue's
				// notification or not at all.
				return newTransport(t, b.Open(t), dbqueue.Options{
					LeaseTTL: c.MinIdle / 2, MinIdle: c.MinIdle, PollInterval: time.Hour,
				})
			})
		})
	}
}

func newTransport(t *testing.T, s store.JobStore, o dbqueue.Options) *dbqueue.Transport {
	t.Helper()
	tr, err := dbqueue.New(s, o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tr.Close()) })
	return tr
}

func TestNew_Defaults(t *testing.T) {
	t.Parallel()
	tr, err := dbqueue.New(nil, dbqueue.Options{})
	require.NoError(t, err)
	o := tr.Options()
	require.Equal(t, controlplane.DefaultLeaseTTL, o.LeaseTTL)
	require.Equal(t, 2*controlplane.DefaultLeaseTTL, o.MinIdle)
	require.Equal(t, dbqueue.DefaultPollInterval, o.PollInterval)

	_, err = dbqueue.New(nil, dbqueue.Options{LeaseTTL: time.Minute, MinIdle: time.Minute})
	require.Error(t, err, "min-idle not above the lease TTL")
}

// A message another process wrote is found by the poll.
func TestReceive_PollFindsOtherProcessesMessages(t *testing.T) {
	t.Parallel()
	s := storetest.NewSQLite(t)
	receiver := newTransport(t, s, dbqueue.Options{PollInterval: 20 * time.Millisecond})
	other := newTransport(t, s, dbqueue.Options{})
	ctx := context.Background()

	const wait = 20 * time.Second
	type result struct {
		m   *controlplane.Message
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		m, err := receiver.Receive(ctx, "instance-a", []string{"patch"}, wait)
		done <- result{m, err}
	}()
	time.Sleep(100 * time.Millisecond) // let it wait; the checks hold either way
	id, err := other.Enqueue(ctx, "patch", newUUID(), newUUID())
	require.NoError(t, err)
	r := <-done
	require.NoError(t, r.err)
	require.NotNil(t, r.m)
	require.Equal(t, id, r.m.MessageID)
	require.Less(t, time.Since(start), wait)
}

func TestReceive_CloseWakesWaiters(t *testing.T) {
	t.Parallel()
	tr, err := dbqueue.New(storetest.NewSQLite(t), dbqueue.Options{PollInterval: time.Hour})
	require.NoError(t, err)
	type result struct {
		m   *controlplane.Message
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := tr.Receive(context.Background(), "instance-a", []string{"patch"}, 20*time.Second)
		done <- result{m, err}
	}()
	time.Sleep(50 * time.Millisecond) // let it wait; the checks hold either way
	require.NoError(t, tr.Close())
	select {
	case r := <-done:
		if r.err != nil {
			require.ErrorIs(t, r.err, dbqueue.ErrClosed, "closed before it looked")
		}
		require.Nil(t, r.m)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake the waiting Receive")
	}
	_, err = tr.Enqueue(context.Background(), "patch", newUUID(), newUUID())
	require.ErrorIs(t, err, dbqueue.ErrClosed)
}

func TestReceive_ContextEndsWait(t *testing.T) {
	t.Parallel()
	tr := newTransport(t, storetest.NewSQLite(t), dbqueue.Options{PollInterval: time.Hour})

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	m, err := tr.Receive(ctx, "instance-a", []string{"patch"}, 20*time.Second)
	require.NoError(t, err, "a deadline cuts the wait short; it is not an error")
	require.Nil(t, m)

	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	m, err = tr.Receive(ctx, "instance-a", []string{"patch"}, 20*time.Second)
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, m)
}

// A look still running at the caller's deadline (a loaded database) is
// nothing received, not an error.
func TestReceive_LookCutByDeadlineIsEmpty(t *testing.T) {
	t.Parallel()
	slow := &slowReceive{JobStore: storetest.NewSQLite(t)}
	tr := newTransport(t, slow, dbqueue.Options{PollInterval: time.Hour})

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	m, err := tr.Receive(ctx, "instance-a", []string{"patch"}, 20*time.Second)
	require.NoError(t, err)
	require.Nil(t, m)
	require.Equal(t, int32(1), slow.cut.Load(), "the look was not cut by the deadline: the test proved nothing")
}

// slowReceive's look lasts until its context ends.
type slowReceive struct {
	store.JobStore
	cut atomic.Int32
}

func (s *slowReceive) ReceiveJobMessage(ctx context.Context, _ store.ReceiveJobMessageParams) (*domain.JobMessage, error) {
	<-ctx.Done()
	s.cut.Add(1)
	return nil, ctx.Err()
}

func newUUID() string { return uuid.NewString() }
