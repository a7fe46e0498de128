package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

func exerciseTranscripts(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("Transcript_OnePerWorkOrderReplacedByARetry", func(t *testing.T) { testTranscriptPut(t, open(t)) })
	t.Run("Transcript_RefusedWithoutWorkOrderOrText", func(t *testing.T) { testTranscriptInvalid(t, open(t)) })
	t.Run("Transcript_ListPagesWithoutTextAndDeletes", func(t *testing.T) { testTranscriptList(t, open(t)) })
	t.Run("Transcript_TravelsWithItsBundle", func(t *testing.T) { testTranscriptWithBundle(t, open(t)) })
	t.Run("Transcript_WithItsBundleInATransaction", func(t *testing.T) { testTranscriptBundleInTx(t, open(t)) })
}

// createdWorkOrder stores a scheduled workorder of a new objective.
func createdWorkOrder(t *testing.T, s store.Store, objectiveID string, at time.Time) *domain.WorkOrder {
	t.Helper()
	wo := ScheduledObjective(t, s, Objective(objectiveID), at)
	_, _, err := s.CreateWorkOrder(context.Background(), wo)
	require.NoError(t, err)
	return wo
}

// transcript is a stored transcript of text for workOrderID.
func transcript(t *testing.T, workOrderID, text string, at time.Time) *domain.Transcript {
	t.Helper()
	ref, err := domain.NewTranscriptRef(text, 1<<20)
	require.NoError(t, err)
	return &domain.Transcript{WorkOrderID: workOrderID, Gzip: ref.Gzip, Bytes: ref.Bytes, OriginalBytes: ref.OriginalBytes,
		CreatedAt: at}
}

func transcriptText(t *testing.T, s store.Querier, workOrderID string) string {
	t.Helper()
	got, err := s.GetTranscript(context.Background(), workOrderID)
	require.NoError(t, err)
	text, err := got.Text()
	require.NoError(t, err)
	return text
}

func testTranscriptPut(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := createdWorkOrder(t, s, "obj-1", T0)
	_, err := s.GetTranscript(ctx, wo.WorkOrderID)
	require.ErrorIs(t, err, domain.ErrNotFound)

	first, err := s.PutTranscript(ctx, transcript(t, wo.WorkOrderID, "first run\n", T0))
	require.NoError(t, err)
	require.Equal(t, int64(len("first run\n")), first.Bytes)
	require.Equal(t, T0, first.CreatedAt)
	require.Equal(t, "first run\n", transcriptText(t, s, wo.WorkOrderID))

	_, err = s.PutTranscript(ctx, transcript(t, wo.WorkOrderID, "the retry's run\n", T0.Add(time.Minute)))
	require.NoError(t, err)
	require.Equal(t, "the retry's run\n", transcriptText(t, s, wo.WorkOrderID), "a retry replaces")
	all, err := s.ListTranscripts(ctx, store.PageParams{})
	require.NoError(t, err)
	require.Len(t, all, 1, "never a second row")
}

func testTranscriptInvalid(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := createdWorkOrder(t, s, "obj-1", T0)
	_, err := s.PutTranscript(ctx, &domain.Transcript{WorkOrderID: wo.WorkOrderID})
	require.ErrorContains(t, err, "no text")
	_, err = s.PutTranscript(ctx, transcript(t, "", "text", T0))
	require.ErrorContains(t, err, "work_order_id is required")
	_, err = s.PutTranscript(ctx, transcript(t, "wo-unknown", "text", T0))
	require.Error(t, err, "a transcript belongs to a stored workorder")
	all, err := s.ListTranscripts(ctx, store.PageParams{})
	require.NoError(t, err)
	require.Empty(t, all)
}

func testTranscriptList(t *testing.T, s store.Store) {
	ctx := context.Background()
	var ids []string
	for i, id := range []string{"obj-a", "obj-b", "obj-c"} {
		wo := createdWorkOrder(t, s, id, T0)
		_, err := s.PutTranscript(ctx, transcript(t, wo.WorkOrderID, strings.Repeat("x", 10*(i+1)), T0.Add(time.Duration(i)*time.Second)))
		require.NoError(t, err)
		ids = append(ids, wo.WorkOrderID)
	}
	page, err := s.ListTranscripts(ctx, store.PageParams{Limit: 2})
	require.NoError(t, err)
	require.Len(t, page, 2)
	require.Equal(t, []string{ids[0], ids[1]}, []string{page[0].WorkOrderID, page[1].WorkOrderID})
	require.Nil(t, page[0].Gzip, "a listing reads no text")
	require.Equal(t, int64(20), page[1].Bytes)
	rest, err := s.ListTranscripts(ctx, store.PageParams{After: domain.Cursor{CreatedAt: page[1].CreatedAt, ID: page[1].WorkOrderID}})
	require.NoError(t, err)
	require.Len(t, rest, 1)
	require.Equal(t, ids[2], rest[0].WorkOrderID)

	deleted, err := s.DeleteTranscript(ctx, ids[1])
	require.NoError(t, err)
	require.True(t, deleted)
	deleted, err = s.DeleteTranscript(ctx, ids[1])
	require.NoError(t, err)
	require.False(t, deleted, "deleting twice deletes nothing")
	_, err = s.GetTranscript(ctx, ids[1])
	require.ErrorIs(t, err, domain.ErrNotFound)
}

// bundleWithTranscript is a valid bundle of wo carrying text as its
// transcript.
func bundleWithTranscript(t *testing.T, wo *domain.WorkOrder, text string) *domain.OutputBundle {
	t.Helper()
	ref, err := domain.NewTranscriptRef(text, 1<<20)
	require.NoError(t, err)
	return &domain.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Fix", Content: "", Notes: "no patch",
		Metadata: domain.BundleMetadata{BranchName: wo.BranchName, Transcript: ref}, RunnerStatus: domain.RunnerOK, CreatedAt: T0}
}

// A bundle's transcript goes to its table with it; the stored bundle keeps
// the reference alone; a second bundle of the workorder (a retried run)
// changes neither.
func testTranscriptWithBundle(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := createdWorkOrder(t, s, "obj-1", T0)
	b := bundleWithTranscript(t, wo, "what the first run said\n")
	stored, created, err := s.CreateOutputBundle(ctx, b)
	require.NoError(t, err)
	require.True(t, created)
	require.NotNil(t, stored.Metadata.Transcript)
	require.Nil(t, stored.Metadata.Transcript.Gzip, "the stored bundle holds the reference alone")
	require.Equal(t, int64(len("what the first run said\n")), stored.Metadata.Transcript.Bytes)
	require.NotNil(t, b.Metadata.Transcript.Gzip, "the caller's bundle is left as it was")
	require.Equal(t, "what the first run said\n", transcriptText(t, s, wo.WorkOrderID))

	got, created, err := s.CreateOutputBundle(ctx, bundleWithTranscript(t, wo, "a retry's run\n"))
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, stored, got)
	require.Equal(t, "what the first run said\n", transcriptText(t, s, wo.WorkOrderID), "the bundle's transcript is kept")
}

// Inside a transaction (the runner's fenced write), bundle and transcript
// commit together, and a rollback leaves neither.
func testTranscriptBundleInTx(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := createdWorkOrder(t, s, "obj-1", T0)
	rollback := errors.New("rolled back")
	err := s.InTx(ctx, func(q store.Querier) error {
		_, created, err := q.CreateOutputBundle(ctx, bundleWithTranscript(t, wo, "said\n"))
		require.NoError(t, err)
		require.True(t, created)
		return rollback
	})
	require.ErrorIs(t, err, rollback)
	_, err = s.GetTranscript(ctx, wo.WorkOrderID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	_, err = s.GetOutputBundle(ctx, wo.WorkOrderID)
	require.ErrorIs(t, err, domain.ErrNotFound)

	require.NoError(t, s.InTx(ctx, func(q store.Querier) error {
		_, _, err := q.CreateOutputBundle(ctx, bundleWithTranscript(t, wo, "said\n"))
		return err
	}))
	require.Equal(t, "said\n", transcriptText(t, s, wo.WorkOrderID))
}
