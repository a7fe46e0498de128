package controlplane_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/remote/controlplane/dbqueue"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream"
	"github.com/azolla/azolla/internal/remote/controlplane/redisstream/redistest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// transports opens each real Transport over st.
var transports = []struct {
	name string
	open func(t *testing.T, st store.Store) (tr controlplane.Transport, lose func(stream, messageID string))
}{
	{"dbqueue", func(t *testing.T, st store.Store) (controlplane.Transport, func(string, string)) {
		tr, err := dbqueue.New(st, dbqueue.Options{LeaseTTL: time.Minute, PollInterval: 20 * time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { _ = tr.Close() })
		return tr, func(stream, messageID string) {
			require.NoError(t, st.AckJobMessage(context.Background(), stream, messageID))
		}
	}},
	{"redis", func(t *testing.T, _ store.Store) (controlplane.Transport, func(string, string)) {
		url := redistest.URL(t)
		tr, err := redisstream.New(context.Background(), redisstream.Options{URL: url,
			Prefix: redistest.Prefix(t, url), LeaseTTL: time.Minute})
		require.NoError(t, err)
		t.Cleanup(func() { _ = tr.Close() })
		// Losing the stream key is what a FLUSHALL or a restart without
		// persistence does to this test's messages.
		return tr, func(stream, _ string) {
			require.NoError(t, tr.Client().Del(context.Background(), tr.Key(stream)).Err())
		}
	}},
}

// TestTransports_LongPollSettleAndLostMessages runs the worker path on each
// real transport and store: a claim long-polling before the job exists
// gets it, completion acknowledges and deletes the message, and a job
// whose message the transport lost is written again by the reaper.
func TestTransports_LongPollSettleAndLostMessages(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends() {
		for _, tp := range transports {
			t.Run(b.Name+"/"+tp.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				st := b.Open(t)
				tr, lose := tp.open(t, st)
				svc := controlplane.New(st, tr, nil, nil, controlplane.Config{InstanceID: "cp-" + tp.name})

				claimed := make(chan controlplane.ClaimResponse, 1)
				go func() {
					c, err := svc.Claim(ctx, controlplane.ClaimRequest{WorkerID: "w1", Streams: []string{"command", "patch"},
						MaxWaitMS: 10_000})
					if err != nil {
						t.Errorf("claim: %v", err)
					}
					claimed <- c
				}()
				j, err := svc.Enqueue(ctx, controlplane.EnqueueParams{JobType: "PATCH_DIAZOTROPH", Stream: "patch",
					Payload: json.RawMessage(`{"n":1}`), WorkOrderID: "wo-1"})
				require.NoError(t, err)
				c := <-claimed
				require.True(t, c.Claimed, "the long-poll gets the job enqueued while it waits")
				require.Equal(t, j.JobID, c.JobID)

				resp, err := svc.Complete(ctx, controlplane.CompleteRequest{WorkerID: "w1", JobID: c.JobID,
					AttemptID: c.AttemptID, LeaseToken: c.LeaseToken, Stream: c.Stream.Name,
					MessageID: c.Stream.MessageID, Result: json.RawMessage(`{"ok":true}`)})
				require.NoError(t, err)
				require.True(t, resp.Ack)
				state, err := tr.State(ctx, c.Stream.Name, c.Stream.MessageID)
				require.NoError(t, err)
				require.False(t, state.Exists, "acknowledged and deleted after the commit")

				lost, err := svc.Enqueue(ctx, controlplane.EnqueueParams{JobType: "PATCH_DIAZOTROPH", Stream: "patch",
					Payload: json.RawMessage(`{"n":2}`), WorkOrderID: "wo-2"})
				require.NoError(t, err)
				require.NotEmpty(t, lost.MessageID)
				lose("patch", lost.MessageID)
				rc, err := controlplane.NewReaper(svc).RunOnce(ctx)
				require.NoError(t, err)
				require.Equal(t, 1, rc.Republished)
				again, err := svc.Claim(ctx, controlplane.ClaimRequest{WorkerID: "w1", Streams: []string{"patch"}})
				require.NoError(t, err)
				require.True(t, again.Claimed)
				require.Equal(t, lost.JobID, again.JobID)
			})
		}
	}
}
