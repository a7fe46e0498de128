package retention_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
)

// putTranscript stores a transcript for w.
func (tb *testBundle) putTranscript(t *testing.T, w *domain.WorkOrder) {
	t.Helper()
	ref, err := domain.NewTranscriptRef("what "+w.WorkOrderID+" said\n", 1<<20)
	require.NoError(t, err)
	_, err = tb.st.PutTranscript(context.Background(), &domain.Transcript{WorkOrderID: w.WorkOrderID, Gzip: ref.Gzip,
		Bytes: ref.Bytes, OriginalBytes: ref.OriginalBytes, CreatedAt: w.CreatedAt})
	require.NoError(t, err)
}

func (tb *testBundle) hasTranscript(t *testing.T, workOrderID string) bool {
	t.Helper()
	_, err := tb.st.GetTranscript(context.Background(), workOrderID)
	if err != nil {
		require.ErrorIs(t, err, domain.ErrNotFound)
		return false
	}
	return true
}

// Transcripts go by the workspaces' rule of time: a done or superseded
// workorder's once patch.retention has passed; the newest workorder of an
// open objective keeps its own. A dry pass only lists them.
func TestRunOnce_PrunesTranscriptsWithTheWorkspaceRetention(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := context.Background()
	doneAt := t0.Add(time.Hour)
	old := tb.done(t, "old", true, doneAt)
	recent := tb.done(t, "recent", true, t0.Add(3*24*time.Hour))
	tb.objective(t, "retried")
	first := tb.attempt(t, "retried", 1, t0, greetPatch("first"))
	tb.gated(t, first, domain.GateFail, true, t0.Add(time.Minute))
	second := tb.attempt(t, "retried", 2, t0.Add(time.Hour), greetPatch("second"))
	for _, w := range []*domain.WorkOrder{old, recent, first, second} {
		tb.putTranscript(t, w)
	}
	tb.now = doneAt.Add(week + time.Minute)

	tb.pr.DryRun = true
	rep, err := tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{old.WorkOrderID, first.WorkOrderID}, rep.TranscriptsPruned)
	require.True(t, tb.hasTranscript(t, old.WorkOrderID), "a dry pass deletes nothing")

	tb.pr.DryRun = false
	rep, err = tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Errors)
	require.ElementsMatch(t, []string{old.WorkOrderID, first.WorkOrderID}, rep.TranscriptsPruned)
	require.False(t, tb.hasTranscript(t, old.WorkOrderID), "done a retention ago")
	require.False(t, tb.hasTranscript(t, first.WorkOrderID), "superseded a retention ago")
	require.True(t, tb.hasTranscript(t, recent.WorkOrderID), "done, but not a retention ago")
	require.True(t, tb.hasTranscript(t, second.WorkOrderID), "the newest workorder of an open objective")

	rep, err = tb.pr.RunOnce(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.TranscriptsPruned, "a second pass finds nothing more")
}
