package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// The database transport's queue and the remote workers' tokens.

func exerciseJobMessages(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("Messages_PriorityOrderRedeliveryAndAck", func(t *testing.T) { testMessages(t, open(t)) })
	t.Run("Messages_ConcurrentReceiversNeverShareAMessage", func(t *testing.T) { testMessageRace(t, open(t)) })
	t.Run("WorkerTokens_OneLivePerWorkerFoundByHash", func(t *testing.T) { testWorkerTokens(t, open(t)) })
}

func message(stream string) *domain.JobMessage {
	return &domain.JobMessage{Stream: stream, JobID: NewUUID(), EnqueueID: NewUUID(), CreatedAt: T0}
}

func receive(t testing.TB, s store.Store, consumer string, minIdle time.Duration, now time.Time, streams ...string) *domain.JobMessage {
	t.Helper()
	m, err := s.ReceiveJobMessage(context.Background(), store.ReceiveJobMessageParams{Streams: streams,
		Consumer: consumer, MinIdle: minIdle, Now: now})
	require.NoError(t, err)
	return m
}

func testMessages(t *testing.T, s store.Store) {
	ctx := context.Background()
	var ids []string
	enqueue := func(stream string) *domain.JobMessage {
		m, err := s.EnqueueJobMessage(ctx, message(stream))
		require.NoError(t, err)
		ids = append(ids, m.MessageID)
		return m
	}
	low1, high1, low2, high2 := enqueue("low"), enqueue("high"), enqueue("low"), enqueue("high")
	require.Len(t, low1.MessageID, 20)
	require.True(t, slices.IsSorted(ids), "ids sort in enqueue order: %v", ids)
	require.Len(t, slices.Compact(slices.Clone(ids)), 4, "ids are unique across streams")
	got, err := s.GetJobMessage(ctx, "low", low1.MessageID)
	require.NoError(t, err)
	require.Equal(t, low1, got)
	require.Nil(t, got.DeliveredAt)

	const idle = 2 * time.Minute
	at := T0.Add(time.Second)
	// Priority order across streams, enqueue order within one.
	for _, want := range []*domain.JobMessage{high1, high2, low1, low2} {
		m := receive(t, s, "cp-1", idle, at, "high", "low")
		require.NotNil(t, m)
		require.Equal(t, want.MessageID, m.MessageID)
		require.Equal(t, want.Stream, m.Stream)
		require.Equal(t, want.JobID, m.JobID)
		require.Equal(t, "cp-1", m.Consumer)
		require.Equal(t, at, *m.DeliveredAt)
		require.Equal(t, 1, m.Deliveries)
		stored, err := s.GetJobMessage(ctx, m.Stream, m.MessageID)
		require.NoError(t, err)
		require.Equal(t, m, stored)
	}
	require.Nil(t, receive(t, s, "cp-1", idle, at.Add(idle-time.Microsecond), "high", "low"), "pending, not idle long enough")
	require.Nil(t, receive(t, s, "cp-1", 0, at.Add(time.Hour), "high", "low"), "no min-idle: pending messages stay")
	require.Nil(t, receive(t, s, "cp-1", idle, at.Add(time.Hour)), "no streams")

	// A consumer that died: its messages go to another after min-idle.
	require.NoError(t, s.AckJobMessage(ctx, "high", high1.MessageID))
	require.NoError(t, s.AckJobMessage(ctx, "high", high1.MessageID), "a second ack is no error")
	_, err = s.GetJobMessage(ctx, "high", high1.MessageID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	again := receive(t, s, "cp-2", idle, at.Add(idle), "low", "high")
	require.NotNil(t, again)
	require.Equal(t, low1.MessageID, again.MessageID)
	require.Equal(t, "cp-2", again.Consumer)
	require.Equal(t, 2, again.Deliveries)

	// A new message comes after the redeliveries of its stream in id order.
	low3 := enqueue("low")
	require.Greater(t, low3.MessageID, low2.MessageID)
	for _, id := range []string{low2.MessageID, low3.MessageID} {
		m := receive(t, s, "cp-2", idle, at.Add(idle), "low")
		require.Equal(t, id, m.MessageID)
	}

	// Ids given by the caller are kept, once.
	named := message("high")
	named.MessageID = "1763912345123-0"
	m, err := s.EnqueueJobMessage(ctx, named)
	require.NoError(t, err)
	require.Equal(t, "1763912345123-0", m.MessageID)
	_, err = s.EnqueueJobMessage(ctx, named)
	require.ErrorIs(t, err, domain.ErrAlreadyExists)

	bad := message("high")
	bad.JobID = "job-1"
	_, err = s.EnqueueJobMessage(ctx, bad)
	requireViolation(t, err, "/job_id")
	_, err = s.ReceiveJobMessage(ctx, store.ReceiveJobMessageParams{Streams: []string{"high"}, Consumer: "cp 3", Now: at})
	requireViolation(t, err, "/consumer")
	got, err = s.GetJobMessage(ctx, "high", named.MessageID)
	require.NoError(t, err)
	require.Nil(t, got.DeliveredAt, "a refused receive delivers nothing")
}

func testMessageRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	const messages, receivers = 60, 6
	for i := range messages {
		_, err := s.EnqueueJobMessage(ctx, message([]string{"a", "b"}[i%2]))
		require.NoError(t, err)
	}
	var (
		mu   sync.Mutex
		got  []string
		errs = make([]error, receivers)
		wg   sync.WaitGroup
	)
	for r := range receivers {
		wg.Go(func() {
			for {
				m, err := s.ReceiveJobMessage(ctx, store.ReceiveJobMessageParams{Streams: []string{"a", "b"},
					Consumer: fmt.Sprintf("cp-%d", r), MinIdle: time.Hour, Now: T0})
				if err != nil || m == nil {
					errs[r] = err
					return
				}
				mu.Lock()
				got = append(got, m.Stream+"/"+m.MessageID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, got, messages)
	slices.Sort(got)
	require.Len(t, slices.Compact(got), messages, "no message went to two receivers")
}

// TokenHash is the hex SHA-256 of a token, as stored.
func TokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

func testWorkerTokens(t *testing.T, s store.Store) {
	ctx := context.Background()
	first := &domain.WorkerToken{WorkerID: "builder-1", TokenHash: TokenHash("one"), CreatedAt: T0}
	require.NoError(t, s.CreateWorkerToken(ctx, first))
	got, err := s.GetWorkerTokenByHash(ctx, TokenHash("one"))
	require.NoError(t, err)
	require.Equal(t, first, got)
	_, err = s.GetWorkerTokenByHash(ctx, TokenHash("two"))
	require.ErrorIs(t, err, domain.ErrNotFound)

	err = s.CreateWorkerToken(ctx, &domain.WorkerToken{WorkerID: "builder-1", TokenHash: TokenHash("two"), CreatedAt: T0})
	require.ErrorIs(t, err, domain.ErrAlreadyExists, "one live token per worker")
	err = s.CreateWorkerToken(ctx, &domain.WorkerToken{WorkerID: "builder-2", TokenHash: TokenHash("one"), CreatedAt: T0})
	require.ErrorIs(t, err, domain.ErrAlreadyExists, "a hash names one token")
	requireViolation(t, s.CreateWorkerToken(ctx, &domain.WorkerToken{WorkerID: "builder-2", TokenHash: "one"}), "/token_hash")
	requireViolation(t, s.CreateWorkerToken(ctx, &domain.WorkerToken{WorkerID: "builder 2", TokenHash: TokenHash("x")}), "/worker_id")

	require.NoError(t, s.RevokeWorkerToken(ctx, "builder-1", T0.Add(time.Hour)))
	_, err = s.GetWorkerTokenByHash(ctx, TokenHash("one"))
	require.ErrorIs(t, err, domain.ErrNotFound, "a revoked token authenticates nobody")
	require.ErrorIs(t, s.RevokeWorkerToken(ctx, "builder-1", T0), domain.ErrNotFound, "nothing live to revoke")
	second := &domain.WorkerToken{WorkerID: "builder-1", TokenHash: TokenHash("two"), CreatedAt: T0.Add(2 * time.Hour)}
	require.NoError(t, s.CreateWorkerToken(ctx, second), "a new token after the revocation")

	all, err := s.ListWorkerTokens(ctx)
	require.NoError(t, err)
	revoked := T0.Add(time.Hour)
	require.Equal(t, []*domain.WorkerToken{
		{WorkerID: "builder-1", TokenHash: TokenHash("one"), CreatedAt: T0, RevokedAt: &revoked}, second}, all)
}
