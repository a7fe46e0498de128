package cli

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store/sqlite"
	"github.com/azolla/azolla/internal/store/storetest"
)

// loggedStore is a migrated data dir holding objective obj-log with two
// rounds, the first with a transcript (holding a terminal escape) and the
// second without.
func loggedStore(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"AZOLLA_DATA_DIR": dir}
	res := azolla(t, env, "migrate")
	require.Equal(t, 0, res.code, res.stderr)
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "azolla.db"))
	require.NoError(t, err)
	defer s.Close()

	first := storetest.Scheduled(t, s, "obj-log")
	_, _, err = s.CreateWorkOrder(ctx, first)
	require.NoError(t, err)
	ref, err := domain.NewTranscriptRef("==== stdout ====\nfixed it \x1b[31mred\x1b[0m\n", 1<<20)
	require.NoError(t, err)
	_, _, err = s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: first.WorkOrderID, Title: "Fix", Notes: "n",
		Metadata: domain.BundleMetadata{BranchName: first.BranchName, Transcript: ref}, RunnerStatus: domain.RunnerOK})
	require.NoError(t, err)

	at := storetest.T0.Add(time.Hour)
	ev, _, err := s.EmitEvent(ctx, storetest.Event("ev-obj-log-2", "obj-log", 2, at))
	require.NoError(t, err)
	second := *first
	second.WorkOrderID, second.EventID, second.CreatedAt = "wo-obj-log-2", ev.EventID, at
	_, _, err = s.CreateWorkOrder(ctx, &second)
	require.NoError(t, err)
	return env
}

func TestObjectiveLog_PrintsARoundsTranscript(t *testing.T) {
	t.Parallel()
	env := loggedStore(t)

	res := azolla(t, env, "objective", "log", "obj-log", "--round", "1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "round 1 of 2, workorder wo-obj-log, ")
	require.Contains(t, res.stdout, "==== stdout ====\nfixed it ")
	require.NotContains(t, res.stdout, "\x1b", "an agent's output cannot drive the terminal")

	latest := azolla(t, env, "objective", "log", "obj-log")
	require.Equal(t, exitNotFound, latest.code, latest.stdout)
	require.Contains(t, latest.stderr, "round 2 of objective obj-log (workorder wo-obj-log-2) has no transcript")
}

func TestObjectiveLog_UnknownObjectiveOrRoundIsAClearError(t *testing.T) {
	t.Parallel()
	env := loggedStore(t)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown objective", []string{"nope"}, exitNotFound, "nope"},
		{"round past the last", []string{"obj-log", "--round", "3"}, exitNotFound,
			"objective obj-log has 2 round(s); round 3 is not one"},
		{"round zero", []string{"obj-log", "--round", "0"}, exitUsage, "--round must be 1 or more, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := azolla(t, env, append([]string{"objective", "log"}, tt.args...)...)
			require.Equal(t, tt.code, res.code, res.stdout+res.stderr)
			require.Contains(t, res.stderr, tt.want)
		})
	}
}
